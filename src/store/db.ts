// The one SQLite connection of this process: pragmas, migrations, cached statements, write transactions.
// Only this folder knows about pragmas and migrations.
import Database from 'better-sqlite3'
import type { Statement } from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { assetList, assetText } from './assets.ts'
import { nativeBinding } from './native.ts'
import { type DataVersion, openDataVersion } from './sqlite/data-version.ts'

export type DB = Database.Database

let current: DB | undefined

/**
 * Opens the data dir's database. A statement waits up to 5 s for another process's lock inside
 * SQLite, blocking the thread: right for a CLI command; `serve` switches to short waits and an
 * asynchronous queue once it answers requests (src/store/write-queue.ts).
 */
export function openDatabase(dataDir: string): DB {
  if (current) return current
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const db = openConnection(join(dataDir, 'bulwark.db'))
  migrate(db)
  current = db
  version = openDataVersion(dataDir, db)
  return db
}

/**
 * One connection to `file` with this project's settings: WAL, a 5 s busy wait, foreign keys, and
 * synchronous NORMAL (what WAL makes safe); a read-only one needs an existing file and sets no
 * journal mode.
 *
 * @example
 * const reader = openConnection('/var/lib/bulwark/bulwark.db', { readonly: true })
 */
export function openConnection(file: string, options: { readonly?: boolean } = {}): DB {
  const readonly = options.readonly === true
  const connection = new Database(file, { nativeBinding: nativeBinding() as never, readonly, fileMustExist: readonly })
  if (!readonly) {
    connection.pragma('journal_mode = WAL')
    connection.pragma('synchronous = NORMAL')
  }
  connection.pragma('busy_timeout = 5000')
  connection.pragma('foreign_keys = ON')
  return connection
}

export function closeDatabase(): void {
  version?.close()
  version = undefined
  current?.close()
  current = undefined
}

export function db(): DB {
  if (!current) throw new Error('database is not open')
  return current
}

/** Applies sql/NNN_*.sql files above user_version, each in its own transaction (also the Store's SQLite engine's). */
export function migrate(db: DB): void {
  const files = assetList('sql').filter((f) => /^\d{3}_.*\.sql$/.test(f))
  const applied = db.pragma('user_version', { simple: true }) as number
  for (const file of files) {
    const version = Number(file.slice(0, 3))
    if (version <= applied) continue
    const sql = assetText(`sql/${file}`)
    db.transaction(() => {
      db.exec(sql)
      db.pragma(`user_version = ${version}`)
    }).immediate()
  }
}

/**
 * A statement prepared once per open database, at first use. Feature modules call this at module
 * load (`const byId = statement('SELECT ...')`) and run `byId().get(...)`.
 */
export function statement<P extends unknown[] | object = unknown[], R = unknown>(sql: string): () => Statement<P, R> {
  let owner: DB | undefined
  let prepared: Statement<P, R> | undefined
  return () => {
    if (owner !== current || !prepared) {
      prepared = db().prepare<P, R>(sql)
      owner = current
    }
    return prepared
  }
}

let version: DataVersion | undefined

/**
 * Differs whenever the database content may have changed since the last call, whoever committed
 * the change. Lets pure reads be memoised without ever serving a stale answer.
 */
export function dataVersion(): string {
  return version!.read()
}

/**
 * Runs fn in one BEGIN IMMEDIATE transaction: every write of a change, or none of it. Only the
 * owner of a change opens it: the request pipeline, a CLI command, a service tick. Inside one,
 * write() nests as a savepoint.
 */
export function write<T>(fn: () => T): T {
  return db().transaction(fn).immediate()
}

/**
 * A domain function's writes: a savepoint of the caller's write(), so that a refusal thrown
 * halfway undoes this function's rows and leaves the caller's. Throws when no transaction is
 * open, so a command that forgets write() fails at once instead of committing part of a change.
 *
 * @example
 * export function revokeApiKey(...) {
 *   return savepoint(() => { ... }) // call inside write()
 * }
 */
export function savepoint<T>(fn: () => T): T {
  assertInWrite()
  return db().transaction(fn)()
}

/** The first line of a domain function whose writes need no savepoint of their own (one statement, or rows that only accompany the caller's change). */
export function assertInWrite(): void {
  if (!db().inTransaction) throw new Error('call inside write(): a domain function never opens the transaction')
}

/**
 * Runs fn with SQLite's busy handler set to wait at most `ms` on this connection, then restores
 * the previous wait: for the calls that must not block the thread as long as the rest may.
 *
 * @example
 * withBusyTimeout(db(), 0, () => begin().run()) // throws SQLITE_BUSY at once if the lock is taken
 */
export function withBusyTimeout<T>(connection: DB, ms: number, fn: () => T): T {
  const previous = connection.pragma('busy_timeout', { simple: true }) as number
  connection.pragma(`busy_timeout = ${ms}`)
  try {
    return fn()
  } finally {
    connection.pragma(`busy_timeout = ${previous}`)
  }
}
