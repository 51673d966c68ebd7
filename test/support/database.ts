// A test's own look at a data dir's database, on either engine: the SQLite file through
// better-sqlite3, or on test/run.mjs's PostgreSQL pass the data dir's database (databaseUrlFor)
// through pg. Parameters are positional `?` on both (turned into $1.. for PostgreSQL). For what a
// test checks or tampers with behind the server's back, never for what the API can say.
import Database from 'better-sqlite3'
import { cpSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { toPositional } from '../../src/store/postgres/named-params.ts'
import { numberTypes } from '../../src/store/postgres/types.ts'
import { databaseUrlFor, tempDir } from './harness.ts'

export interface TestDatabase {
  readonly engine: 'sqlite' | 'postgres'
  get<R = any>(sql: string, params?: unknown[]): Promise<R | undefined>
  all<R = any>(sql: string, params?: unknown[]): Promise<R[]>
  run(sql: string, params?: unknown[]): Promise<{ changes: number }>
  /** Statements without parameters, several at once (DDL, a transaction's BEGIN ... COMMIT). */
  exec(sql: string): Promise<void>
  close(): Promise<void>
}

/**
 * The database of `dataDir` (the server's, or a command's), opened beside it.
 *
 * @example
 * const db = await openTestDatabase(server.dataDir)
 * const { n } = (await db.get<{ n: number }>('SELECT count(*) AS n FROM orders WHERE tenant_id = ?', [id]))!
 * await db.close()
 */
export async function openTestDatabase(dataDir: string, options: { readonly?: boolean } = {}): Promise<TestDatabase> {
  const url = await databaseUrlFor(dataDir)
  if (!url) {
    const db = new Database(join(dataDir, 'bulwark.db'), { readonly: options.readonly === true, timeout: 5000 })
    return {
      engine: 'sqlite',
      get: async (sql, params = []) => db.prepare(sql).get(...params) as never,
      all: async (sql, params = []) => db.prepare(sql).all(...params) as never,
      run: async (sql, params = []) => ({ changes: db.prepare(sql).run(...params).changes }),
      exec: async (sql) => {
        db.exec(sql)
      },
      close: async () => {
        db.close()
      },
    }
  }
  // count(*), bigint columns and numeric sums as numbers, as the Store's engine reads them.
  const client = new pg.Client({ connectionString: url, types: numberTypes })
  await client.connect()
  const run = (sql: string, params: unknown[]) => client.query(toPositional(sql).text, params)
  return {
    engine: 'postgres',
    get: async (sql, params = []) => (await run(sql, params)).rows[0],
    all: async (sql, params = []) => (await run(sql, params)).rows,
    run: async (sql, params = []) => ({ changes: (await run(sql, params)).rowCount ?? 0 }),
    exec: async (sql) => {
      await client.query(sql)
    },
    close: () => client.end(),
  }
}

/**
 * A copy of a (stopped) server's data dir, to tamper with while the original stays as it was: its
 * files, and on the PostgreSQL pass its database too (the copy's, made from the original's as a
 * template).
 */
export async function copyDataDir(dataDir: string, label = 'bulwark-copy'): Promise<string> {
  const copy = tempDir(label)
  cpSync(dataDir, copy, { recursive: true })
  const from = await databaseUrlFor(dataDir)
  if (from) {
    const to = (await databaseUrlFor(copy))!
    const name = (url: string) => new URL(url).pathname.slice(1)
    const admin = new pg.Client({ connectionString: process.env.BULWARK_TEST_POSTGRES })
    await admin.connect()
    try {
      await admin.query(`DROP DATABASE ${name(to)}`)
      await admin.query(`CREATE DATABASE ${name(to)} TEMPLATE ${name(from)}`)
    } finally {
      await admin.end()
    }
  }
  return copy
}
