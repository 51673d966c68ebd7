// The triggers that make a table append-only (incidents, signals), compared with the migration that
// creates them and put back when they differ. Whoever can write the file can drop them, rewrite
// rows and recreate them; finding them missing or altered is the trace that leaves, so the callers
// never repair quietly (risk/integrity.ts, signals/chain-integrity.ts say how each one reports).
import { assetText } from './assets.ts'
import { query, type Queries, type Tx } from './store.ts'

const triggersOn = query<[string], { name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND lower(tbl_name) = ?")

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
 * The guard of `table`'s triggers, as the CREATE TRIGGER statements of `migration` write them.
 *
 * @example
 * const guard = triggerGuard('sql/001_init.sql', 'incidents')
 * if (isDamaged(await guard.inspect(store.read))) await store.write((tx) => guard.restore(tx))
 */
export function triggerGuard(migration: string, table: string): TriggerGuard {
  let expected: Map<string, string> | undefined
  // name -> CREATE TRIGGER text, as SQLite keeps it in sqlite_master (the statement without its `;`).
  const triggers = () => {
    if (expected) return expected
    expected = new Map()
    const pattern = new RegExp(`^CREATE TRIGGER (\\w+) [^\\n]*\\bON ${table}\\b[\\s\\S]*?\\bEND(?=;)`, 'gm')
    for (const match of assetText(migration).matchAll(pattern)) expected.set(match[1], match[0])
    if (expected.size === 0) throw new Error(`${migration} creates no trigger on ${table}`)
    return expected
  }
  const inspect = async (db: Queries): Promise<TriggerCheck> => {
    const want = triggers()
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
      for (const name of [...found.altered, ...found.unexpected]) await tx.run(query(`DROP TRIGGER "${name.replaceAll('"', '""')}"`))
      for (const name of [...found.missing, ...found.altered]) await tx.run(query(triggers().get(name)!))
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
