// The life of one LIVE order on its venue (SPEC 10), in one place. The ledger's orders row stays
// PENDING while the order works and ends FILLED, CANCELED or REJECTED; its outbox row (venue_orders,
// ./outbox.ts) says where it stands on the venue. The executor (./executor.ts) only picks which
// orders are due and hands each to one of the three moves below, on one ccxt instance.
//
//   QUEUED ──send──> SENT ──the venue holds it──> OPEN ──fills, filled or canceled──> DONE
//     │               │ │                                                   ^
//     │               │ └─no answer, and no lookup answers for recvWindow + 10 s──> UNKNOWN ──found──┘
//     │               └─refused: the venue's code, the market's minimum, -1021 after a clock resync──> DONE (REJECTED)
//     └─a cancel asked before it went──> DONE (CANCELED)
//   OPEN, SENT or UNKNOWN ──a cancel asked (cancel_by)──> cancel on the venue ──> DONE (CANCELED, or FILLED first)
//
// What moves an order, and what each move writes (each in its own short store.write(), committed
// before the venue is called: a network call never runs inside a transaction):
// - send (QUEUED, SENT, UNKNOWN and no cancel asked): SENT with sent_at before the first send goes
//   out, so a crash mid-send is looked up, never resent blind (venues/placement.ts placeOnce). A BUY
//   is held back while its fleet or model is paused, checked again right before each send. Then the
//   venue's answer: the order is synced (below); a refusal is REJECTED with the venue's reason;
//   no answer keeps it SENT, or UNKNOWN past recvWindow + 10 s, and the next pass looks it up again.
// - cancel (cancel_by set): a QUEUED order is CANCELED at once; any other is canceled on the venue
//   (venues/placement.ts cancelOnce) and synced with what the venue says it was.
// - sync (OPEN every poll, or right after a send or a cancel answered): the venue's fills the ledger
//   lacks are applied (./live-fills.ts: the trade opened, grown or closed, its fees), the breakers
//   look at the new equity, and the order ends when the venue's order has: FILLED, or CANCELED with
//   what it filled (VENUE_CANCEL_INCOMPLETE when a fill beat a kill switch's cancel).
import type { Order as CcxtOrder } from 'ccxt'
import { query, type Queries, type Store, type Tx } from '../../store/store.ts'
import { appendIncident } from '../../risk/incidents.ts'
import { evaluateBreakers } from '../../risk/breakers.ts'
import { isPaused } from '../../risk/pauses.ts'
import { type Exchange, failureText } from '../../venues/exchange.ts'
import { withVenueClock } from '../../venues/sessions.ts'
import { cancelOnce, type OrderToPlace, placeOnce, quoteQuantityOrders } from '../../venues/placement.ts'
import { exitReasonOf } from '../fills.ts'
import { writeOffDust } from './dust.ts'
import { protectionDue, protectionOnVenue } from '../protection/store.ts'
import { recordMismatch } from './mismatches.ts'
import { applyVenueFill, fillOf, finishLiveOrder, type VenueFill } from './live-fills.ts'
import { type LiveOrder, updateOutbox } from './outbox.ts'
import { fillsAddUpTo, relayVenueAnswer, venueAnswerOf } from './order-watch.ts'

const EXECUTOR_ACTOR = 'executor@localhost'
/** A try that met no answer is tried again after this (or what a 429 asked for). */
const RETRY_MS = 2000
/** An order sent this long past the venue's recvWindow and still not found is shown UNKNOWN. */
const UNKNOWN_AFTER_MS = 10_000
const EPSILON = 1e-12

