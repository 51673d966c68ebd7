// `bulwark store copy --to postgres://...` (SPEC 15): a data dir made by the real server (serve
// --demo: signals, trades, orders, equity; a second tenant and kill switches for incident chains)
// is copied into an empty PostgreSQL database; every table then holds as many rows on both sides,
// every chain recomputes (by a few lines of its own here) to the same head on both, a second copy
// into the now non-empty database is refused and writes nothing, a bad URL is a usage error, the
// password is never printed, and a server started on the copy shows what the data dir's did.
// engines: sqlite
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cli, client, login, request, startServer, tempDir, tenantFixture, type Server } from '../support/harness.ts'
import { GENESIS, incidentHash } from '../support/incident-oracle.ts'
import { sharedPostgres } from '../support/postgres.ts'

const test = suite('store copy: SQLite data dir -> PostgreSQL')
const PASSWORD = 'pw-Never-Printed-7x'
let dataDir: string
let url: string
let demoPassword: string
let before: { models: any; workspace: any; incidents: any; acmeIncidents: any; signals: any }

/** The URL with a password (trust auth on the test server ignores it; the command must not print it). */
function withPassword(plain: string): string {
  const u = new URL(plain)
  u.password = PASSWORD
  return u.toString()
}

async function eventually<T>(check: () => T | undefined, what: string, limitMs = 60_000): Promise<T> {
  const end = Date.now() + limitMs
  for (;;) {
    const value = check()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** What the API says of the data (same on the copy): tenants, models with their heads, incidents, signals. */
async function apiView(server: Server, acmePassword: string) {
  const api = client(server)
  const jwt = await login(server, 'owner@demo.localhost', demoPassword)
  const acme = await login(server, 'owner@acme.test', acmePassword)
  const ok = async (path: string, token?: string) => {
    const res = await api('GET', path, { token })
    assert.is(res.status, 200, `${path}: ${res.text}`)
    return res.json
  }
  return {
    models: await ok('/api/v1/public/models'),
    workspace: await ok('/api/v1/workspace', jwt),
    incidents: await ok('/api/v1/risk/incidents/export', jwt),
    acmeIncidents: await ok('/api/v1/risk/incidents/export', acme),
    signals: await ok('/api/v1/signals?limit=50', jwt),
  }
}

test.before(async () => {
  dataDir = tempDir('bulwark-copy')
  const server = await startServer({ dataDir, args: ['--demo', '--quiet'] })
  try {
    await eventually(() => (/Demo: +published/.test(server.output()) ? true : undefined), 'the demo publish')
    demoPassword = /password \(shown once\): (\S+)/.exec(server.output())![1]
    const acme = await tenantFixture(server, 'acme', 'EXECUTE')
    const demoJwt = await login(server, 'owner@demo.localhost', demoPassword)
    for (const token of [demoJwt, acme.jwt]) {
      const res = await request(server.url, 'POST', '/api/v1/risk/kill-switch', {
        token,
        body: { action: 'CANCEL_AND_PAUSE', pause: true, reason: 'copy test ✓' },
      })
      assert.is(res.status, 200, res.text)
      const resumed = await request(server.url, 'POST', '/api/v1/risk/kill-switch', { token, body: { action: 'RESUME', pause: false } })
      assert.is(resumed.status, 200, resumed.text)
    }
    assert.is((await cli(['kill-switch', '--all', '--actor', 'oncall@example.com'], { dataDir })).code, 0)
    before = await apiView(server, acme.password)
  } finally {
    await server.stop()
  }
  url = withPassword(await (await sharedPostgres()).createDatabase())
})

/** Rows per table of the data dir's SQLite file. */
function sqliteCounts(): Record<string, number> {
  const db = new Database(join(dataDir, 'bulwark.db'), { readonly: true })
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]
    return Object.fromEntries(tables.map((t) => [t.name, (db.prepare(`SELECT count(*) AS n FROM "${t.name}"`).get() as { n: number }).n]))
  } finally {
    db.close()
  }
}

async function withPg<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return await work(c)
  } finally {
    await c.end()
  }
}

