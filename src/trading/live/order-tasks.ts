// What the executor does for one LIVE order, on one exchange instance: send it, cancel it, or read
// how it stands and bring the ledger up to date. Each records its outcome in its own short write()
// (a network call never runs inside a transaction). Placing and canceling are src/venues/placement.ts.
import type { Order as CcxtOrder, Trade as CcxtTrade } from 'ccxt'
import { statement, write } from '../../store/db.ts'
import { appendIncident } from '../../risk/incidents.ts'
import { evaluateBreakers } from '../../risk/breakers.ts'
import type { Exchange } from '../../venues/exchange.ts'
import { cancelOnce, placeOnce } from '../../venues/placement.ts'
import { recordMismatch } from './mismatches.ts'
import { applyVenueFill, finishLiveOrder, type VenueFill } from './live-fills.ts'
import { type LiveOrder, updateOutbox } from './outbox.ts'

const EXECUTOR_ACTOR = 'executor@localhost'
/** A try that met no answer is tried again after this (or what a 429 asked for). */
const RETRY_MS = 2000
const EPSILON = 1e-12

// What a SELL may still take out of the ledger: what is held, less what other working SELLs
// (that nobody is canceling) have yet to sell.
const heldForSale = statement<{ tenant: string; pair: string; model: string | null; id: string }, { held: number; selling: number }>(`
  SELECT (SELECT coalesce(sum(quantity), 0) FROM trades WHERE tenant_id = @tenant AND pair = @pair AND status = 'OPEN' AND mode = 'LIVE'
      AND model_id IS @model) AS held,
    (SELECT coalesce(sum(o.quantity - o.filled_quantity), 0) FROM orders o JOIN venue_orders v ON v.order_id = o.id
      WHERE o.tenant_id = @tenant AND o.pair = @pair AND o.mode = 'LIVE' AND o.side = 'SELL' AND o.status = 'PENDING'
        AND o.model_id IS @model AND o.id <> @id AND v.cancel_by IS NULL AND v.state <> 'QUEUED') AS selling`)

const pausedFor = statement<{ tenant: string; model: string | null }, { paused: number }>(`
  SELECT (SELECT trading_paused FROM risk_profiles WHERE tenant_id = @tenant)
    OR EXISTS (SELECT 1 FROM paused_models WHERE tenant_id = @tenant AND model_id = @model) AS paused`)

/** What a pass knows of the process: when it started (fills older than that were missed while down). */
export interface TaskContext {
  startedAt: number
  /** Told whether every call of a task got an answer. */
  note(ok: boolean): void
}

function fillOf(trade: CcxtTrade): VenueFill {
  return {
    id: String(trade.id),
    amount: trade.amount ?? 0,
    price: trade.price ?? 0,
    fee: trade.fee?.cost === undefined || trade.fee.currency === undefined ? undefined : { cost: trade.fee.cost, currency: trade.fee.currency },
    timestamp: trade.timestamp ?? Date.now(),
  }
}

/** Sends a QUEUED (or maybe-sent) order; paused BUYs are the caller's to hold back. */
export async function placeTask(order: LiveOrder, exchange: Exchange, context: TaskContext): Promise<void> {
  let amount = order.quantity ?? order.notional_usd! / order.reference_price
  if (order.side === 'SELL') {
    const { held, selling } = heldForSale().get({ tenant: order.tenant_id, pair: order.pair, model: order.model_id, id: order.id })!
    amount = Math.min(amount - order.filled_quantity, held - selling)
    if (amount <= EPSILON && order.state === 'QUEUED') {
      write(() => finishLiveOrder(order, { status: 'REJECTED', reason: `nothing held to sell on ${order.pair}` }, new Date()))
      return
    }
  }
  // The pass chose this order a moment ago: a pause since then holds an opening order back.
  if (order.side === 'BUY' && pausedFor().get({ tenant: order.tenant_id, model: order.model_id })!.paused) return
  const maybeSent = order.state === 'SENT'
  const sentAt = maybeSent ? (order.sent_at ?? undefined) : Date.now()
  if (!maybeSent) write(() => updateOutbox(order.id, { state: 'SENT', sentAt }, new Date()))
  const placement = await placeOnce(
    exchange,
    {
      symbol: order.pair,
      side: order.side === 'BUY' ? 'buy' : 'sell',
      type: order.type === 'MARKET' ? 'market' : 'limit',
      amount: Math.max(amount, 0),
      ...(order.limit_price === null ? { referencePrice: order.reference_price } : { price: order.limit_price }),
      clientOrderId: order.id,
    },
    { maybeSent, sentAt, attempts: 3, backoffMs: 500, maxWaitMs: 5000 },
  )
  context.note(!placement.unanswered)
  const now = new Date()
  if (placement.outcome === 'rejected') {
    write(() => finishLiveOrder(order, { status: 'REJECTED', reason: placement.reason ?? 'refused by the venue' }, now))
    return
  }
  if (placement.outcome === 'unknown') {
    const notBefore = Date.now() + (placement.retryAfterMs ?? RETRY_MS)
    write(() => updateOutbox(order.id, { state: 'SENT', lastError: placement.reason, notBefore }, now))
    return
  }
  await syncTask(order, exchange, context, placement.venueOrder)
}