// What a SELL may still take out of the ledger: what is held, less what other working SELLs
// (that nobody is canceling) have yet to sell; a gateway key's SELL, of that key's (SPEC 14).
const heldForSale = query<{ tenant: string; pair: string; model: string | null; key: string | null; id: string }, { held: number; selling: number }>(`
  SELECT (SELECT coalesce(sum(quantity), 0) FROM trades WHERE tenant_id = @tenant AND pair = @pair AND status = 'OPEN' AND mode = 'LIVE'
      AND model_id IS NOT DISTINCT FROM @model AND (CAST(@key AS TEXT) IS NULL OR gateway_key_id = @key)) AS held,
    (SELECT coalesce(sum(o.quantity - o.filled_quantity), 0) FROM orders o JOIN venue_orders v ON v.order_id = o.id
      WHERE o.tenant_id = @tenant AND o.pair = @pair AND o.mode = 'LIVE' AND o.side = 'SELL' AND o.status = 'PENDING'
        AND o.model_id IS NOT DISTINCT FROM @model AND (CAST(@key AS TEXT) IS NULL OR o.gateway_key_id = @key)
        AND o.id <> @id AND v.cancel_by IS NULL AND v.state <> 'QUEUED') AS selling`)

/** What a move knows of its pass: the process's start, the venue's clock, and how the calls went. */
export interface MoveContext {
  /** When this process started: fills older than that were missed while it was down. */
  startedAt: number
  /** Sets the session's clock by the venue's (after a -1021). */
  resyncClock: () => Promise<void>
  /** Told whether every call of a move got an answer. */
  note(ok: boolean): void
}

/**
 * The order as the venue is asked for it: a MARKET BUY sized in USD spends exactly that (a quote
 * quantity where the venue has them, else its quantity at the venue's price now); a SELL never more
 * than is held. Undefined when nothing is left to sell.
 */
async function requestOf(db: Queries, order: LiveOrder, exchange: Exchange): Promise<OrderToPlace | undefined> {
  const base = { symbol: order.pair, side: order.side === 'BUY' ? ('buy' as const) : ('sell' as const), clientOrderId: order.id }
  // A stop or take-profit (a bot's, SPEC 14) rests until its trigger: a MARKET one's cost is checked there.
  const trigger = order.stop_trigger === null ? undefined : { kind: order.stop_trigger, price: order.stop_price! }
  const priced =
    order.limit_price === null
      ? { type: 'market' as const, referencePrice: trigger?.price ?? order.reference_price, trigger }
      : { type: 'limit' as const, price: order.limit_price, trigger }
  if (order.side === 'SELL') {
    const scope = { tenant: order.tenant_id, pair: order.pair, model: order.model_id, key: order.gateway_key_id, id: order.id }
    const { held, selling } = (await db.get(heldForSale, scope))!
    const amount = Math.min(order.quantity! - order.filled_quantity, held - selling)
    return amount <= EPSILON ? undefined : { ...base, ...priced, amount }
  }
  if (order.quantity !== null) return { ...base, ...priced, amount: order.quantity }
  const notional = order.notional_usd!
  if (order.limit_price !== null) return { ...base, ...priced, amount: notional / order.limit_price }
  if (quoteQuantityOrders(exchange)) return { ...base, ...priced, amount: notional / order.reference_price, cost: notional }
  const ticker = await exchange.fetchTicker(order.pair)
  const price = ticker.last ?? order.reference_price
  return { ...base, type: 'market', referencePrice: price, amount: notional / price }
}

/**
 * Sends a QUEUED (or maybe-sent) order: the move "send" above. Reads what is committed
 * (store.read); each write is its own store.write(), and the venue is called between them.
 */