async function postgresCounts(): Promise<Record<string, number>> {
  return withPg(async (c) => {
    const tables = (
      await c.query(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations' ORDER BY 1",
      )
    ).rows
    const out: Record<string, number> = {}
    for (const t of tables) out[t.name] = Number((await c.query(`SELECT count(*) AS n FROM "${t.name}"`)).rows[0].n)
    return out
  })
}

// The chains, recomputed from the rows alone (SPEC 6 and 11): per tenant, per model.
const signalCovered = (s: any) =>
  `{"action":${JSON.stringify(s.action)},"as_of":${JSON.stringify(s.as_of)},"created_at":${JSON.stringify(s.created_at)},"entry_price":${JSON.stringify(s.entry_price)},"id":${JSON.stringify(s.id)},` +
  `"model_hash":${JSON.stringify(s.model_hash)},"model_id":${JSON.stringify(s.model_id)},"model_version":${JSON.stringify(s.model_version)},"pair":${JSON.stringify(s.pair)}}`

function heads(incidents: any[], signals: any[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const i of incidents) {
    const key = `incidents ${i.tenant_id}`
    const prev = out[key] ?? GENESIS
    assert.is(i.prev_hash, prev, `${key} links`)
    out[key] = incidentHash(prev, i)
    assert.is(i.hash, out[key], `${key} ${i.id} recomputes`)
  }
  for (const s of signals) {
    const key = `signals ${s.model_id}`
    const prev = out[key] ?? GENESIS
    assert.is(s.prev_hash, prev, `${key} links`)
    out[key] = createHash('sha256')
      .update(`${prev}\n${signalCovered(s)}`)
      .digest('hex')
    assert.is(s.hash, out[key], `${key} ${s.id} recomputes`)
  }
  return out
}

const INCIDENTS = 'SELECT id, tenant_id, action, actor, status, timestamp, model_id, reason, prev_hash, hash FROM incidents ORDER BY tenant_id, seq'
const SIGNALS =
  'SELECT id, model_id, model_version, model_hash, pair, action, entry_price, as_of, created_at, prev_hash, hash FROM signals WHERE chain_seq IS NOT NULL ORDER BY model_id, chain_seq'

test('a bad URL or no --to is a usage error (exit 2), before anything is opened', async () => {
  for (const args of [['--to', 'mysql://u:pw@h/db'], ['--to', 'not a url'], ['--to', 'postgres:///db'], []]) {
    const res = await cli(['store', 'copy', ...args], { dataDir })
    assert.is(res.code, 2, `${args.join(' ')}: ${res.stdout}${res.stderr}`)
    assert.match(res.stderr, /^error: --to /)
  }
  const help = await cli(['store', 'copy', '--help'])
  assert.is(help.code, 0)
  assert.match(help.stdout, /Usage: bulwark store copy --to URL/)
})

