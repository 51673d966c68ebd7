// A throwaway PostgreSQL 15 server for tests: initdb into a temp dir, pg_ctl start on 127.0.0.1 at a
// free port with trust auth, one fresh database per createDatabase() call, everything stopped and
// removed at the end. Debian's postgresql-15 package provides the binaries (.ci/run installs it).
// Measured on 2 cores: initdb 0.7 s (once: later servers copy its result), start 0.15 s, a database 0.07 s.
//
// PostgreSQL refuses to run as root, so as root (CI, these containers) every server command runs
// as the `postgres` system user through runuser, in dirs that user owns; as anyone else, as oneself.
// The helpers below (asPostgres, freePort, watchdog) are shared with test/support/cluster/.
import { execFileSync, spawn } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import pg from 'pg'
import { ROOT } from './harness.ts'

export const PG_BIN = process.env.BULWARK_PG_BIN || '/usr/lib/postgresql/15/bin'
const root = process.getuid?.() === 0

/** The uid and gid the servers run as: `postgres` as root, else this process's own. */
export function serverUser(): { uid: number; gid: number } {
  if (!root) return { uid: process.getuid!(), gid: process.getgid!() }
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

/** argv that runs `command` as the server user (runuser as root: PostgreSQL and Patroni refuse root). */
export function asPostgres(command: string, args: string[]): [string, string[]] {
  return root ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]
}

/** A temp dir the server user owns (mode 0700: initdb and Patroni insist on it for data dirs). */
export function serverTempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${label}-`))
  const { uid, gid } = serverUser()
  chownSync(dir, uid, gid)
  return dir
}

const handedOut = new Set<number>()

/**
 * A port free on `host` now, from 20000-31999: below the kernel's ephemeral range (32768 and up,
 * /proc/sys/net/ipv4/ip_local_port_range), which every server on port 0 and every outgoing
 * connection of the parallel tests draws from. Only another test picking the same one at random
 * can take it before the server binds it (startPostgres retries then). Never the same twice here.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 12000)
    if (handedOut.has(port) || !(await canBind(host, port))) continue
    handedOut.add(port)
    return port
  }
  throw new Error(`no free port on ${host}`)
}

function canBind(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.unref()
    server.on('error', () => resolve(false))
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)))
  })
}

/**
 * A detached shell that runs `cleanup` once this process is gone, however it ended: pg_ctl, Patroni
 * and etcd put their servers in sessions of their own, so a SIGKILL of the test (test/run.mjs kills
 * a file's process group on timeout) would otherwise leave them running. It checks once a second.
 */
export function watchdog(cleanup: string): void {
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${cleanup}`
  spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref()
}

/** Installed? A clear message instead of a spawn error deep in a test. */
export function requireBinaries(paths: string[]): void {
  const missing = paths.filter((p) => !existsSync(p))
  if (missing.length) throw new Error(`missing ${missing.join(', ')}: install Debian's packages as .ci/run does`)
}

/** Shell-quoted, for the watchdog's script. */
export const sh = (s: string) => `'${s.replaceAll("'", "'\\''")}'`

export interface PostgresServer {
  host: string
  port: number
  dir: string
  /** The URL of database `name` (default: the `postgres` maintenance database). */
  url(name?: string): string
  /** Creates a new, empty database and returns its URL; without a name, a fresh one (test_1, test_2, ...). */
  createDatabase(name?: string): Promise<string>
  /** The server's log so far (for failure messages). */
  log(): string
  stop(): Promise<void>
}

let counter = 0

