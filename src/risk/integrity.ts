// The immutability triggers of table incidents, checked at every `serve` start. The hash chain makes
// an edit visible and the triggers make it impossible through SQLite, but whoever can write the file
// can drop them, rewrite history with correct hashes and recreate them. Finding them missing or
// altered is the one trace of that left in the file, so it is never repaired quietly: the triggers
// are put back as sql/001_init.sql creates them, and the repair is logged, shown by /health and
// recorded on every tenant's chain, all in one write transaction.
import type { Store } from '../store/store.ts'
import { describeRepair, isDamaged, triggerGuard, type TriggerCheck } from '../store/triggers.ts'
import { log } from '../shared/log.ts'
import { allTenants } from '../tenants/tenants.ts'
import { appendIncident } from './incidents.ts'

/** The actor of the incident that records a repair: no user asked for it. */
const INTEGRITY_ACTOR = 'integrity-check@localhost'
const TRIGGERS_RESTORED = 'INTEGRITY_TRIGGERS_RESTORED'
const guard = triggerGuard('sql/001_init.sql', 'incidents')

let state: 'ok' | 'restored' = 'ok'

/** "restored" from a start that had to repair the triggers until the process ends. */
export function incidentTriggersState(): 'ok' | 'restored' {
  return state
}

/**
 * Checks the triggers on incidents against sql/001_init.sql by name and text; repairs and reports
 * any difference. Returns what it found (every list empty: nothing was done).
 */
export async function checkIncidentTriggers(store: Store, now: Date): Promise<TriggerCheck> {
  if (!isDamaged(await guard.inspect(store.read))) return { missing: [], altered: [], unexpected: [] }
  const { found, tenants } = await store.write(async (tx) => {
    const found = await guard.restore(tx)
    if (!isDamaged(found)) return { found, tenants: 0 }
    const reason = `${describeRepair(found)}; the chain may have been rewritten while they were off: verify it against a head kept outside the data dir`
    const all = await allTenants(tx)
    for (const tenant of all) {
      await appendIncident(tx, { tenantId: tenant.id, action: TRIGGERS_RESTORED, actor: INTEGRITY_ACTOR, status: 'RECORDED', reason, now })
    }
    return { found, tenants: all.length }
  })
  if (!isDamaged(found)) return found
  state = 'restored'
  log({
    level: 'error',
    msg: `incident immutability triggers restored: ${describeRepair(found)}`,
    ...found,
    incidents_recorded: tenants,
    action: TRIGGERS_RESTORED,
  })
  return found
}
