// The LIVE orders' outbox. Table venue_orders (sql/011_live_orders.sql, sql/015): order_id, tenant_id,
// exchange, state (QUEUED, SENT, UNKNOWN, OPEN, DONE: ./lifecycle.ts says what moves an order), sent_at, venue_order_id, cancel_by, not_before,
// last_error, updated_at. A row is written in the transaction of its order (or of the cancel that
// asks for it), so nothing the executor must do is lost on a crash; the executor (./executor.ts)
// is told after the commit, and finds the rest by its own sweep (a CLI's orders, a restart).
import { query, type Queries, type Tx } from '../../store/store.ts'
import type { OrderSource } from '../orders.ts'
import { noteLiveOrderMoved } from './order-watch.ts'

/** A working LIVE order as the executor sees it: the order's fields and its outbox row. */
export interface LiveOrder {
  id: string
  tenant_id: string
  model_id: string | null
  pair: string
  side: 'BUY' | 'SELL'
  type: 'MARKET' | 'LIMIT'
  source: OrderSource
  gateway_key_id: string | null
  alert_hook_id: string | null
  quantity: number | null
  notional_usd: number | null
  limit_price: number | null
  /** A stop or take-profit (a gateway bot's): its trigger, else null. */
  stop_price: number | null
  stop_trigger: 'STOP_LOSS' | 'TAKE_PROFIT' | null
  reference_price: number
  filled_quantity: number
  trade_id: string | null
  exchange: string
  state: 'QUEUED' | 'SENT' | 'UNKNOWN' | 'OPEN' | 'DONE'
  sent_at: number | null
  venue_order_id: string | null
  cancel_by: string | null
  /** Behind a kill switch's fence that settlement has not yet turned into cancel_by. */
  fenced: number
}

const insertQueued = query<[string, string, string, string]>(
  `INSERT INTO venue_orders (order_id, tenant_id, exchange, state, updated_at) VALUES (?, ?, ?, 'QUEUED', ?)`,
)
const markCancel = query<[string, string, string, string], { order_id: string }>(
  `UPDATE venue_orders SET cancel_by = ?, not_before = 0, updated_at = ? WHERE order_id = ? AND tenant_id = ? AND state <> 'DONE' AND cancel_by IS NULL
   RETURNING order_id`,
)
const WORKING = `
  SELECT o.id, o.tenant_id, o.model_id, o.pair, o.side, o.type, o.source, o.gateway_key_id, o.alert_hook_id, o.quantity, o.notional_usd, o.limit_price, o.reference_price,
    o.filled_quantity, o.trade_id, v.exchange, v.state, v.sent_at, v.venue_order_id, v.cancel_by,
    o.stop_price, o.stop_trigger,
    EXISTS (SELECT 1 FROM order_cancellations c WHERE c.settled_at IS NULL AND c.tenant_id = o.tenant_id AND o.seq <= c.up_to
      AND (c.model_id IS NULL OR c.model_id = o.model_id)) AS fenced
  FROM venue_orders v JOIN orders o ON o.id = v.order_id`
const workingOf = query<{ tenant: string; now: number }, LiveOrder>(`${WORKING}
  WHERE v.tenant_id = @tenant AND v.state <> 'DONE' AND v.not_before <= @now
  ORDER BY o.seq`)
const workingById = query<{ tenant: string; id: string; now: number }, LiveOrder>(`${WORKING}
  WHERE v.order_id = @id AND v.tenant_id = @tenant AND v.state <> 'DONE' AND v.not_before <= @now`)
const tenantsWithWork = query<[], { tenant_id: string }>(`SELECT DISTINCT tenant_id FROM venue_orders WHERE state <> 'DONE'`)
const workingCount = query<[string], { n: number }>(`SELECT count(*) AS n FROM venue_orders WHERE tenant_id = ? AND state <> 'DONE'`)
const unknownByExchange = query<[], { exchange: string }>(`SELECT DISTINCT exchange FROM venue_orders WHERE state = 'UNKNOWN'`)
const setState = query<{
  order_id: string
  state: LiveOrder['state']
  sent_at: number | null
  venue_order_id: string | null
  last_error: string | null
  not_before: number
  at: string
}>(`UPDATE venue_orders SET state = @state, sent_at = coalesce(@sent_at, sent_at),
  venue_order_id = coalesce(@venue_order_id, venue_order_id), last_error = @last_error, not_before = @not_before, updated_at = @at
  WHERE order_id = @order_id`)