// -N: no fsync of the new files (a test server lives minutes); trust: no passwords on loopback.
const INITDB_FLAGS = ['-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '-N']

/**
 * A fresh data dir in `data`: a copy of one initdb made once per PostgreSQL version and flags,
 * kept in node_modules/.cache. initdb is mostly CPU (its bootstrap runs every catalog script) and
 * takes 0.7 s idle, 2-3 s while the suite runs beside it; copying its 39 MB takes a tenth of that.
 */
function initData(data: string, run: (command: string, args: string[]) => string): void {
  const version = execFileSync(join(PG_BIN, 'postgres'), ['--version'], { encoding: 'utf8' })
  const key = `${version} ${INITDB_FLAGS.join(' ')}`.replace(/[^\w.]+/g, '-')
  const template = join(ROOT, 'node_modules', '.cache', 'bulwark-pg-template', key)
  if (existsSync(join(template, 'PG_VERSION'))) {
    // -a keeps the owner (postgres) and mode (0700) PostgreSQL insists on.
    execFileSync('cp', ['-a', template, data])
    return
  }
  run('initdb', ['-D', data, ...INITDB_FLAGS])
  try {
    // Published by a rename, so parallel test files never copy a half-written one.
    mkdirSync(dirname(template), { recursive: true })
    const partial = `${template}.${process.pid}`
    execFileSync('cp', ['-a', data, partial])
    try {
      renameSync(partial, template)
    } catch {
      rmSync(partial, { recursive: true, force: true }) // another file published it first
    }
  } catch {
    // The cache is only a speed-up.
  }
}

/** Starts a new server (about 0.3 s with the template, 0.9 s without). Stopped by stop(), else when this process exits. */
export async function startPostgres(options: { settings?: Record<string, string> } = {}): Promise<PostgresServer> {
  requireBinaries([join(PG_BIN, 'initdb'), join(PG_BIN, 'pg_ctl')])
  const host = '127.0.0.1'
  const dir = serverTempDir('bulwark-pg')
  const data = join(dir, 'data')
  const logFile = join(dir, 'postgres.log')
  const run = (command: string, args: string[]) => {
    const [file, argv] = asPostgres(join(PG_BIN, command), args)
    return execFileSync(file, argv, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  }
  const pgCtlStop = `${asPostgres(join(PG_BIN, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop']).flat().map(sh).join(' ')} >/dev/null 2>&1`
  let stopped = false
  const stopNow = () => {
    if (stopped) return
    stopped = true
    try {
      if (existsSync(join(data, 'postmaster.pid'))) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
    } catch {
      // Already gone: nothing to stop.
    }
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', stopNow)
  watchdog(`${pgCtlStop}; rm -rf ${sh(dir)}`)

  try {
    initData(data, run)
  } catch (error: any) {
    stopNow()
    throw new Error(`initdb failed: ${error.stderr ?? error.message}`)
  }
  let port = 0
  for (let attempt = 1; ; attempt++) {
    port = await freePort(host)
    const settings: Record<string, string> = {
      port: String(port),
      listen_addresses: host,
      // Its socket in its own dir: /var/run/postgresql may not exist or belong to someone else.
      unix_socket_directories: dir,
      // Durability against a machine crash is not what a test server is for; speed is.
      fsync: 'off',
      full_page_writes: 'off',
      max_connections: '200',
      ...options.settings,
    }
    const flags = Object.entries(settings)
      .map(([k, v]) => `-c ${k}=${v}`)
      .join(' ')
    try {
      run('pg_ctl', ['-D', data, '-l', logFile, '-w', '-t', '30', '-o', flags, 'start'])
      break
    } catch (error: any) {
      // A port taken between freePort() and the bind: try another (the log says "could not bind").
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''
      if (attempt < 3 && /could not (bind|create listen socket)/i.test(log)) continue
      stopNow()
      throw new Error(`PostgreSQL did not start: ${error.stderr ?? error.message}\n${log}`)
    }
  }

  const url = (name = 'postgres') => `postgres://postgres@${host}:${port}/${encodeURIComponent(name)}`
  return {
    host,
    port,
    dir,
    url,
    async createDatabase(name = `test_${++counter}`) {
      const client = new pg.Client({ connectionString: url() })
      await client.connect()
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`)
      } finally {
        await client.end()
      }
      return url(name)
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    async stop() {
      process.removeListener('exit', stopNow)
      stopNow()
    },
  }
}

let shared: Promise<PostgresServer> | undefined

/** One server per test process, started at the first call: each test takes databases from it. */
export function sharedPostgres(): Promise<PostgresServer> {
  shared ??= startPostgres()
  return shared
}
