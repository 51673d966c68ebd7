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
import { numberTypes } from './postgres/types.ts'
import pg from 'pg'
import { assetList } from './assets.ts'
import { type DB, openConnection } from './db.ts'
import { copyTables } from './copy-tables.ts'
import { refuseTransactionPooling } from './postgres/session-probe.ts'
import { migratePostgres } from './postgres/migrate.ts'
import { toPositional, valuesOf } from './postgres/named-params.ts'
import type { Queries, Query } from './store.ts'

/** The copy cannot start, or the target is not fit for it: nothing was written (the CLI's exit 1). */
export class CopyRefused extends Error {}

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

    const connection: pg.ClientConfig = { connectionString: options.url, connectionTimeoutMillis: 10_000, types: numberTypes }
    await refuseTransactionPooling(options.url)
    await migratePostgres(connection)
    const client = new pg.Client(connection)
    client.on('error', () => {})
    await client.connect()
    await client.query('SET statement_timeout = 0')
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
