// The durable outbox. Table webhook_deliveries (id, webhook_id, tenant_id, event_id, event_type,
// status PENDING|SUCCEEDED|FAILED, attempts, next_attempt_at epoch ms, last_attempt_at,
// last_status_code, last_error, delivered_at, redelivery_of, created_at), sql/005_webhooks.sql.
// Every recorded event becomes one row per subscribed ACTIVE endpoint, inside the transaction of
// the change that caused it: the event, its deliveries and the change commit or vanish together.
import { statement } from '../store/db.ts'
import { newId } from '../store/ids.ts'
import type { Purge } from '../store/retention.ts'
import type { EventRecord } from './events.ts'
import { getWebhook, subscribers } from './endpoints.ts'

export type DeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED'

interface DeliveryRow {
  id: string
  webhook_id: string
  tenant_id: string
  event_id: string
  event_type: string
  status: DeliveryStatus
  attempts: number
  next_attempt_at: number
  last_attempt_at: string | null
  last_status_code: number | null
  last_error: string | null
  delivered_at: string | null
  redelivery_of: string | null
  created_at: string
}

export interface Delivery extends Omit<DeliveryRow, 'tenant_id' | 'next_attempt_at'> {
  next_attempt_at: string | null
}

/** One due attempt with what its body needs. */
export interface OutboxItem {
  id: string
  webhook_id: string
  tenant_id: string
  event_id: string
  event_type: string
  attempts: number
  event_created_at: string
  data: string
}

const insertDelivery =
  statement(`INSERT INTO webhook_deliveries (id, webhook_id, tenant_id, event_id, event_type, status, next_attempt_at, redelivery_of, created_at)
  VALUES (?, ?, ?, ?, ?, 'PENDING', ?, ?, ?)`)
const deliveryOf = statement<[string, string, string], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND webhook_id = ? AND id = ?')
const deliveryOfEvent = statement<[string, string, string], DeliveryRow>(
  'SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND webhook_id = ? AND event_id = ? ORDER BY id LIMIT 1',
)
const deliveriesOf = statement<[string, string, string, number], DeliveryRow>(
  'SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND webhook_id = ? AND id < ? ORDER BY id DESC LIMIT ?',
)
const deliveriesWithStatus = statement<[string, string, string, string, number], DeliveryRow>(
  'SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND webhook_id = ? AND status = ? AND id < ? ORDER BY id DESC LIMIT ?',
)

const ITEM = `SELECT d.id, d.webhook_id, d.tenant_id, d.event_id, d.event_type, d.attempts, e.created_at AS event_created_at, e.data
  FROM webhook_deliveries d JOIN events e ON e.id = d.event_id`
const firstInLine = statement<[string, number], OutboxItem>(`${ITEM} WHERE d.webhook_id = ? AND d.status = 'PENDING' AND d.attempts = 0 ORDER BY d.id LIMIT ?`)
const dueRetryRows = statement<[string, number, number], OutboxItem>(
  `${ITEM} WHERE d.webhook_id = ? AND d.status = 'PENDING' AND d.attempts > 0 AND d.next_attempt_at <= ? ORDER BY d.next_attempt_at LIMIT ?`,
)
const nextRetryRow = statement<[string, number], { at: number | null }>(
  "SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE webhook_id = ? AND status = 'PENDING' AND attempts > 0 AND next_attempt_at > ?",
)
const dueEndpoints = statement<[number], { webhook_id: string }>(`SELECT DISTINCT d.webhook_id FROM webhook_deliveries d
  JOIN webhooks w ON w.id = d.webhook_id WHERE d.status = 'PENDING' AND d.next_attempt_at <= ? AND w.status = 'ACTIVE'`)
const succeeded = statement(`UPDATE webhook_deliveries SET status = 'SUCCEEDED', attempts = ?, last_attempt_at = ?, last_status_code = ?,
  last_error = NULL, delivered_at = ? WHERE id = ? AND status = 'PENDING'`)
const failed = statement(`UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_attempt_at = ?, last_status_code = ?,
  last_error = ? WHERE id = ? AND status = 'PENDING'`)
const backlogCount = statement<[], { n: number }>(`SELECT count(*) AS n FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
  WHERE d.status = 'PENDING' AND w.status = 'ACTIVE'`)
// Retention, through the indexes of sql/005 (finished deliveries by age) and sql/007 (events by age,
// deliveries by event).
const expiredDeliveries = statement<[string, number]>(`DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries
  WHERE status <> 'PENDING' AND created_at < ? ORDER BY created_at LIMIT ?)`)
const oldEvents = statement<[string, string, string, number], { id: string; created_at: string }>(
  'SELECT id, created_at FROM events WHERE created_at < ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?',
)
const deleteUndelivered = statement<[string, string]>('DELETE FROM events WHERE id = ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_id = ?)')

type QueuedListener = (webhookIds: string[]) => void
let queuedListener: QueuedListener | undefined

/** The in-process sender asks to hear about new rows; CLI processes have none and rely on its scan. */
export function onDeliveriesQueued(listener: QueuedListener): void {
  queuedListener = listener
}

function announce(webhookIds: string[]): void {
  const listener = queuedListener
  // After the surrounding transaction: a rolled-back change leaves nothing to find, which is fine.
  if (listener && webhookIds.length) setImmediate(() => listener(webhookIds))
}

