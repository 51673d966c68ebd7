// SQLite connections with this project's settings, and the migrations: what the Store's SQLite
// engine (./sqlite/engine.ts) and the backup command open. Only this folder knows about pragmas and
// migrations.
import Database from 'better-sqlite3'
import { assetList, assetText } from './assets.ts'
import { nativeBinding } from './native.ts'

export type DB = Database.Database

/**
 * One connection to `file` with this project's settings: WAL, a 5 s busy wait, foreign keys, and
 * synchronous NORMAL (what WAL makes safe); a read-only one needs an existing file and sets no
 * journal mode. Temporary storage in memory: a statement inside a savepoint (every order's
 * pre-trade transaction) keeps a statement journal, and in a temporary file each such INSERT cost
 * 35 us instead of 7 (120 us in a loaded server). A sort too large for the page cache stays in
 * memory too, which the size of what Bulwark sorts allows.
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
  connection.pragma('temp_store = MEMORY')
  return connection
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