export async function sendOrder(store: Store, queued: LiveOrder, exchange: Exchange, context: MoveContext): Promise<void> {
  let order = queued
  const maySend = async () => order.side === 'SELL' || !(await isPaused(store.read, order.tenant_id, order.model_id))
  if (order.state === 'QUEUED' && !(await maySend())) return
  // The pair's protection locks what it protects: this SELL goes once the pass has canceled it.
  if (order.side === 'SELL' && order.state === 'QUEUED' && (await protectionOnVenue(store.read, order.tenant_id, order.pair))) {
    return store.write((tx) => updateOutbox(tx, order.id, { state: 'QUEUED', notBefore: Date.now() + RETRY_MS }, new Date()))
  }
  let request: OrderToPlace | undefined
  try {
    request = await requestOf(store.read, order, exchange)
  } catch (error) {
    context.note(false)
    await store.write((tx) => retryLater(tx, order, failureText(error)))
    return
  }
  if (!request) {
    if (order.state === 'QUEUED')
      await store.write((tx) => finishLiveOrder(tx, order, { status: 'REJECTED', reason: `nothing held to sell on ${order.pair}` }, new Date()))
    return
  }
  const maybeSent = order.state !== 'QUEUED'
  const sentAt = maybeSent ? (order.sent_at ?? undefined) : Date.now()
  if (!maybeSent) {
    // Committed before the venue is called (placeOnce runs outside any transaction).
    await store.write((tx) => updateOutbox(tx, order.id, { state: 'SENT', sentAt }, new Date()))
    // From here on it may be on the venue: every later move starts with the lookup, never a blind resend.
    order = { ...order, state: 'SENT', sent_at: sentAt ?? null }
  }
  const placement = await placeOnce(exchange, request, {
    maybeSent,
    sentAt,
    maySend,
    resyncClock: context.resyncClock,
    attempts: 3,
    backoffMs: 500,
    maxWaitMs: 5000,
  })
  context.note(!placement.unanswered)
  const now = new Date()
  if (placement.outcome === 'held') return store.write((tx) => updateOutbox(tx, order.id, { state: 'QUEUED' }, now))
  if (placement.outcome === 'rejected') {
    return store.write(async (tx) => {
      await finishLiveOrder(tx, order, { status: 'REJECTED', reason: placement.reason ?? 'refused by the venue' }, now)
      // A sale the market refuses for its size may be all that is left: then it is dust.
      if (order.side === 'SELL')
        await writeOffDust(tx, order.tenant_id, order.exchange, order.pair, order.model_id, order.reference_price, exitReasonOf(order.source), now)
    })
  }
  if (placement.outcome === 'unknown') return store.write((tx) => retryLater(tx, order, placement.reason, placement.retryAfterMs, exchange, sentAt))
  await syncOrder(store, order, exchange, context, placement.venueOrder)
}

/**
 * Keeps a sent order for the next lookup: SENT, or UNKNOWN once it has gone unanswered for longer
 * than the venue's recvWindow + 10 s (a request can no longer land then, but only the venue knows).
 */
async function retryLater(
  tx: Tx,
  order: LiveOrder,
  reason: string | undefined,
  retryAfterMs?: number,
  exchange?: Exchange,
  sentAt = order.sent_at ?? undefined,
): Promise<void> {
  const recvWindow = Number(exchange?.options?.recvWindow) || 5000
  // QUEUED never left and OPEN is held by the venue: both stay as they are. A sent one is lost
  // (UNKNOWN) past its window, and time only moves on: UNKNOWN stays UNKNOWN until the venue answers.
  const sent = order.state === 'SENT' || order.state === 'UNKNOWN'
  const lost = sent && sentAt !== undefined && Date.now() - sentAt > recvWindow + UNKNOWN_AFTER_MS
  const state = lost ? 'UNKNOWN' : order.state
  await updateOutbox(tx, order.id, { state, lastError: reason, notBefore: Date.now() + (retryAfterMs ?? RETRY_MS) }, new Date())
}

/** Cancels a working order on the venue (one never sent is canceled here): the move "cancel" above. */
export async function cancelOnVenue(store: Store, order: LiveOrder, exchange: Exchange, context: MoveContext): Promise<void> {
  const by = order.cancel_by!
  if (order.state === 'QUEUED') return store.write((tx) => finishLiveOrder(tx, order, { status: 'CANCELED', by }, new Date()))
  const result = await cancelOnce(
    exchange,
    { symbol: order.pair, clientOrderId: order.id },
    { sentAt: order.sent_at ?? undefined, attempts: 3, backoffMs: 500, resyncClock: context.resyncClock },
  )
  context.note(!result.unanswered)
  if (result.outcome === 'unknown') return store.write((tx) => retryLater(tx, order, result.reason, result.retryAfterMs, exchange))
  // The venue never had it.
  if (!result.venueOrder) return store.write((tx) => finishLiveOrder(tx, order, { status: 'CANCELED', by }, new Date()))
  await syncOrder(store, order, exchange, context, result.venueOrder)
}

