// Events of SPEC section 7. Table events (id, tenant_id, type, data JSON, created_at). recordEvent
// runs inside the transaction of the change that caused the event, so an event exists exactly when
// its change does; the webhook outbox fans it out to endpoints (src/webhooks/outbox.ts).
import { newId } from '../store/ids.ts'
import { query, type Tx } from '../store/store.ts'

export const EVENT_TYPES = [
  'signal.published',
  'order.created',
  'order.filled',
  'order.canceled',
  'trade.opened',
  'trade.closed',
  'risk.kill_switch.engaged',
  'risk.trading.resumed',
  'risk.limit.breached',
  'risk.limit.warning',
  'risk.circuit_breaker.tripped',
  'risk.dead_man_switch.fired',
  'venue.mismatch',
  'venue.protection_failed',
  'webhook.ping',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

export interface EventRecord {
  id: string
  tenant_id: string
  type: EventType
  data: Record<string, unknown>
  created_at: string
}

const insertEvent = query('INSERT INTO events (id, tenant_id, type, data, created_at) VALUES (?, ?, ?, ?, ?)')

/** Runs inside the change's transaction (tx); awaited in the order the listeners were added. */
type EventListener = (tx: Tx, event: EventRecord) => Promise<void>
const listeners: EventListener[] = []

/** The outbox subscribes here to write its deliveries in the same transaction. */
export function onEvent(listener: EventListener): void {
  listeners.push(listener)
}

/** In the change's write transaction (tx), with what its listeners write. */
export async function recordEvent(tx: Tx, tenantId: string, type: EventType, data: Record<string, unknown>, now: Date): Promise<EventRecord> {
  const event: EventRecord = { id: newId('evt'), tenant_id: tenantId, type, data, created_at: now.toISOString() }
  await tx.run(insertEvent, [event.id, tenantId, type, JSON.stringify(data), event.created_at])
  for (const listener of listeners) await listener(tx, event)
  return event
}
