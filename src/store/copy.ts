// `bulwark store copy` (SPEC 15): every row of a data dir's SQLite database into an empty PostgreSQL
// database, in ONE PostgreSQL transaction (all or nothing). The SQLite file is opened read-only and
// read in one read transaction (one snapshot, even while a server writes). PostgreSQL is migrated
// first (sql/postgres, the same tables and columns as SQLite's); its tables are locked against
// writers, checked empty, and filled in an order that satisfies the foreign keys, in multi-row
// INSERTs of bounded size (a table is streamed, never held whole). Generated columns are left to
// PostgreSQL; identity columns get the copied values and their sequences are set past them.
//
// The triggers that keep derived tables (realized_pnl, order_seconds, opening_order_days) are off
// while the rows go in, since those tables are copied as they are: left on, they would count every
// copied trade and order a second time. They are back on before the commit (ALTER TABLE ... DISABLE
// TRIGGER is transactional). A caller's `check` runs last, inside the transaction, on both sides:
// a throw rolls the whole copy back.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Statement } from 'better-sqlite3'
import pg from 'pg'
import { assetList } from './assets.ts'
import { type DB, openConnection } from './db.ts'
import { migratePostgres } from './postgres/migrate.ts'
import { toPositional, valuesOf } from './postgres/named-params.ts'
import type { Queries, Query } from './store.ts'

/** The copy cannot start, or the target is not fit for it: nothing was written (the CLI's exit 1). */
export class CopyRefused extends Error {}

/**
 * Tables the migrations themselves fill (sql/001's built-in models): present in every freshly
 * migrated database, so they do not make it non-empty; the data dir's rows replace them.
 */
const MIGRATION_ROWS = new Set(['models'])

/** PostgreSQL's limit of parameters in one statement is 65535; a batch also stays this many rows or fewer. */
const MAX_PARAMETERS = 60_000
const BATCH_ROWS = 1000

export interface TableCopy {
  table: string
  rows: number
}

export interface CopyOptions {
  /** The data dir whose bulwark.db is copied. */
  dataDir: string
  /** The target, postgres://...: never printed (it carries a password). */
  url: string
  /** Rows per INSERT (default 1000, fewer for wide tables). */
  batchRows?: number
  /** Called as each table is done. */
  progress?: (table: TableCopy) => void
  /**
   * Runs after every row is in, inside the PostgreSQL transaction and the SQLite snapshot the rows
   * came from: `source` reads the data dir, `target` the copy as it will commit. A throw rolls back.
   */
  check?: (source: Queries, target: Queries) => Promise<void>
}

