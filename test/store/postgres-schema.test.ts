// engines: own
// sql/postgres/001..NNN against sql/001..NNN: a fresh PostgreSQL database migrated through them has
// SQLite's schema (the same tables and views with the same columns in the same order, the same
// nullability, the same generated column), and the triggers do on PostgreSQL what they do on
// SQLite: realized PnL upkeep, the order counters, the incident and signal chains' guards.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openStore } from '../../src/store/open-store.ts'
import { type Store, query } from '../../src/store/store.ts'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, tempDir } from '../support/harness.ts'
import { sharedPostgres } from '../support/postgres.ts'

const test = suite('PostgreSQL schema = SQLite schema')
let sqlite: Store
let postgres: Store

interface Column {
  relation: string
  kind: 'table' | 'view'
  name: string
  notnull: boolean
  generated: boolean
}

// SQLite: table_xinfo also lists generated columns (hidden 2 virtual, 3 stored); a PRIMARY KEY
// column is NOT NULL on PostgreSQL always (SQLite lets a non-integer one hold NULL unless declared).
const sqliteColumns = query<object, { relation: string; kind: string; name: string; notnull: number; pk: number; hidden: number }>(`
  SELECT m.name AS relation, m.type AS kind, c.name, c."notnull", c.pk, c.hidden
  FROM sqlite_master m, pragma_table_xinfo(m.name) c
  WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite_%'
  ORDER BY m.name, c.cid`)
const postgresColumns = query<object, { relation: string; kind: string; name: string; notnull: string; generated: string }>(`
  SELECT c.table_name AS relation, CASE t.table_type WHEN 'VIEW' THEN 'view' ELSE 'table' END AS kind,
    c.column_name AS name, c.is_nullable AS notnull, c.is_generated AS generated
  FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
  WHERE c.table_schema = 'public' AND c.table_name <> 'schema_migrations'
  ORDER BY c.table_name, c.ordinal_position`)

async function columnsOf(store: Store): Promise<Column[]> {
  if (store.engine === 'sqlite') {
    return (await store.read.all(sqliteColumns)).map((c) => ({
      relation: c.relation,
      kind: c.kind as Column['kind'],
      name: c.name,
      notnull: c.kind === 'view' ? false : c.notnull === 1 || c.pk > 0,
      generated: c.hidden === 2 || c.hidden === 3,
    }))
  }
  return (await store.read.all(postgresColumns)).map((c) => ({
    relation: c.relation,
    kind: c.kind as Column['kind'],
    name: c.name,
    notnull: c.notnull === 'NO',
    generated: c.generated === 'ALWAYS',
  }))
}

const byRelation = (columns: Column[]) => {
  const out = new Map<string, Column[]>()
  for (const c of columns) out.set(c.relation, [...(out.get(c.relation) ?? []), c])
  return out
}

test.before(async () => {
  sqlite = await openStore({ dataDir: tempDir('bulwark-schema') })
  postgres = await openStore({ dataDir: tempDir('bulwark-schema'), databaseUrl: await (await sharedPostgres()).createDatabase() })
})
test.after(async () => {
  await Promise.all([sqlite?.close(), postgres?.close()])
})

test('every migration applied once: sql/postgres/000..NNN, numbered like sql/001..NNN', async () => {
  const rows = await postgres.read.all(query<object, { version: number }>('SELECT version FROM schema_migrations ORDER BY version'))
  const numbers = (dir: string) =>
    readdirSync(join(ROOT, dir))
      .filter((f) => /^\d{3}_.*\.sql$/.test(f))
      .map((f) => Number(f.slice(0, 3)))
  assert.equal(
    rows.map((r) => r.version),
    Array.from({ length: numbers('sql/postgres').length }, (_, i) => i),
  )
  assert.equal(
    numbers('sql/postgres').filter((n) => n > 0),
    numbers('sql'),
  )
})

test('the same tables and views, each with the same columns in the same order, nullability and generation', async () => {
  const [lite, pg] = [byRelation(await columnsOf(sqlite)), byRelation(await columnsOf(postgres))]
  assert.equal([...pg.keys()].sort(), [...lite.keys()].sort(), 'relations')
  for (const [relation, columns] of lite) assert.equal(pg.get(relation), columns, relation)
  assert.ok(
    lite.get('pending_orders')!.some((c) => c.name === 'alert_hook_id'),
    'pending_orders has every column of orders',
  )
  assert.ok(lite.get('trades')!.some((c) => c.name === 'pnl_costs_usd' && c.generated))
})

