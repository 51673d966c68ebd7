// The durable outbox. Table webhook_deliveries (id, webhook_id, tenant_id, event_id, event_type,
// status PENDING|SUCCEEDED|FAILED, attempts, next_attempt_at epoch ms, last_attempt_at,
// last_status_code, last_error, delivered_at, redelivery_of, created_at), sql/005_webhooks.sql.
// Every recorded event becomes one row per subscribed ACTIVE endpoint, inside the transaction of
// the change that caused it: the event, its deliveries and the change commit or vanish together.
import { query, type Queries, type Tx } from '../store/store.ts'
import { newId } from '../store/ids.ts'
import type { EventRecord } from './events.ts'
import { findWebhook, subscribers } from './endpoints.ts'
import type { Delivery, DeliveryStatus } from './delivery-schema.ts'

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
  query(`INSERT INTO webhook_deliveries (id, webhook_id, tenant_id, event_id, event_type, status, next_attempt_at, redelivery_of, created_at)
  VALUES (?, ?, ?, ?, ?, 'PENDING', ?, ?, ?)`)
const deliveryOf = query<[string, string, string], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND webhook_id = ? AND id = ?')
// SQLite would walk every delivery of the endpoint to have them in id order: `+id` keeps it on the
// event's index (one or two rows).
const deliveryOfEventBy = (order: string) =>
  `SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND webhook_id = ? AND event_id = ? ORDER BY ${order} LIMIT 1`
const deliveryOfEvent = query<[string, string, string], DeliveryRow>({ sqlite: deliveryOfEventBy('+id'), postgres: deliveryOfEventBy('id') })
const deliveriesOf = query<[string, string, string, number], DeliveryRow>(
  'SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND webhook_id = ? AND id < ? ORDER BY id DESC LIMIT ?',
)
const deliveriesWithStatus = query<[string, string, string, string, number], DeliveryRow>(
  'SELECT * FROM webhook_deliveries WHERE tenant_id = ? AND webhook_id = ? AND status = ? AND id < ? ORDER BY id DESC LIMIT ?',
)

type QueuedListener = (webhookIds: string[]) => void
let queuedListener: QueuedListener | undefined
/** The in-process sender asks to hear about new rows; CLI processes have none and rely on its scan. */
export function onDeliveriesQueued(listener: QueuedListener): void {
  queuedListener = listener
}

/** Tells the in-process sender of the rows once `tx` has committed (its own scan is the fallback). */
function announce(tx: Tx, webhookIds: string[]): void {
  const listener = queuedListener
  if (listener && webhookIds.length) tx.afterCommit(() => listener(webhookIds))
}

async function targetsOf(tx: Tx, event: EventRecord): Promise<string[]> {
  if (event.type === 'webhook.ping') {
    // A ping tests one endpoint, whatever its event filter says.
    const id = event.data.webhook_id
    return typeof id === 'string' && (await findWebhook(tx, event.tenant_id, id))?.status === 'ACTIVE' ? [id] : []
  }
  return subscribers(tx, event.tenant_id, event.type)
}

/** Writes the deliveries of an event to every subscribed endpoint; runs inside recordEvent's transaction (hooked up in src/app.ts). */
export async function fanOut(tx: Tx, event: EventRecord): Promise<void> {
  const targets = await targetsOf(tx, event)
  const due = Date.parse(event.created_at)
  for (const webhookId of targets) {
    await tx.run(insertDelivery, [newId('dlv'), webhookId, event.tenant_id, event.id, event.type, due, null, event.created_at])
  }
  announce(tx, targets)
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

export async function listDeliveries(
  db: Queries,
  tenantId: string,
  webhookId: string,
  status: DeliveryStatus | undefined,
  before: string,
  limit: number,
): Promise<Delivery[]> {
  const rows = status
    ? await db.all(deliveriesWithStatus, [tenantId, webhookId, status, before, limit])
    : await db.all(deliveriesOf, [tenantId, webhookId, before, limit])
  return rows.map(shown)
}

export async function findDelivery(db: Queries, tenantId: string, webhookId: string, id: string): Promise<Delivery | undefined> {
  const row = await db.get(deliveryOf, [tenantId, webhookId, id])
  return row && shown(row)
}

/** The delivery an event made for one endpoint (the answer to POST /{id}/test). */
export async function deliveryOfEventFor(db: Queries, tenantId: string, webhookId: string, eventId: string): Promise<Delivery | undefined> {
  const row = await db.get(deliveryOfEvent, [tenantId, webhookId, eventId])
  return row && shown(row)
}

/** A new delivery of the same event (same body id, so receivers that saw it can dedupe). */
export async function redeliver(tx: Tx, tenantId: string, webhookId: string, id: string, now: Date): Promise<Delivery | undefined> {
  const original = await tx.get(deliveryOf, [tenantId, webhookId, id])
  if (!original) return undefined
  const copyId = newId('dlv')
  await tx.run(insertDelivery, [copyId, webhookId, tenantId, original.event_id, original.event_type, now.getTime(), original.id, now.toISOString()])
  announce(tx, [webhookId])
  return shown((await tx.get(deliveryOf, [tenantId, webhookId, copyId]))!)
}
