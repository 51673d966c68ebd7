// engines: own
// What only the PostgreSQL engine has to prove (SPEC 15): leases are advisory locks (one holder among
// stores on one database, taken over once released, closed or its connection killed); a database
// that accepts TCP and never answers fails within 5 s with DatabaseUnavailableError; a commit whose
// synchronous-replication wait was cancelled is refused, never acknowledged; nodes starting together
// migrate once.
import { createServer, type Server, type Socket } from 'node:net'
import pg from 'pg'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openStore } from '../../src/store/open-store.ts'
import { openPostgresStore } from '../../src/store/postgres/engine.ts'
import { DatabaseUnavailableError, type Store, query } from '../../src/store/store.ts'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, tempDir } from '../support/harness.ts'
import { type PostgresServer, sharedPostgres } from '../support/postgres.ts'

const test = suite('store contract: PostgreSQL only')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
let server: PostgresServer
const open: Store[] = []

async function store(url: string, options: { leaseHeartbeatMs?: number; statementTimeoutMs?: number } = {}): Promise<Store> {
  const s = await openPostgresStore({ url, ...options })
  open.push(s)
  return s
}

async function sql<T extends pg.QueryResultRow = any>(url: string, text: string, values?: unknown[]): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<T>(text, values)).rows
  } finally {
    await client.end()
  }
}

/** A TCP server that accepts connections and never answers: a frozen primary. */
async function silentServer(): Promise<{ port: number; close: () => void }> {
  const sockets: Socket[] = []
  const silent: Server = createServer((socket) => void sockets.push(socket))
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  return {
    port: (silent.address() as { port: number }).port,
    close: () => {
      for (const s of sockets) s.destroy()
      silent.close()
    },
  }
}

test.before(async () => {
  server = await sharedPostgres()
})
test.after(async () => {
  await Promise.all(open.map((s) => s.close()))
})