/** int8 (count(*), bigint columns) as a number, as the Store's PostgreSQL engine reads it. */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === pg.types.builtins.INT8 && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as never)) as typeof pg.types.getTypeParser,
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`

/** "host:port/database" of a URL: what may be printed of it (never the user's password). */
export function describeTarget(url: string): string {
  try {
    const u = new URL(url)
    return `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname || '/'}`
  } catch {
    return 'the database'
  }
}

/** The last SQLite migration this bulwark ships (sql/NNN_*.sql). */
function latestSqliteMigration(): number {
  return Math.max(0, ...assetList('sql').flatMap((f) => (/^\d{3}_.*\.sql$/.test(f) ? [Number(f.slice(0, 3))] : [])))
}

/** Read-only Queries over a SQLite connection (the Store's read side, without a Store that would migrate or write). */
export function sqliteQueries(db: DB): Queries {
  const prepared = new Map<string, Statement>()
  const statement = (q: Query<object, unknown>) => {
    let found = prepared.get(q.sqlite)
    if (!found) {
      found = db.prepare(q.sqlite)
      prepared.set(q.sqlite, found)
    }
    return found
  }
  const bind = (params: object | undefined): unknown[] => {
    const fix = (v: unknown) => (typeof v === 'boolean' ? Number(v) : v)
    if (!params) return []
    if (Array.isArray(params)) return params.map(fix)
    return Object.keys(params).length ? [Object.fromEntries(Object.entries(params).map(([k, v]) => [k, fix(v)]))] : []
  }
  return {
    engine: 'sqlite',
    async get<P extends object, R>(q: Query<P, R>, params?: P) {
      return statement(q).get(...bind(params)) as R | undefined
    },
    async all<P extends object, R>(q: Query<P, R>, params?: P) {
      return statement(q).all(...bind(params)) as R[]
    },
    async run() {
      throw new Error('the source of a copy is read only')
    },
  }
}

/** Queries over one PostgreSQL client (inside its transaction). */
function postgresQueries(client: pg.Client): Queries {
  const config = (q: Query<object, unknown>, params: object | undefined): pg.QueryConfig => {
    const { text, names } = toPositional(q.postgres)
    return { text, values: valuesOf(names, params) }
  }
  return {
    engine: 'postgres',
    async get<P extends object, R>(q: Query<P, R>, params?: P) {
      return (await client.query(config(q, params))).rows[0] as R | undefined
    },
    async all<P extends object, R>(q: Query<P, R>, params?: P) {
      return (await client.query(config(q, params))).rows as R[]
    },
    async run<P extends object>(q: Query<P, unknown>, params?: P) {
      return { changes: (await client.query(config(q, params))).rowCount ?? 0 }
    },
  }
}

/** Tables in an order where each comes after the tables its foreign keys name (ties by name). */
function dependencyOrder(tables: string[], dependsOn: Map<string, Set<string>>): string[] {
  const order: string[] = []
  const done = new Set<string>()
  const visiting = new Set<string>()
  const visit = (table: string, path: string[]) => {
    if (done.has(table)) return
    if (visiting.has(table)) throw new CopyRefused(`the foreign keys form a cycle (${[...path, table].join(' -> ')}): no insert order satisfies them`)
    visiting.add(table)
    for (const parent of [...(dependsOn.get(table) ?? [])].sort()) if (parent !== table) visit(parent, [...path, table])
    visiting.delete(table)
    done.add(table)
    order.push(table)
  }
  for (const table of [...tables].sort()) visit(table, [])
  return order
}

/** A value as PostgreSQL takes it: SQLite's integers are read exactly (bigint) and sent as text when beyond 2^53. */
function pgValue(value: unknown): unknown {
  if (typeof value === 'bigint') return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString()
  return value
}

/**
 * Copies every table of `dataDir`'s SQLite database into the PostgreSQL database at `url`, which
 * must be empty (migrated here if it is not yet). Throws CopyRefused when it cannot start (no
 * database, a schema this bulwark does not have, a target with rows); any other error rolls the
 * copy back as well. Returns the rows copied per table, in the order copied.
 *
 * @example
 * const tables = await copyToPostgres({ dataDir: '/var/lib/bulwark', url: 'postgres://bulwark:pw@db:5432/bulwark' })
 */
export async function copyToPostgres(options: CopyOptions): Promise<TableCopy[]> {
  const file = join(options.dataDir, 'bulwark.db')
  if (!existsSync(file)) throw new CopyRefused(`no database at ${file}`)
  const sqlite = openConnection(file, { readonly: true })
  try {
    const version = sqlite.pragma('user_version', { simple: true }) as number
    const latest = latestSqliteMigration()
    if (version < latest) {
      throw new CopyRefused(
        `the database in ${options.dataDir} is at migration ${version}, this bulwark's schema at ${latest}: open it once with this version (start serve on it, or run bulwark incidents verify --data-dir ${options.dataDir}), then copy`,
      )
    }
    if (version > latest)
      throw new CopyRefused(
        `the database in ${options.dataDir} is at migration ${version}, newer than this bulwark's ${latest}: copy it with the newer bulwark`,
      )

    const connection: pg.ClientConfig = { connectionString: options.url, connectionTimeoutMillis: 10_000, statement_timeout: 0, types }
    await migratePostgres(connection)
    const client = new pg.Client(connection)
    client.on('error', () => {})
    await client.connect()
    try {
      // One snapshot of the source for the whole copy and the check.
      sqlite.exec('BEGIN')
      try {
        await client.query('BEGIN')
        try {
          const copied = await copyTables(sqlite, client, options)
          await options.check?.(sqliteQueries(sqlite), postgresQueries(client))
          await client.query('COMMIT')
          return copied
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {})
          throw error
        }
      } finally {
        sqlite.exec('COMMIT')
      }
    } finally {
      await client.end().catch(() => {})
    }
  } finally {
    sqlite.close()
  }
}

