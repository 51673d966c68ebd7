// The immutability triggers of table incidents, checked at every `serve` start. The hash chain makes
// an edit visible and the triggers make it impossible through SQLite, but whoever can write the file
// can drop them, rewrite history with correct hashes and recreate them. Finding them missing or
// altered is the one trace of that left in the file, so it is never repaired quietly: the triggers
// are put back as sql/001_init.sql creates them, and the repair is logged, shown by /health and
// recorded on every tenant's chain, all in one write transaction.
import { assetText } from '../store/assets.ts'
import { db, write } from '../store/db.ts'
import { log } from '../shared/log.ts'
import { allTenants } from '../tenants/tenants.ts'
import { appendIncident } from './incidents.ts'

/** The actor of the incident that records a repair: no user asked for it. */
const INTEGRITY_ACTOR = 'integrity-check@localhost'
const TRIGGERS_RESTORED = 'INTEGRITY_TRIGGERS_RESTORED'

export interface TriggerCheck {
  missing: string[]
  altered: string[]
  unexpected: string[]
}

let state: 'ok' | 'restored' = 'ok'

/** "restored" from a start that had to repair the triggers until the process ends. */
export function incidentTriggersState(): 'ok' | 'restored' {
  return state
}

/** name -> CREATE TRIGGER text, as SQLite keeps it in sqlite_master (the statement without its `;`). */
function expectedTriggers(): Map<string, string> {
  const sql = assetText('sql/001_init.sql')
  const expected = new Map<string, string>()
  for (const match of sql.matchAll(/^CREATE TRIGGER (\w+) [^\n]*\bON incidents\b[\s\S]*?\bEND(?=;)/gm)) expected.set(match[1], match[0])
  if (expected.size === 0) throw new Error('sql/001_init.sql creates no trigger on incidents')
  return expected
}

function inspect(expected: Map<string, string>): TriggerCheck {
  const present = new Map(
    db()
      .prepare<[], { name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND lower(tbl_name) = 'incidents'")
      .all()
      .map((t) => [t.name, t.sql]),
  )
  return {
    missing: [...expected.keys()].filter((name) => !present.has(name)),
    altered: [...expected.keys()].filter((name) => present.has(name) && present.get(name) !== expected.get(name)),
    // Any other trigger on the table goes too: a BEFORE INSERT ... RAISE(IGNORE) would make new
    // incidents vanish without a word.
    unexpected: [...present.keys()].filter((name) => !expected.has(name)),
  }
}

/**
 * Checks the triggers on incidents against sql/001_init.sql by name and text; repairs and reports
 * any difference. Returns what it found (every list empty: nothing was done).
 */
export function checkIncidentTriggers(now: Date): TriggerCheck {
  const expected = expectedTriggers()
  if (!isDamaged(inspect(expected))) return { missing: [], altered: [], unexpected: [] }
  const { found, tenants } = write(() => {
    // Looked at again under the write lock: a CLI may have changed the file meanwhile.
    const found = inspect(expected)
    if (!isDamaged(found)) return { found, tenants: 0 }
    for (const name of [...found.altered, ...found.unexpected]) db().exec(`DROP TRIGGER "${name.replaceAll('"', '""')}"`)
    for (const name of [...found.missing, ...found.altered]) db().exec(expected.get(name)!)
    const reason = `${describe(found)}; the chain may have been rewritten while they were off: verify it against a head kept outside the data dir`
    const all = allTenants()
    for (const tenant of all) {
      appendIncident({ tenantId: tenant.id, action: TRIGGERS_RESTORED, actor: INTEGRITY_ACTOR, status: 'RECORDED', reason, now })
    }
    return { found, tenants: all.length }
  })
  if (!isDamaged(found)) return found
  state = 'restored'
  log({
    level: 'error',
    msg: `incident immutability triggers restored: ${describe(found)}`,
    ...found,
    incidents_recorded: tenants,
    action: TRIGGERS_RESTORED,
  })
  return found
}

function isDamaged(check: TriggerCheck): boolean {
  return check.missing.length + check.altered.length + check.unexpected.length > 0
}

function describe(check: TriggerCheck): string {
  const parts = [
    ...check.missing.map((name) => `${name} missing, recreated`),
    ...check.altered.map((name) => `${name} altered, recreated`),
    ...check.unexpected.map((name) => `unexpected trigger ${name} dropped`),
  ]
  return parts.join(', ')
}