test('the copy: exit 0, the same rows in every table, the same chain heads, no password printed', async () => {
  const res = await cli(['store', 'copy', '--to', url, '--data-dir', dataDir])
  assert.is(res.code, 0, res.stdout + res.stderr)
  const output = res.stdout + res.stderr
  assert.not.ok(output.includes(PASSWORD), 'the password is never printed')
  const { host, port } = new URL(url)
  assert.ok(output.includes(`${host}/`) || output.includes(`${host}:${port}/`) || output.includes(host), output)
  assert.match(res.stdout, /every chain recomputes on PostgreSQL to its head in SQLite/)

  const lite = sqliteCounts()
  const copy = await postgresCounts()
  assert.equal(copy, lite, 'rows per table')
  for (const table of ['tenants', 'signals', 'incidents', 'orders', 'trades', 'prices', 'realized_pnl', 'store_meta'])
    assert.ok(lite[table] > 0, `the data dir has ${table}`)
  // Each table's line says its count.
  for (const [table, n] of Object.entries(lite)) assert.match(res.stdout, new RegExp(`^  ${table}: ${n} rows?$`, 'm'))

  const db = new Database(join(dataDir, 'bulwark.db'), { readonly: true })
  const liteHeads = heads(db.prepare(INCIDENTS).all(), db.prepare(SIGNALS).all())
  const sameRows = {
    realized: db.prepare('SELECT tenant_id, pnl_usd FROM realized_pnl ORDER BY tenant_id').all(),
    seconds: db.prepare('SELECT tenant_id, second, n FROM order_seconds ORDER BY 1, 2').all(),
    seq: db.prepare('SELECT max(seq) AS n FROM orders').get() as { n: number },
  }
  db.close()
  const [pgHeads, pgRows] = await withPg(async (c) => [
    heads((await c.query(INCIDENTS)).rows, (await c.query(SIGNALS)).rows),
    {
      realized: (await c.query('SELECT tenant_id, pnl_usd FROM realized_pnl ORDER BY tenant_id')).rows,
      seconds: (await c.query('SELECT tenant_id, second, n::int AS n FROM order_seconds ORDER BY 1, 2')).rows,
      next: (await c.query("SELECT nextval(pg_get_serial_sequence('orders', 'seq'))::int AS n")).rows[0].n,
    },
  ])
  assert.equal(pgHeads, liteHeads, 'every chain ends at the same head')
  assert.ok(Object.keys(liteHeads).filter((k) => k.startsWith('incidents')).length >= 2, 'two incident chains')
  assert.ok(Object.keys(liteHeads).filter((k) => k.startsWith('signals')).length >= 3, 'three signal chains')
  for (const [name, head] of Object.entries(liteHeads)) assert.ok(res.stdout.includes(head), `${name}'s head printed`)
  assert.equal(pgRows.realized, sameRows.realized, 'the derived tables are copied, not counted twice by triggers')
  assert.equal(pgRows.seconds, sameRows.seconds)
  assert.is(pgRows.next, sameRows.seq.n + 1, 'the identity sequence continues past the copied seq')

  // The verify commands name the same heads in the data dir.
  for (const command of [
    ['incidents', 'verify'],
    ['signals', 'verify'],
  ]) {
    const onLite = await cli([...command, '--data-dir', dataDir])
    assert.is(onLite.code, 0, onLite.stderr)
    const named = [...onLite.stdout.matchAll(/head ([0-9a-f]{64})/g)].map((m) => m[1])
    assert.ok(named.length >= 2, onLite.stdout)
    for (const head of named) assert.ok(Object.values(pgHeads).includes(head) || head === GENESIS, `${command.join(' ')}: ${head} on PostgreSQL too`)
  }
})

test('a second copy into the now non-empty database is refused (exit 1) and writes nothing', async () => {
  const counts = await postgresCounts()
  const res = await cli(['store', 'copy', '--to', url, '--data-dir', dataDir])
  assert.is(res.code, 1, res.stdout + res.stderr)
  assert.match(res.stderr, /not empty/)
  assert.match(res.stderr, /nothing was written/)
  assert.not.ok((res.stdout + res.stderr).includes(PASSWORD))
  assert.equal(await postgresCounts(), counts)
})

test('an unreachable database fails with exit 1, without the password', async () => {
  const res = await cli(['store', 'copy', '--to', `postgres://bulwark:${PASSWORD}@127.0.0.1:1/nowhere`, '--data-dir', dataDir])
  assert.is(res.code, 1, res.stdout + res.stderr)
  assert.not.ok((res.stdout + res.stderr).includes(PASSWORD))
})

test('a server on the copied database (the data dir as its secrets dir) shows the same tenants, incidents and signals', async () => {
  const server = await startServer({ dataDir: tempDir('bulwark-copy-node'), args: ['--database', url, '--secrets-dir', dataDir, '--quiet'] })
  try {
    const after = await apiView(server, 'pw-acme-correct-horse')
    assert.equal(after.workspace, before.workspace)
    assert.equal(after.incidents, before.incidents)
    assert.equal(after.acmeIncidents, before.acmeIncidents)
    assert.equal(after.signals, before.signals)
    assert.equal(after.models, before.models)
  } finally {
    await server.stop()
  }
})

test.run()
