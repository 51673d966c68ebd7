// What reconciliation found the venue and the ledger disagree on (SPEC 10). Table venue_mismatches
// (sql/011_live_orders.sql): tenant_id, key, incident_id. Each disagreement is one incident
// VENUE_RECONCILIATION_MISMATCH and one event venue.mismatch, however many passes see it again.
import { query, type Tx } from '../../store/store.ts'
import { appendIncident, incidentRef } from '../../risk/incidents.ts'
import { recordEvent } from '../../webhooks/events.ts'

const RECONCILIATION_ACTOR = 'reconciliation@localhost'

export interface Mismatch {
  kind: 'unknown_order' | 'missed_fill' | 'balance' | 'missing_protection'
  pair: string | null
  /** The venue's order id it is about, if any: the incident's reason names it too. */
  venue_order_id: string | null
  detail: string
}

const known = query<[string, string], { incident_id: string }>('SELECT incident_id FROM venue_mismatches WHERE tenant_id = ? AND key = ?')
const remember = query<[string, string, string]>('INSERT INTO venue_mismatches (tenant_id, key, incident_id) VALUES (?, ?, ?)')

/**
 * Records a disagreement once per `key` (order:<venue id>, fill:<venue trade id>, balance:...);
 * returns false when it was recorded before. In the transaction that found it.
 */
export async function recordMismatch(tx: Tx, tenantId: string, key: string, now: Date, mismatch: Mismatch): Promise<boolean> {
  if (await tx.get(known, [tenantId, key])) return false
  const incident = await appendIncident(tx, {
    tenantId,
    action: 'VENUE_RECONCILIATION_MISMATCH',
    actor: RECONCILIATION_ACTOR,
    status: 'RECORDED',
    reason: mismatch.detail,
    now,
  })
  await tx.run(remember, [tenantId, key, incident.id])
  await recordEvent(tx, tenantId, 'venue.mismatch', { ...mismatch, incident_id: incident.id, incident: incidentRef(incident) }, now)
  return true
}
