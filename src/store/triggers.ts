// The triggers that make a table append-only (incidents, signals), compared with the migration that
// creates them and put back when they differ. Whoever can write the file can drop them, rewrite
// rows and recreate them; finding them missing or altered is the trace that leaves, so the callers
// never repair quietly (risk/integrity.ts, signals/chain-integrity.ts say how each one reports).
import { assetText } from './assets.ts'
import { type Engine, query, type Queries, type Tx } from './store.ts'

// SQLite keeps a trigger's CREATE statement as written; PostgreSQL rebuilds it (the table schema-qualified).
const triggersOn = query<[string], { name: string; sql: string }>({
  sqlite: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND lower(tbl_name) = ?",
  postgres:
    "SELECT tgname AS name, replace(pg_get_triggerdef(oid), ' ON public.', ' ON ') AS sql FROM pg_trigger WHERE tgrelid = ?::regclass AND NOT tgisinternal",
})

export interface TriggerCheck {
  missing: string[]
  altered: string[]
  unexpected: string[]
}

/** The guarded table's triggers as `migration` creates them, and how to look at them. */
export interface TriggerGuard {
  /** What the database holds now against the migration (every list empty: intact). */
  inspect(db: Queries): Promise<TriggerCheck>
  /** In the write transaction tx: looks again under the lock, puts the migration's triggers back, returns what it found. */
  restore(tx: Tx): Promise<TriggerCheck>
}

/**
 * The guard of `table`'s triggers, as the CREATE TRIGGER statements of `migration` write them (on
 * PostgreSQL, those of the same file under sql/postgres/).
 *
 * @example
 * const guard = triggerGuard('sql/001_init.sql', 'incidents')
 * if (isDamaged(await guard.inspect(store.read))) await store.write((tx) => guard.restore(tx))
 */
export function triggerGuard(migration: string, table: string): TriggerGuard {
  const expected = new Map<Engine, Map<string, string>>()
  // name -> CREATE TRIGGER text, as the engine keeps it: SQLite the statement without its `;` (a
  // body ending in END), PostgreSQL one line calling its function.
  const triggers = (engine: Engine) => {
    let found = expected.get(engine)
    if (found) return found
    found = new Map()
    const file = engine === 'sqlite' ? migration : migration.replace(/^sql\//, 'sql/postgres/')
    const pattern =
      engine === 'sqlite'
        ? new RegExp(`^CREATE TRIGGER (\\w+) [^\\n]*\\bON ${table}\\b[\\s\\S]*?\\bEND(?=;)`, 'gm')
        : new RegExp(`^CREATE TRIGGER (\\w+) [^\\n;]*\\bON ${table}\\b[^;]*(?=;)`, 'gm')
    for (const match of assetText(file).matchAll(pattern)) found.set(match[1], match[0])
    if (found.size === 0) throw new Error(`${file} creates no trigger on ${table}`)
    expected.set(engine, found)
    return found
  }
  const inspect = async (db: Queries): Promise<TriggerCheck> => {
    const want = triggers(db.engine)
    const present = new Map((await db.all(triggersOn, [table.toLowerCase()])).map((t) => [t.name, t.sql]))
    return {
      missing: [...want.keys()].filter((name) => !present.has(name)),
      altered: [...want.keys()].filter((name) => present.has(name) && present.get(name) !== want.get(name)),
      // Any other trigger on the table goes too: a BEFORE INSERT ... RAISE(IGNORE) would make new rows vanish.
      unexpected: [...present.keys()].filter((name) => !want.has(name)),
    }
  }
  return {
    inspect,
    async restore(tx) {
      // Looked at again under the write lock: a CLI may have changed the file meanwhile.
      const found = await inspect(tx)
      const on = tx.engine === 'postgres' ? ` ON ${table}` : ''
      for (const name of [...found.altered, ...found.unexpected]) await tx.run(query(`DROP TRIGGER "${name.replaceAll('"', '""')}"${on}`))
      for (const name of [...found.missing, ...found.altered]) await tx.run(query(triggers(tx.engine).get(name)!))
      return found
    },
  }
}

export function isDamaged(check: TriggerCheck): boolean {
  return check.missing.length + check.altered.length + check.unexpected.length > 0
}

/** One line: "x missing, recreated, y altered, recreated, unexpected trigger z dropped". */
export function describeRepair(check: TriggerCheck): string {
  return [
    ...check.missing.map((name) => `${name} missing, recreated`),
    ...check.altered.map((name) => `${name} altered, recreated`),
    ...check.unexpected.map((name) => `unexpected trigger ${name} dropped`),
  ].join(', ')
}