async function copyTables(sqlite: DB, client: pg.Client, options: CopyOptions): Promise<TableCopy[]> {
  const sourceTables = (
    sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").all() as { name: string }[]
  ).map((t) => t.name)
  const targetTables = new Set(
    (
      await client.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations'",
      )
    ).rows.map((t) => t.name),
  )
  const missing = sourceTables.filter((t) => !targetTables.has(t))
  if (missing.length) throw new CopyRefused(`the PostgreSQL database has no table ${missing.join(', ')}: its schema is not this bulwark's`)
  const extra = [...targetTables].filter((t) => !sourceTables.includes(t))
  if (extra.length) throw new CopyRefused(`the data dir's database has no table ${extra.join(', ')}: its schema is not this bulwark's`)

  // Writers (a node started on the target meanwhile) wait for the copy; readers do not.
  await client.query(`LOCK TABLE ${sourceTables.map(ident).join(', ')} IN EXCLUSIVE MODE`)
  const withRows: string[] = []
  for (const table of sourceTables) {
    if (MIGRATION_ROWS.has(table)) continue
    const { rows } = await client.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${ident(table)}) AS any`)
    if (rows[0].any) withRows.push(table)
  }
  if (withRows.length) {
    throw new CopyRefused(
      `the PostgreSQL database is not empty (rows in ${withRows.slice(0, 5).join(', ')}${withRows.length > 5 ? `, and ${withRows.length - 5} more tables` : ''}): copy into a new, empty database`,
    )
  }

  // Columns: SQLite's stored ones (table_xinfo's hidden 2 and 3 are generated), which PostgreSQL must have as ordinary ones.
  const generatedHere = new Set(
    (
      await client.query<{ t: string; c: string }>(
        "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = 'public' AND is_generated = 'ALWAYS'",
      )
    ).rows.map((r) => `${r.t}.${r.c}`),
  )
  const targetColumns = new Set(
    (
      await client.query<{ t: string; c: string }>("SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = 'public'")
    ).rows.map((r) => `${r.t}.${r.c}`),
  )
  const identities = (
    await client.query<{ t: string; c: string }>(
      "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = 'public' AND is_identity = 'YES'",
    )
  ).rows
  const columnsOf = new Map<string, string[]>()
  const dependsOn = new Map<string, Set<string>>()
  for (const table of sourceTables) {
    const columns = (sqlite.prepare('SELECT name, hidden FROM pragma_table_xinfo(?) ORDER BY cid').all(table) as { name: string; hidden: number }[])
      .filter((c) => c.hidden === 0)
      .map((c) => c.name)
    for (const column of columns) {
      if (!targetColumns.has(`${table}.${column}`))
        throw new CopyRefused(`the PostgreSQL database has no column ${table}.${column}: its schema is not this bulwark's`)
      if (generatedHere.has(`${table}.${column}`))
        throw new CopyRefused(`${table}.${column} is generated in PostgreSQL but stored in SQLite: the schemas differ`)
    }
    columnsOf.set(table, columns)
    const parents = sqlite.prepare('SELECT DISTINCT "table" AS parent FROM pragma_foreign_key_list(?)').all(table) as { parent: string }[]
    dependsOn.set(table, new Set(parents.map((p) => p.parent)))
  }

  // The triggers that would count the copied rows again (see the top of this file).
  const triggered = (
    await client.query<{ t: string }>(
      "SELECT DISTINCT c.relname AS t FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND NOT g.tgisinternal",
    )
  ).rows.map((r) => r.t)
  for (const table of triggered) await client.query(`ALTER TABLE ${ident(table)} DISABLE TRIGGER USER`)

  const copied: TableCopy[] = []
  for (const table of dependencyOrder(sourceTables, dependsOn)) {
    const columns = columnsOf.get(table)!
    if (MIGRATION_ROWS.has(table)) await client.query(`DELETE FROM ${ident(table)}`)
    const hasIdentity = identities.some((i) => i.t === table)
    const perBatch = Math.max(1, Math.min(options.batchRows ?? BATCH_ROWS, Math.floor(MAX_PARAMETERS / columns.length)))
    const head = `INSERT INTO ${ident(table)} (${columns.map(ident).join(', ')})${hasIdentity ? ' OVERRIDING SYSTEM VALUE' : ''} VALUES `
    const insert = async (batch: unknown[][]) => {
      const values: unknown[] = []
      const tuples = batch.map((row) => `(${row.map((v) => `$${values.push(pgValue(v))}`).join(', ')})`)
      await client.query(head + tuples.join(', '), values)
    }
    const select = sqlite
      .prepare(`SELECT ${columns.map(ident).join(', ')} FROM ${ident(table)}`)
      .raw(true)
      .safeIntegers(true)
    let rows = 0
    let batch: unknown[][] = []
    for (const row of select.iterate() as IterableIterator<unknown[]>) {
      batch.push(row)
      if (batch.length >= perBatch) {
        await insert(batch)
        rows += batch.length
        batch = []
      }
    }
    if (batch.length) {
      await insert(batch)
      rows += batch.length
    }
    const { rows: counted } = await client.query<{ n: number }>(`SELECT count(*) AS n FROM ${ident(table)}`)
    if (counted[0].n !== rows) throw new Error(`${table}: ${rows} rows copied, but PostgreSQL counts ${counted[0].n}`)
    const done = { table, rows }
    copied.push(done)
    options.progress?.(done)
  }

  for (const { t, c } of identities) {
    await client.query(`SELECT setval(pg_get_serial_sequence($1, $2), coalesce(max(${ident(c)}), 1), max(${ident(c)}) IS NOT NULL) FROM ${ident(t)}`, [
      ident(t),
      c,
    ])
  }
  for (const table of triggered) await client.query(`ALTER TABLE ${ident(table)} ENABLE TRIGGER USER`)
  return copied
}
