// The one SQLite connection of this process: pragmas, migrations, cached statements, write transactions.
// Only this folder knows about pragmas and migrations.
import Database from 'better-sqlite3'
import type { Statement } from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { assetList, assetText } from './assets.ts'
import { nativeBinding } from './native.ts'

export type DB = Database.Database

let current: DB | undefined

export function openDatabase(dataDir: string): DB {
  if (current) return current
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const db = new Database(join(dataDir, 'bulwark.db'), { nativeBinding: nativeBinding() as never })
  db.pragma('journal_mode = WAL')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  db.pragma('synchronous = NORMAL')
  migrate(db)
  current = db
  return db
}

export function closeDatabase(): void {
  current?.close()
  current = undefined
}

export function db(): DB {
  if (!current) throw new Error('database is not open')
  return current
}

/** Applies sql/NNN_*.sql files above user_version, each in its own transaction. */
function migrate(db: DB): void {
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
export function statement<P extends unknown[] | {} = unknown[], R = unknown>(sql: string): () => Statement<P, R> {
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

const versionQuery = statement<[], [number, number]>('SELECT total_changes(), (SELECT data_version FROM pragma_data_version())')

/**
 * Differs whenever the database content may have changed since the last call: a write through this
 * connection (total_changes) or a commit by another process, such as a CLI command (data_version).
 * Lets pure reads be memoised without ever serving a stale answer.
 */
export function dataVersion(): string {
  const [changes, version] = versionQuery().raw().get()!
  return `${changes}:${version}`
}

/** Runs fn in one BEGIN IMMEDIATE transaction: every write of a change, or none of it. */
export function write<T>(fn: () => T): T {
  return db().transaction(fn).immediate()
}
