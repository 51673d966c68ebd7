// One harness for every test: temporary data dirs, the real CLI (source through tsx, or the built
// executable when BULWARK_BIN is set), a real server on 127.0.0.1, and a small HTTP client.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { appendFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export function tempDir(label = 'bulwark'): string {
  return mkdtempSync(join(tmpdir(), `${label}-`))
}

/** The engine this test process runs on: test/run.mjs's PostgreSQL pass sets BULWARK_TEST_POSTGRES. */
export const ENGINE: 'sqlite' | 'postgres' = process.env.BULWARK_TEST_POSTGRES ? 'postgres' : 'sqlite'

const databases = new Map<string, Promise<string>>()
let created = 0

/**
 * The PostgreSQL database of a data dir on the PostgreSQL pass (made at the first call, empty), or
 * undefined on SQLite, where the data dir holds the database. Every server and command the harness
 * starts on that data dir gets it as BULWARK_DATABASE_URL.
 *
 * @example
 * const config = commandConfig({ 'data-dir': dir, database: await databaseUrlFor(dir) })
 */
export function databaseUrlFor(dataDir: string): Promise<string | undefined> {
  const admin = process.env.BULWARK_TEST_POSTGRES
  if (!admin) return Promise.resolve(undefined)
  const key = resolve(dataDir)
  let url = databases.get(key)
  if (!url) {
    url = (async () => {
      // The pid alone is not unique: a run starts hundreds of test processes, and pids come round.
      const name = `t_${process.pid}_${++created}_${randomBytes(4).toString('hex')}`
      const { default: pg } = await import('pg')
      const client = new pg.Client({ connectionString: admin })
      await client.connect()
      try {
        await client.query(`CREATE DATABASE ${name}`)
      } finally {
        await client.end()
      }
      const target = new URL(admin)
      target.pathname = `/${name}`
      return target.toString()
    })()
    databases.set(key, url)
  }
  return url
}

/** The environment of a process on `dataDir`: its database on the PostgreSQL pass. */
async function engineEnv(dataDir: string | undefined): Promise<Record<string, string>> {
  const url = dataDir === undefined ? undefined : await databaseUrlFor(dataDir)
  return url ? { BULWARK_DATABASE_URL: url } : {}
}

/** The --data-dir of a command line, or the harness option. */
function dataDirOf(args: string[], option: string | undefined): string | undefined {
  const at = args.indexOf('--data-dir')
  return at === -1 ? (option ?? process.env.BULWARK_DATA_DIR) : args[at + 1]
}

/**
 * The executable when BULWARK_BIN names one (test/run.mjs sets it), else the program from source.
 * A command given a preload (NODE_OPTIONS --import, the shifted clock) runs from source: the
 * executable takes no preloads.
 */
function command(args: string[], env?: Record<string, string>): [string, string[]] {
  if (process.env.BULWARK_BIN && !env?.NODE_OPTIONS?.includes('--import')) return [process.env.BULWARK_BIN, args]
  return [process.execPath, ['--import', 'tsx', join(ROOT, 'src/main.ts'), ...args]]
}

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

export async function cli(args: string[], options: { dataDir?: string; input?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  const full = options.dataDir ? [...args, '--data-dir', options.dataDir] : args
  const [file, argv] = command(full, options.env)
  const env = { ...process.env, ...(await engineEnv(dataDirOf(args, options.dataDir))), ...options.env }
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
    // A command that reads no stdin may exit before it is written: EPIPE then, which is no failure of the test.
    child.stdin.on('error', () => {})
    child.stdin.end(options.input ?? '')
  })
}

export interface Server {
  url: string
  dataDir: string
  process: ChildProcess
  output: () => string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

export async function startServer(options: { dataDir?: string; args?: string[]; env?: Record<string, string> } = {}): Promise<Server> {
  const dataDir = options.dataDir ?? tempDir()
  const [file, argv] = command(['serve', '--port', '0', '--data-dir', dataDir, ...(options.args ?? [])], options.env)
  const child = spawn(file, argv, { cwd: ROOT, env: { ...process.env, ...(await engineEnv(dataDir)), ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  // BULWARK_TEST_SERVER_LOG=FILE: every server's output appended there too (to debug a run).
  const logFile = process.env.BULWARK_TEST_SERVER_LOG
  if (logFile) for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (d) => appendFileSync(logFile, d))
  child.stderr!.on('data', (d) => (output += d))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${output}`)), 20_000)
    child.stdout!.on('data', (d) => {
      output += d
      const match = /http:\/\/127\.0\.0\.1:\d+/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[0])
      }
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited ${code}: ${output}`))
    })
  })
  child.removeAllListeners('exit')
  return {
    url,
    dataDir,
    process: child,
    output: () => output,
    stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode)
      return new Promise((resolve) => {
        child.once('exit', (code) => resolve(code))
        child.kill(signal)
      })
    },
  }
}

export interface Res {
  status: number
  headers: Headers
  text: string
  json: any
}

export async function request(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
): Promise<Res> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  let body: string | undefined = options.raw
  if (options.body !== undefined) {
    body = JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const res = await fetch(base + path, { method, headers, body })
  const text = await res.text()
  let json: unknown
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

/** A client bound to one server. */
export function client(server: { url: string }) {
  return (method: string, path: string, options: Parameters<typeof request>[3] = {}) => request(server.url, method, path, options)
}

export interface TenantFixture {
  slug: string
  ownerEmail: string
  password: string
  jwt: string
  key(scopes: string[], extra?: Record<string, unknown>): Promise<string>
}

/** A tenant with an owner, made through the real CLI, and a session for it through the real API. */
export async function tenantFixture(server: Server, slug: string, plan: 'SIGNAL' | 'EXECUTE' = 'EXECUTE'): Promise<TenantFixture> {
  const created = await cli(['tenant', 'create', slug, '--plan', plan], { dataDir: server.dataDir })
  if (created.code !== 0) throw new Error(created.stderr)
  const ownerEmail = `owner@${slug}.test`
  const password = `pw-${slug}-correct-horse`
  const user = await cli(['user', 'create', ownerEmail, '--tenant', slug, '--role', 'owner', '--password-stdin'], { dataDir: server.dataDir, input: password })
  if (user.code !== 0) throw new Error(user.stderr)
  const jwt = await login(server, ownerEmail, password)
  return {
    slug,
    ownerEmail,
    password,
    jwt,
    async key(scopes, extra = {}) {
      const res = await request(server.url, 'POST', '/api/v1/auth/api-tokens', { token: jwt, body: { name: `key-${scopes.join('-')}`, scopes, ...extra } })
      if (res.status !== 200) throw new Error(res.text)
      return res.json.token as string
    },
  }
}

export async function login(server: Server, email: string, password: string): Promise<string> {
  const res = await request(server.url, 'POST', '/api/v1/auth/login', { body: { email, password } })
  if (res.status !== 200) throw new Error(`login failed: ${res.text}`)
  return res.json.access_token as string
}