/** Cancels a working order on the venue (one never sent is canceled here) and records how it ended. */
export async function cancelTask(order: LiveOrder, exchange: Exchange, context: TaskContext): Promise<void> {
  const by = order.cancel_by!
  if (order.state === 'QUEUED') {
    write(() => finishLiveOrder(order, { status: 'CANCELED', by }, new Date()))
    return
  }
  const result = await cancelOnce(
    exchange,
    { symbol: order.pair, clientOrderId: order.id },
    { sentAt: order.sent_at ?? undefined, attempts: 3, backoffMs: 500 },
  )
  context.note(!result.unanswered)
  if (result.outcome === 'unknown') {
    write(() => updateOutbox(order.id, { state: order.state, lastError: result.reason, notBefore: Date.now() + (result.retryAfterMs ?? RETRY_MS) }, new Date()))
    return
  }
  if (!result.venueOrder) {
    write(() => finishLiveOrder(order, { status: 'CANCELED', by }, new Date())) // the venue never had it
    return
  }
  await syncTask(order, exchange, context, result.venueOrder)
}

/**
 * Reads the order on the venue (or takes the answer a call just gave), applies the fills the ledger
 * lacks, and ends the order when the venue has: FILLED, or CANCELED with what it filled.
 */
export async function syncTask(order: LiveOrder, exchange: Exchange, context: TaskContext, known?: CcxtOrder): Promise<void> {
  let venueOrder = known
  let ok = true
  try {
    venueOrder ??= await exchange.fetchOrder('', order.pair, { clientOrderId: order.id })
    const filled = venueOrder.filled ?? 0
    const fills = filled > order.filled_quantity + EPSILON ? (await exchange.fetchOrderTrades(String(venueOrder.id), order.pair)).map(fillOf) : []
    write(() => recordSync(order, venueOrder!, fills, context.startedAt))
  } catch (error) {
    ok = false
    const reason = error instanceof Error ? error.message.replace(/\?\S*/g, '') : String(error)
    write(() => updateOutbox(order.id, { state: order.state, lastError: reason, notBefore: Date.now() + RETRY_MS }, new Date()))
  }
  context.note(ok)
}

function recordSync(order: LiveOrder, venueOrder: CcxtOrder, fills: VenueFill[], startedAt: number): void {
  const now = new Date()
  let recorded = order.filled_quantity
  for (const fill of fills) {
    if (!applyVenueFill(order, fill, now)) continue
    recorded += fill.amount
    if (fill.timestamp < startedAt) {
      recordMismatch(order.tenant_id, `fill:${fill.id}`, now, {
        kind: 'missed_fill',
        pair: order.pair,
        venue_order_id: String(venueOrder.id),
        detail: `fill ${fill.id} of order ${order.id} (${venueOrder.id} on the venue): ${fill.amount} ${order.pair} at ${fill.price}, made while Bulwark was not running`,
      })
    }
  }
  // A fill changes equity: the breakers look at once, as after a paper fill.
  if (recorded > order.filled_quantity) evaluateBreakers(order.tenant_id, now)
  const filled = venueOrder.filled ?? 0
  const status = venueOrder.status
  updateOutbox(order.id, { state: 'OPEN', venueOrderId: String(venueOrder.id) }, now)
  // The venue may report the order's end before every fill of it can be read: wait for them.
  if (status === 'open' || recorded + EPSILON < filled) return
  if (status === 'closed') {
    finishLiveOrder(order, { status: 'FILLED' }, now)
    if (order.cancel_by?.startsWith('inc_')) {
      appendIncident({
        tenantId: order.tenant_id,
        action: 'VENUE_CANCEL_INCOMPLETE',
        actor: EXECUTOR_ACTOR,
        status: 'RECORDED',
        modelId: order.model_id ?? undefined,
        reason: `order ${order.id} (${venueOrder.id} on the venue, ${order.side} ${order.pair}) filled ${filled} before the cancel of incident ${order.cancel_by} arrived`,
        now,
      })
    }
    return
  }
  if (status === 'rejected' && filled === 0) finishLiveOrder(order, { status: 'REJECTED', reason: 'rejected by the venue' }, now)
  else finishLiveOrder(order, { status: 'CANCELED', by: order.cancel_by ?? 'venue' }, now)
}