test('the same indexes (partial ones too) and triggers by name', async () => {
  const names = (rows: { name: string }[]) => rows.map((r) => r.name).sort()
  const sqliteIndexes = query<object, { name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
  // Indexes PostgreSQL makes for a constraint (SQLite's sqlite_autoindex_*, sql NULL) are left out on both.
  const postgresIndexes = query<object, { name: string }>(`SELECT i.relname AS name FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
    JOIN pg_namespace n ON n.oid = i.relnamespace
    WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`)
  assert.equal(names(await postgres.read.all(postgresIndexes)), names(await sqlite.read.all(sqliteIndexes)))
  const partial = query<object, { n: number }>({
    sqlite: "SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND sql LIKE '% WHERE %'",
    postgres: "SELECT count(*) AS n FROM pg_indexes WHERE schemaname = 'public' AND indexdef LIKE '% WHERE %'",
  })
  assert.equal(await postgres.read.get(partial), await sqlite.read.get(partial), 'partial indexes')
  const sqliteTriggers = query<object, { name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger'")
  // PostgreSQL adds a TRUNCATE guard to each append-only table (SQLite has no TRUNCATE).
  const postgresTriggers = query<object, { name: string }>("SELECT tgname AS name FROM pg_trigger WHERE NOT tgisinternal AND tgname NOT LIKE '%_no_truncate'")
  assert.equal(names(await postgres.read.all(postgresTriggers)), names(await sqlite.read.all(sqliteTriggers)))
})

test('the same seeded rows: the models of 001 with 006 universes', async () => {
  const models = query('SELECT id, universe, quote_asset, hash FROM models ORDER BY id')
  assert.equal(await postgres.read.all(models), await sqlite.read.all(models))
  assert.equal((await postgres.read.all(query<object, { universe: string }>("SELECT universe FROM models WHERE id = 'trend-follower'")))[0], {
    universe: '["BTC","ETH","SOL","BNB","XRP"]',
  })
})

async function both(work: (store: Store) => Promise<void>): Promise<void> {
  for (const store of [sqlite, postgres]) await work(store)
}
const failure = (store: Store, sql: string, params: object = {}) =>
  store
    .write((tx) => tx.run(query(sql), params))
    .then(
      () => undefined,
      (e: Error) => e.message,
    )

test('fixtures: a tenant, in both', async () => {
  await both((s) =>
    s.write(async (tx) => {
      await tx.run(query("INSERT INTO tenants (id, slug, plan, created_at) VALUES ('t1', 't1', 'EXECUTE', '2026-01-01T00:00:00.000Z')"))
    }),
  )
})

test('realized_pnl: a closed trade adds quantity x (exit - entry) - pnl_costs_usd; closing an open one too', async () => {
  const insert = query(`INSERT INTO trades (id, tenant_id, pair, direction, mode, quantity, entry_price, exit_price, fees_usd,
    slippage_usd, slippage_in_pnl, dust_quantity, status, opened_at, closed_at)
    VALUES (@id, 't1', 'BTC/USDT', 'LONG', 'PAPER', 2, 100, @exit, 1, 0.5, @sip, 0.1, @status, '2026-01-01T00:00:00.000Z', NULL)`)
  const pnl = query<object, { pnl_usd: number }>("SELECT pnl_usd FROM realized_pnl WHERE tenant_id = 't1'")
  const results: number[][] = []
  for (const store of [sqlite, postgres]) {
    const seen: number[] = []
    await store.write((tx) => tx.run(insert, { id: 'tr1', exit: 110, sip: 1, status: 'CLOSED' }))
    seen.push((await store.read.get(pnl))!.pnl_usd)
    await store.write((tx) => tx.run(insert, { id: 'tr2', exit: null, sip: 0, status: 'OPEN' }))
    seen.push((await store.read.get(pnl))!.pnl_usd)
    await store.write((tx) => tx.run(query("UPDATE trades SET exit_price = 90, status = 'CLOSED' WHERE id = 'tr2'")))
    seen.push((await store.read.get(pnl))!.pnl_usd)
    await store.write((tx) => tx.run(query("UPDATE trades SET fees_usd = 2 WHERE id = 'tr2'")))
    seen.push((await store.read.get(pnl))!.pnl_usd)
    results.push(seen)
  }
  // 2 x 10 - (1 + 0.5 + 0.1 x 110) = 7.5; then 2 x -10 - (1 + 0 + 0.1 x 90) = -30: 7.5 - 30 = -22.5.
  assert.equal(results[0], [7.5, 7.5, -22.5, -22.5])
  assert.equal(results[1], results[0])
})

test('order_counts: orders per second and opening orders per day; seconds older than 120 s go', async () => {
  const insert = query(`INSERT INTO orders (id, tenant_id, pair, side, type, quantity, reference_price, reference_date, status, created_at)
    VALUES (@id, 't1', 'BTC/USDT', @side, 'MARKET', 1, 100, '2026-01-01', 'PENDING', @at)`)
  const counts = query('SELECT second AS k, n FROM order_seconds UNION ALL SELECT day AS k, n FROM opening_order_days ORDER BY k')
  const results: unknown[] = []
  for (const store of [sqlite, postgres]) {
    await store.write(async (tx) => {
      await tx.run(insert, { id: 'o1', side: 'BUY', at: '2026-01-02T10:00:00.100Z' })
      await tx.run(insert, { id: 'o2', side: 'BUY', at: '2026-01-02T10:00:00.900Z' })
      await tx.run(insert, { id: 'o3', side: 'SELL', at: '2026-01-02T10:01:00.000Z' })
      await tx.run(insert, { id: 'o4', side: 'SELL', at: '2026-01-02T10:02:01.000Z' })
    })
    results.push(await store.read.all(counts))
  }
  assert.equal(results[0], [
    { k: '2026-01-02', n: 2 },
    { k: '2026-01-02T10:01:00', n: 1 },
    { k: '2026-01-02T10:02:01', n: 1 },
  ])
  assert.equal(results[1], results[0])
})

test('incidents: an UPDATE, a DELETE (and on PostgreSQL a TRUNCATE) is refused with the same message', async () => {
  await both(async (s) => {
    await s.write((tx) =>
      tx.run(
        query(`INSERT INTO incidents (id, tenant_id, action, actor, status, timestamp, model_id, reason, prev_hash, hash)
        VALUES ('inc_1', 't1', 'PAUSE', 'u', 'OK', '2026-01-01T00:00:00.000Z', '*', NULL, 'p', 'h')`),
      ),
    )
    assert.match(String(await failure(s, "UPDATE incidents SET reason = 'nothing happened'")), /incidents are immutable/, s.engine)
    assert.match(String(await failure(s, 'DELETE FROM incidents')), /incidents are immutable/, s.engine)
    assert.equal(await s.read.all(query('SELECT id, reason FROM incidents')), [{ id: 'inc_1', reason: null }])
    const seq = await s.read.get(query<object, { seq: number }>('SELECT seq FROM incidents'))
    assert.equal(seq, { seq: 1 }, 'seq assigned like a rowid')
  })
  assert.match(String(await failure(postgres, 'TRUNCATE incidents CASCADE')), /incidents are immutable/)
})

test('signals: an unchained row takes its chain fields once; a chained row never changes; no signal goes', async () => {
  const h = (d: string) => d.repeat(64)
  await both(async (s) => {
    await s.write((tx) =>
      tx.run(
        query(`INSERT INTO signals (id, model_id, pair, action, direction, entry_price, as_of, created_at)
        VALUES ('sig_1', 'trend-follower', 'BTC/USDT', 'HOLD', 'HOLD', 100, '2026-01-01', '2026-01-02T00:00:00.000Z')`),
      ),
    )
    const chain = "UPDATE signals SET model_version = '1.0.0', model_hash = @a, chain_seq = 1, prev_hash = @z, hash = @b"
    assert.match(String(await failure(s, `${chain}, entry_price = 2`, { a: h('a'), z: h('0'), b: h('b') })), /a chained signal is never updated/)
    assert.match(String(await failure(s, "UPDATE signals SET model_version = '1.0.0'")), /a chained signal is never updated/, 'all fields at once')
    assert.is(await failure(s, chain, { a: h('a'), z: h('0'), b: h('b') }), undefined, 'the back-fill chains it once')
    assert.match(String(await failure(s, 'UPDATE signals SET entry_price = 1')), /signals are immutable: a chained signal is never updated/)
    assert.match(String(await failure(s, 'UPDATE signals SET hash = @c', { c: h('c') })), /a chained signal is never updated/)
    assert.match(String(await failure(s, 'DELETE FROM signals')), /signals are immutable: a signal is never deleted/)
    const short = `INSERT INTO signals (id, model_id, pair, action, direction, entry_price, as_of, created_at, hash)
      VALUES ('sig_2', 'trend-follower', 'ETH/USDT', 'HOLD', 'HOLD', 1, '2026-01-01', '2026-01-02T00:00:00.000Z', 'short')`
    assert.match(String(await failure(s, short)), /check|constraint/i, `${s.engine}: length(hash) = 64`)
    assert.equal(await s.read.get(query<object, { hash: string }>('SELECT hash FROM signals')), { hash: h('b') })
  })
})

test('CHECKs ported from GLOB and case-insensitive email: the same rows refused on both', async () => {
  await both(async (s) => {
    assert.ok(await failure(s, "UPDATE models SET quote_asset = 'usdt'"), `${s.engine}: quote_asset GLOB`)
    const user = query(`INSERT INTO users (id, tenant_id, email, password_hash, role, created_at)
      VALUES (@id, 't1', @email, 'x', 'owner', '2026-01-01T00:00:00.000Z')`)
    assert.is(await s.write((tx) => tx.run(user, { id: 'u1', email: 'Ann@Example.com' }).then(() => undefined)), undefined)
    assert.ok(await failure(s, user.sqlite, { id: 'u2', email: 'ann@example.COM' }), `${s.engine}: email unique NOCASE`)
    assert.equal(await s.read.get(query("SELECT id FROM users WHERE email = 'ANN@example.com'")), { id: 'u1' })
  })
})

test.run()
