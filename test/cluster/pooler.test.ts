// engines: own
// A pooler in front of PostgreSQL (SPEC 15): the leases are session advisory locks, so PgBouncer in
// transaction or statement mode breaks them and a node refuses to start behind it: exit 1 before
// listening or migrating, one line on stderr that names the cure and never the password. Behind
// PgBouncer in session mode nodes start, answer HEALTHY, and share the leases as on PostgreSQL itself.
// Debian's pgbouncer (1.18), as .ci/run installs it, run as the postgres user (it refuses root too).
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import pg from 'pg'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { client, ROOT, type Server, startServer, tempDir } from '../support/harness.ts'
import { asPostgres, freePort, type PostgresServer, requireBinaries, serverTempDir, sh, sharedPostgres, watchdog } from '../support/postgres.ts'
import { eventually } from '../signals/fixtures.ts'

const test = suite('cluster: a pooler in front of PostgreSQL')
const PGBOUNCER = '/usr/sbin/pgbouncer'
const PASSWORD = 'never-printed-7f3a'
let postgres: PostgresServer
const stops: (() => void)[] = []

/**
 * A PgBouncer in `mode` in front of the test's PostgreSQL; returns the URL of `database` through it,
 * with a password in it (trust: PgBouncer never asks for it, but Bulwark must not print it).
 */
async function pgbouncer(mode: 'session' | 'transaction' | 'statement', database: string): Promise<string> {
  requireBinaries([PGBOUNCER])
  const dir = serverTempDir('bulwark-pgbouncer')
  const port = await freePort()
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n')
  const ini = [
    '[databases]',
    `* = host=${postgres.host} port=${postgres.port}`,
    '[pgbouncer]',
    `listen_addr = 127.0.0.1`,
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'users.txt')}`,
    `pool_mode = ${mode}`,
    // Session mode holds a server connection per client: a node's pool and its leases, two nodes.
    'default_pool_size = 60',
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    `pidfile = ${join(dir, 'pgbouncer.pid')}`,
  ]
  writeFileSync(join(dir, 'pgbouncer.ini'), `${ini.join('\n')}\n`)
  const [file, args] = asPostgres(PGBOUNCER, [join(dir, 'pgbouncer.ini')])
  const child = spawn(file, args, { stdio: 'ignore' })
  stops.push(() => child.kill())
  watchdog(`kill $(cat ${sh(join(dir, 'pgbouncer.pid'))}) 2>/dev/null; rm -rf ${sh(dir)}`)
  await eventually(() => listening(port), `pgbouncer listening on ${port}`, 10_000)
  return `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/${database}`
}

function listening(port: number): Promise<true | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.end()
      resolve(true)
    })
    socket.once('error', () => resolve(undefined))
  })
}

/** `bulwark serve` (the harness's executable) run until it exits, or killed after 20 s: a node that should refuse. */
function serveUntilExit(databaseUrl: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const args = ['serve', '--port', '0', '--data-dir', tempDir('bulwark-node')]
  const [file, argv] = process.env.BULWARK_BIN ? [process.env.BULWARK_BIN, args] : [process.execPath, ['--import', 'tsx', join(ROOT, 'src/main.ts'), ...args]]
  const child = spawn(file, argv, { cwd: ROOT, env: { ...process.env, BULWARK_DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

test.before(async () => {
  postgres = await sharedPostgres()
  process.env.BULWARK_SECRETS_DIR = tempDir('bulwark-secrets')
})
test.after(() => {
  for (const stop of stops) stop()
})

for (const mode of ['transaction', 'statement'] as const) {
  test(`PgBouncer in ${mode} mode: the node exits 1 before listening or migrating, with one line that names the cure`, async () => {
    const database = `refused_${mode}`
    await postgres.createDatabase(database)
    const started = Date.now()
    const refused = await serveUntilExit(await pgbouncer(mode, database))
    assert.is(refused.code, 1, refused.stdout + refused.stderr)
    assert.is(refused.stdout, '', 'no banner: it never listened')
    assert.match(refused.stderr, /^error: [^\n]*pool_mode = session[^\n]*\n$/)
    assert.match(refused.stderr, /PgBouncer's pool_mode = transaction/)
    assert.match(refused.stderr, new RegExp(`the database ${database} at 127\\.0\\.0\\.1:\\d+ `))
    assert.not.match(refused.stderr, PASSWORD)
    assert.ok(Date.now() - started < 10_000, `refused after ${Date.now() - started} ms`)
    // Refused before the migrations' advisory lock, which such a pooler would leave on a connection someone else gets.
    const direct = new pg.Client({ connectionString: postgres.url(database) })
    await direct.connect()
    try {
      assert.is((await direct.query("SELECT to_regclass('schema_migrations') AS t")).rows[0].t, null)
    } finally {
      await direct.end()
    }
  })
}

test('PgBouncer in session mode: nodes start and answer HEALTHY; one holds each lease, the other stands by', async () => {
  await postgres.createDatabase('pooled_by_session')
  const url = await pgbouncer('session', 'pooled_by_session')
  const env = { BULWARK_DATABASE_URL: url }
  const nodes: Server[] = []
  try {
    nodes.push(await startServer({ env }))
    const health = await client(nodes[0])('GET', '/api/v1/health')
    assert.is(health.status, 200, health.text)
    assert.is(health.json.status, 'HEALTHY')
    assert.not.match(nodes[0].output(), PASSWORD)
    await eventually(async () => {
      const leases = (await client(nodes[0])('GET', '/api/v1/health')).json.leases
      return Object.values(leases).every((s) => s === 'held') ? true : undefined
    }, 'the first node holding every lease')
    nodes.push(await startServer({ env }))
    const second = await client(nodes[1])('GET', '/api/v1/health')
    assert.is(second.json.status, 'HEALTHY', second.text)
    const states = Object.values(second.json.leases)
    assert.ok(states.length > 0 && states.every((s) => s === 'standby'), JSON.stringify(second.json.leases))
  } finally {
    await Promise.all(nodes.map((n) => n.stop()))
  }
})

test.run()