/**
 * Reads the order on the venue (or takes the answer a call just gave), applies the fills the ledger
 * lacks, and ends the order when the venue has: the move "sync" above.
 */
export async function syncOrder(store: Store, order: LiveOrder, exchange: Exchange, context: MoveContext, known?: CcxtOrder): Promise<void> {
  let venueOrder = known
  let ok = true
  try {
    const onClock = <T>(call: () => Promise<T>) => withVenueClock(call, context.resyncClock)
    venueOrder ??= await onClock(() => exchange.fetchOrder('', order.pair, { clientOrderId: order.id }))
    const found = venueOrder
    const filled = found.filled ?? 0
    const owed = filled > order.filled_quantity + EPSILON
    const fills = owed ? (fillsInAnswer(found) ?? (await onClock(() => exchange.fetchOrderTrades(String(found.id), order.pair))).map(fillOf)) : []
    const answer = venueAnswerOf(found, fills)
    await store.write(async (tx) => {
      if (answer) await relayVenueAnswer(tx, order.id, answer)
      return recordSync(tx, order, found, fills, context.startedAt)
    })
  } catch (error) {
    ok = false
    await store.write((tx) => retryLater(tx, order, failureText(error), undefined, exchange))
  }
  context.note(ok)
}

/**
 * The fills a placement's answer carried (Binance's FULL answer lists them), when they are all of
 * what the order filled: then no second call asks the venue for them.
 */
function fillsInAnswer(venueOrder: CcxtOrder): VenueFill[] | undefined {
  const trades = venueOrder.trades ?? []
  if (trades.length === 0 || trades.some((t) => t.id === undefined || !(Number(t.amount) > 0))) return undefined
  const fills = trades.map((t) => fillOf({ ...t, timestamp: t.timestamp ?? venueOrder.timestamp ?? Date.now() }))
  return fillsAddUpTo(fills, venueOrder.filled ?? 0) ? fills : undefined
}

async function recordSync(tx: Tx, order: LiveOrder, venueOrder: CcxtOrder, fills: VenueFill[], startedAt: number): Promise<void> {
  const now = new Date()
  let recorded = order.filled_quantity
  for (const fill of fills) {
    if (!(await applyVenueFill(tx, order, fill, now))) continue
    recorded += fill.amount
    if (fill.timestamp < startedAt) {
      await recordMismatch(tx, order.tenant_id, `fill:${fill.id}`, now, {
        kind: 'missed_fill',
        pair: order.pair,
        venue_order_id: String(venueOrder.id),
        detail: `fill ${fill.id} of order ${order.id} (${venueOrder.id} on the venue): ${fill.amount} ${order.pair} at ${fill.price}, made while Bulwark was not running`,
      })
    }
  }
  // A fill changes equity: the breakers look at once, as after a paper fill.
  if (recorded > order.filled_quantity) await evaluateBreakers(tx, order.tenant_id, now)
  const filled = venueOrder.filled ?? 0
  const status = venueOrder.status
  await updateOutbox(tx, order.id, { state: 'OPEN', venueOrderId: String(venueOrder.id) }, now)
  // A SELL now resting on the venue holds its coins: the pair's protection covers the rest (SPEC 13).
  if (order.side === 'SELL' && order.state !== 'OPEN' && status === 'open') await protectionDue(tx, order.tenant_id, order.pair, now)
  // The venue may report the order's end before every fill of it can be read: wait for them.
  if (status === 'open' || recorded + EPSILON < filled) return
  if (status === 'closed') {
    await finishLiveOrder(tx, order, { status: 'FILLED' }, now)
    if (order.cancel_by?.startsWith('inc_')) {
      await appendIncident(tx, {
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
  if (status === 'rejected' && filled === 0) await finishLiveOrder(tx, order, { status: 'REJECTED', reason: 'rejected by the venue' }, now)
  else await finishLiveOrder(tx, order, { status: 'CANCELED', by: order.cancel_by ?? 'venue' }, now)
}
