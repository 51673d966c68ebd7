// What arrived at a hook (SPEC 16), table alerts (sql/021_alerts.sql): each alert whose secret
// matched, ACCEPTED (with its order), REFUSED (with the problem's code and detail) or DUPLICATE (an
// id already accepted within 24 h), and the message as it came, its secret taken out.
import { newId } from '../store/ids.ts'
import { type Queries, query, type Tx } from '../store/store.ts'

export type AlertOutcome = 'ACCEPTED' | 'REFUSED' | 'DUPLICATE'

export interface AlertRecord {
  id: string
  hook_id: string
  alert_id: string | null
  received_at: string
  outcome: AlertOutcome
  code: string | null
  reason: string | null
  order_id: string | null
  message: string
}

/** An id is a duplicate this long after its first acceptance. */
export const DUPLICATE_WINDOW_MS = 24 * 60 * 60 * 1000

const insertAlert = query(`INSERT INTO alerts (id, hook_id, tenant_id, alert_id, received_at, outcome, code, reason, order_id, message)
  VALUES (@id, @hook_id, @tenant_id, @alert_id, @received_at, @outcome, @code, @reason, @order_id, @message)`)
const acceptedBefore = query<{ hook: string; alert: string; since: string }, { order_id: string | null }>(`
  SELECT order_id FROM alerts WHERE hook_id = @hook AND alert_id = @alert AND outcome = 'ACCEPTED' AND received_at >= @since
  ORDER BY seq LIMIT 1`)
const hookAlerts = query<{ tenant: string; hook: string; before: string; limit: number }, AlertRecord>(`
  SELECT id, hook_id, alert_id, received_at, outcome, code, reason, order_id, message FROM alerts
  WHERE tenant_id = @tenant AND hook_id = @hook AND id < @before ORDER BY id DESC LIMIT @limit`)

/** Records what arrived, in the transaction of what it caused. */
export async function recordAlert(
  tx: Tx,
  tenantId: string,
  alert: Omit<AlertRecord, 'id' | 'received_at' | 'code' | 'reason' | 'order_id'> & Partial<Pick<AlertRecord, 'code' | 'reason' | 'order_id'>>,
  now: Date,
): Promise<string> {
  const id = newId('alr')
  await tx.run(insertAlert, {
    id,
    tenant_id: tenantId,
    hook_id: alert.hook_id,
    alert_id: alert.alert_id,
    received_at: now.toISOString(),
    outcome: alert.outcome,
    code: alert.code ?? null,
    reason: alert.reason ?? null,
    order_id: alert.order_id ?? null,
    message: alert.message,
  })
  return id
}

/** The first acceptance of this id at the hook within 24 h: a duplicate answers with its order. */
export async function findAcceptedAlert(db: Queries, hookId: string, alertId: string, now: Date): Promise<{ order_id: string | null } | undefined> {
  return db.get(acceptedBefore, { hook: hookId, alert: alertId, since: new Date(now.getTime() - DUPLICATE_WINDOW_MS).toISOString() })
}

/** What arrived at one of the tenant's hooks, newest first, a page before `before`. */
export function listAlerts(db: Queries, tenantId: string, hookId: string, before: string, limit: number): Promise<AlertRecord[]> {
  return db.all(hookAlerts, { tenant: tenantId, hook: hookId, before, limit })
}