/** Whose work it is, when the change knows: the executor then runs that tenant's lane at once. */
export interface LaneHint {
  tenantId: string
  exchange?: string
  /** The order whose move the change asked for (a new order, a cancel): its caller may be waiting for the venue's answer. */
  orderId?: string
}

let notify: ((lane?: LaneHint) => void) | undefined
let signaled = false

/** The executor's ear: called after a change queued venue work (with its tenant, when known). */
export function onLiveWork(listener: ((lane?: LaneHint) => void) | undefined): void {
  notify = listener
}

/**
 * Tells the executor once `tx` has committed: a tenant's lane at once when `lane` names it (a new
 * order or cancel: the bot is waiting for the venue's answer), else a sweep of every tenant, once
 * per turn of the event loop however many changes asked. The executor's own sweep (every second)
 * is the fallback.
 */
export function signalLiveWork(tx: Tx, lane?: LaneHint): void {
  tx.afterCommit(lane ? () => notify?.(lane) : wakeExecutor)
}

function wakeExecutor(): void {
  if (!notify || signaled) return
  signaled = true
  setImmediate(() => {
    signaled = false
    notify?.()
  })
}

/** Queues a new LIVE order for the venue, in its order's transaction. */
export async function queueLiveOrder(tx: Tx, tenantId: string, orderId: string, exchange: string, now: Date): Promise<void> {
  await tx.run(insertQueued, [orderId, tenantId, exchange, now.toISOString()])
  signalLiveWork(tx, { tenantId, exchange, orderId })
}

/** Asks the executor to cancel a working LIVE order; false when it is done or a cancel is already asked. */
export async function requestLiveCancel(tx: Tx, tenantId: string, orderId: string, by: string, now: Date): Promise<boolean> {
  const marked = (await tx.get(markCancel, [by, now.toISOString(), orderId, tenantId])) !== undefined
  if (marked) signalLiveWork(tx, { tenantId, orderId })
  return marked
}

/** The tenant's working LIVE orders that are due, oldest first. */
export async function dueLiveOrders(db: Queries, tenantId: string, nowMs: number): Promise<LiveOrder[]> {
  return db.all(workingOf, { tenant: tenantId, now: nowMs })
}

/** One working LIVE order of the tenant if it is due; undefined when done, not yet due, or not the tenant's. */
export async function findDueLiveOrder(db: Queries, tenantId: string, orderId: string, nowMs: number): Promise<LiveOrder | undefined> {
  return db.get(workingById, { tenant: tenantId, id: orderId, now: nowMs })
}

export async function tenantsWithLiveWork(db: Queries): Promise<string[]> {
  return (await db.all(tenantsWithWork)).map((r) => r.tenant_id)
}

/** The exchanges that hold an order whose fate is UNKNOWN: /health shows them degraded. */
export async function exchangesWithUnknownOrders(db: Queries): Promise<string[]> {
  return (await db.all(unknownByExchange)).map((r) => r.exchange)
}

/** LIVE orders still working for a tenant (UNKNOWN ones too): DELETE /api/v1/venue waits for none. */
export async function workingLiveOrderCount(db: Queries, tenantId: string): Promise<number> {
  return (await db.get(workingCount, [tenantId]))!.n
}

export interface OutboxUpdate {
  state: LiveOrder['state']
  sentAt?: number
  venueOrderId?: string
  lastError?: string
  notBefore?: number
}

/** Moves an order's outbox row, in the transaction that moves it. */
export async function updateOutbox(tx: Tx, orderId: string, update: OutboxUpdate, now: Date): Promise<void> {
  await tx.run(setState, {
    order_id: orderId,
    state: update.state,
    sent_at: update.sentAt ?? null,
    venue_order_id: update.venueOrderId ?? null,
    last_error: update.lastError ?? null,
    not_before: update.notBefore ?? 0,
    at: now.toISOString(),
  })
  noteLiveOrderMoved(tx, orderId, update.state)
}