test('openStore: a postgres:// or postgresql:// URL selects PostgreSQL; another scheme is refused', async () => {
  const url = await server.createDatabase()
  const s = await openStore({ dataDir: tempDir('bulwark-store'), databaseUrl: url.replace('postgres://', 'postgresql://') })
  open.push(s)
  assert.is(s.engine, 'postgres')
  const error = await openStore({ dataDir: tempDir('bulwark-store'), databaseUrl: 'mysql://x' }).catch((e) => e)
  assert.match(String(error), /postgres:\/\//)
})

// Every numbered file of sql/postgres, 000 first.
const MIGRATIONS = readdirSync(join(ROOT, 'sql', 'postgres')).filter((f) => /^\d{3}_.*\.sql$/.test(f)).length

test('migrations: two stores opening together apply sql/postgres once, recorded in schema_migrations', async () => {
  const url = await server.createDatabase()
  await Promise.all([store(url), store(url), store(url)])
  const versions = await sql<{ version: number; name: string }>(url, 'SELECT version, name FROM schema_migrations ORDER BY version')
  assert.equal(
    versions.map((v) => v.version),
    Array.from({ length: MIGRATIONS }, (_, i) => i),
    `each of sql/postgres/000..${String(MIGRATIONS - 1).padStart(3, '0')} once`,
  )
  assert.equal(versions[0], { version: 0, name: '000_store.sql' })
  const a = open.at(-1)!
  await a.write((tx) => tx.run(query("INSERT INTO store_meta (key, value) VALUES ('k', 'v')")))
  assert.equal(await a.read.all(query('SELECT key, value FROM store_meta')), [{ key: 'k', value: 'v' }])
  assert.equal(await a.read.get(query<object, { n: number }>('SELECT count(*) AS n FROM store_meta')), { n: 1 }, 'bigint as a number')
})

test('leases: one holder among stores on one database; release, close or a killed connection lets another take it', async () => {
  const url = await server.createDatabase()
  const [a, b] = [await store(url, { leaseHeartbeatMs: 100 }), await store(url, { leaseHeartbeatMs: 100 })]
  const held = (await a.lease('publisher'))!
  assert.ok(held.held())
  assert.is(await b.lease('publisher'), undefined, 'the other store is refused')
  assert.is(await a.lease('publisher'), undefined, 'a second take by the holder store too (a session per lease)')
  const other = await b.lease('webhooks')
  assert.ok(other?.held(), 'another name is free')
  await held.release()
  assert.not.ok(held.held())
  const taken = (await b.lease('publisher'))!
  assert.ok(taken.held(), 'released: the other takes it')

  // Closing the holder's store frees its leases.
  await b.close()
  assert.not.ok(taken.held())
  const again = (await a.lease('publisher'))!
  assert.ok(again.held())

  // The holder's connection killed: it reports not held, and the name is free.
  const c = await store(url)
  await sql(url, "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()")
  for (let i = 0; i < 50 && again.held(); i++) await sleep(20)
  assert.not.ok(again.held(), 'a lease whose connection died is not held')
  assert.ok((await c.lease('publisher'))?.held())
})

test('a database that accepts TCP and never answers: DatabaseUnavailableError within 5 s, opening or querying', async () => {
  const silent = await silentServer()
  const url = `postgres://postgres@127.0.0.1:${silent.port}/none`
  try {
    for (const attempt of [
      () => openPostgresStore({ url }),
      async () => (await openPostgresStore({ url, migrate: false })).read.get(query('SELECT 1')),
      async () => (await openPostgresStore({ url, migrate: false })).write(async () => 1),
      async () => (await openPostgresStore({ url, migrate: false })).lease('x'),
    ]) {
      const started = Date.now()
      const error = await attempt().catch((e) => e)
      const ms = Date.now() - started
      assert.instance(error, DatabaseUnavailableError)
      assert.ok(ms < 5000, `failed after ${ms} ms`)
    }
  } finally {
    silent.close()
  }
})

test('a write that fails on a constraint rethrows the server error as it is (not a 503), and nothing is written', async () => {
  const s = await store(await server.createDatabase())
  const insert = query<{ key: string }>("INSERT INTO store_meta (key, value) VALUES (@key, 'v')")
  await s.write((tx) => tx.run(insert, { key: 'dup' }))
  const error = await s.write((tx) => tx.run(insert, { key: 'other' }).then(() => tx.run(insert, { key: 'dup' }))).catch((e) => e)
  assert.instance(error, pg.DatabaseError)
  assert.is(error.code, '23505')
  assert.is((await s.read.all(query('SELECT key FROM store_meta'))).length, 1)
})

// Last: it changes the server's settings (this file's own server: each test file has its own). A
// standby that never comes keeps the COMMIT waiting; cancelling that wait (as an operator or a
// failover does; statement_timeout does not reach it, PostgreSQL disables it before the commit)
// makes PostgreSQL commit locally with only a WARNING, which the store must not acknowledge.
test('a commit whose synchronous-replication wait is cancelled throws DatabaseUnavailableError, never resolves', async () => {
  const url = await server.createDatabase()
  const s = await store(url)
  await sql(server.url(), "ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
  await sql(server.url(), 'SELECT pg_reload_conf()')
  try {
    await sleep(200)
    const pending = s.write((tx) => tx.run(query("INSERT INTO store_meta (key, value) VALUES ('local', 'only')"))).catch((e) => e)
    let cancelled = 0
    for (let i = 0; i < 100 && !cancelled; i++) {
      await sleep(20)
      cancelled = (await sql(url, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")).length
    }
    assert.ok(cancelled, 'the COMMIT waited for the standby')
    const error = await pending
    assert.instance(error, DatabaseUnavailableError)
    assert.match(error.message, /synchronous/, error.message)
    // PostgreSQL did commit it locally: exactly why the store must not answer 200.
    assert.equal(await sql(url, 'SELECT key FROM store_meta'), [{ key: 'local' }])
  } finally {
    await sql(server.url(), 'ALTER SYSTEM RESET synchronous_standby_names')
    await sql(server.url(), 'SELECT pg_reload_conf()')
  }
})

test.run()
