// What reconciliation found the venue and the ledger disagree on (SPEC 10). Table venue_mismatches
// (sql/011_live_orders.sql): tenant_id, key, incident_id. Each disagreement is one incident
// VENUE_RECONCILIATION_MISMATCH and one event venue.mismatch, however many passes see it again.
import { assertInWrite, statement } from '../../store/db.ts'
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

const known = statement<[string, string], { incident_id: string }>('SELECT incident_id FROM venue_mismatches WHERE tenant_id = ? AND key = ?')
const remember = statement('INSERT INTO venue_mismatches (tenant_id, key, incident_id) VALUES (?, ?, ?)')

/**
 * Records a disagreement once per `key` (order:<venue id>, fill:<venue trade id>, balance:...);
 * returns false when it was recorded before. Call inside write().
 */
export function recordMismatch(tenantId: string, key: string, now: Date, mismatch: Mismatch): boolean {
  assertInWrite()
  if (known().get(tenantId, key)) return false
  const incident = appendIncident({
    tenantId,
    action: 'VENUE_RECONCILIATION_MISMATCH',
    actor: RECONCILIATION_ACTOR,
    status: 'RECORDED',
    reason: mismatch.detail,
    now,
  })
  remember().run(tenantId, key, incident.id)
  recordEvent(tenantId, 'venue.mismatch', { ...mismatch, incident_id: incident.id, incident: incidentRef(incident) }, now)
  return true
}