function targetsOf(event: EventRecord): string[] {
  if (event.type === 'webhook.ping') {
    // A ping tests one endpoint, whatever its event filter says.
    const id = event.data.webhook_id
    return typeof id === 'string' && getWebhook(event.tenant_id, id)?.status === 'ACTIVE' ? [id] : []
  }
  return subscribers(event.tenant_id, event.type)
}

/** Writes the deliveries of an event to every subscribed endpoint; runs inside recordEvent's transaction (hooked up in src/app.ts). */
export function fanOut(event: EventRecord): void {
  const targets = targetsOf(event)
  const due = Date.parse(event.created_at)
  for (const webhookId of targets) {
    insertDelivery().run(newId('dlv'), webhookId, event.tenant_id, event.id, event.type, due, null, event.created_at)
  }
  announce(targets)
}

function shown(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'PENDING' ? new Date(row.next_attempt_at).toISOString() : null,
    last_attempt_at: row.last_attempt_at,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    delivered_at: row.delivered_at,
    redelivery_of: row.redelivery_of,
    created_at: row.created_at,
  }
}

export function listDeliveries(tenantId: string, webhookId: string, status: DeliveryStatus | undefined, before: string, limit: number): Delivery[] {
  const rows = status ? deliveriesWithStatus().all(tenantId, webhookId, status, before, limit) : deliveriesOf().all(tenantId, webhookId, before, limit)
  return rows.map(shown)
}

export function getDelivery(tenantId: string, webhookId: string, id: string): Delivery | undefined {
  const row = deliveryOf().get(tenantId, webhookId, id)
  return row && shown(row)
}

/** The delivery an event made for one endpoint (the answer to POST /{id}/test). */
export function deliveryOfEventFor(tenantId: string, webhookId: string, eventId: string): Delivery | undefined {
  const row = deliveryOfEvent().get(tenantId, webhookId, eventId)
  return row && shown(row)
}

/** A new delivery of the same event (same body id, so receivers that saw it can dedupe). */
export function redeliver(tenantId: string, webhookId: string, id: string, now: Date): Delivery | undefined {
  const original = deliveryOf().get(tenantId, webhookId, id)
  if (!original) return undefined
  const copyId = newId('dlv')
  insertDelivery().run(copyId, webhookId, tenantId, original.event_id, original.event_type, now.getTime(), original.id, now.toISOString())
  announce([webhookId])
  return shown(deliveryOf().get(tenantId, webhookId, copyId)!)
}

// ---- The sender's side -------------------------------------------------------------------------

/** The oldest first attempts waiting for this endpoint: first attempts go out in creation order. */
export function nextFirstAttempts(webhookId: string, limit: number): OutboxItem[] {
  return firstInLine().all(webhookId, limit)
}

/** Retries that are due; they never wait behind the in-order first attempts. */
export function dueRetries(webhookId: string, nowMs: number, limit: number): OutboxItem[] {
  return dueRetryRows().all(webhookId, nowMs, limit)
}

/** When the earliest retry that is not yet due falls due (epoch ms), or null. */
export function nextRetryAfter(webhookId: string, nowMs: number): number | null {
  return nextRetryRow().get(webhookId, nowMs)?.at ?? null
}

/** ACTIVE endpoints with at least one due delivery (after a restart, or rows written by the CLI). */
export function endpointsWithDueWork(nowMs: number): string[] {
  return dueEndpoints()
    .all(nowMs)
    .map((r) => r.webhook_id)
}

export function markSucceeded(id: string, attempts: number, at: Date, statusCode: number): void {
  const iso = at.toISOString()
  succeeded().run(attempts, iso, statusCode, iso, id)
}

/** nextAttemptAt null: that was the last attempt, the delivery is FAILED. */
export function markFailed(id: string, attempts: number, at: Date, nextAttemptAt: number | null, statusCode: number | null, error: string): void {
  failed().run(nextAttemptAt === null ? 'FAILED' : 'PENDING', attempts, nextAttemptAt ?? at.getTime(), at.toISOString(), statusCode, error.slice(0, 300), id)
}

/** Pending deliveries of ACTIVE endpoints (Health.webhook_backlog). */
export function backlog(): number {
  return backlogCount().get()?.n ?? 0
}

// ---- Retention (SPEC section 8), run by the nightly upkeep ------------------------------------

/**
 * SUCCEEDED and FAILED deliveries created before the retention, then the events that no delivery
 * refers to any more and are older than the retention themselves: an event with a PENDING delivery,
 * or with a redelivery younger than the retention, stays; one that never had an endpoint goes.
 */
export const webhookPurges: Purge[] = [
  {
    name: 'webhook_deliveries',
    begin: ({ nowMs, retentionMs }) => {
      const cutoff = new Date(nowMs - retentionMs).toISOString()
      return (limit) => {
        const deleted = expiredDeliveries().run(cutoff, limit).changes
        return { deleted, more: deleted === limit }
      }
    },
  },
  {
    name: 'events',
    begin: ({ nowMs, retentionMs }) => {
      const cutoff = new Date(nowMs - retentionMs).toISOString()
      // Kept events are passed once per run, not read again by every batch.
      let after = { created_at: '', id: '' }
      return (limit) => {
        const candidates = oldEvents().all(cutoff, after.created_at, after.id, limit)
        let deleted = 0
        for (const event of candidates) deleted += deleteUndelivered().run(event.id, event.id).changes
        after = candidates.at(-1) ?? after
        return { deleted, more: candidates.length === limit }
      }
    },
  },
]
