// Keeping one pair's protection right (SPEC 13): the executor hands each due row here (./store.ts),
// on one ccxt instance. A row moves through its phases, each step written before the next venue call,
// so a crash anywhere leaves a row that says what to look up:
//
//   IDLE ──plan──> SENT ──the venue holds it──> RESTING ──a leg filled──> IDLE (VENUE_PROTECTION_FILLED)
//    │  │            └─refused──> IDLE, FAILED (VENUE_PROTECTION_FAILED; FLATTEN: a sale)
//    │  └─nothing to protect──> IDLE, NONE       RESTING ──canceled by hand──> IDLE (mismatch), placed again
//    └─a take-profit crossed without OCO──┐      RESTING ──no longer the plan (the position, the profile, a SELL)──> canceled, IDLE
//                                         v      RESTING ──a stop-limit triggered 10 s ago, unfilled──> canceled, SELLING (REPLACED)
//                                      SELLING ──done──> IDLE
import type { Order as CcxtOrder } from 'ccxt'
import type { Store, Tx } from '../../store/store.ts'
import type { Exchange } from '../../venues/exchange.ts'
import { findFreshMark } from '../../venues/marks.ts'
import { cancelOnce, placeOnce } from '../../venues/placement.ts'
import { VenueCalls } from '../../venues/placement-calls.ts'
import { noteRateLimited } from '../../venues/weight.ts'
import type { ExitReason } from '../fills.ts'
import { recordMismatch } from '../live/mismatches.ts'
import { applyProtectionFills, describe, recordProtectionFailed, recordProtectionFilled, recordProtectionReplaced } from './ledger.ts'
import { type Plan, planFor, positionOf, samePlan, termsOf } from './plan.ts'
import { legClientId, NEVER, type ProtectionRow, type SaleReason, saveProtection } from './store.ts'
import { fillsOf, type LegState, ProtectionCallError, readLegs, sendPlan, triggeredAt } from './venue.ts'

const RETRY_MS = 2000
/** A refused protection is tried again after this (reconciliation's minute). */
const FAILED_RETRY_MS = 60_000
/** A stop-limit triggered this long ago and not filled: the price gapped through its limit. */
const GAPPED_AFTER_MS = 10_000
/** A mark older than this is no reason to sell at a take-profit (risk/marks.ts calls it stale). */
const MARK_MAX_AGE_MS = 180_000

export interface ProtectionContext {
  resyncClock: () => Promise<void>
  note(ok: boolean): void
  /** This pass's read of the tenant's open orders, by client order id (the poll); absent: each leg is read. */
  openOrders?: Map<string, CcxtOrder>
}

type Step = ProtectionRow | undefined

/**
 * Looks at one protection and moves it as far as it can go now: each phase written in its own
 * store.write, every venue call outside any transaction.
 */
export async function tendProtection(store: Store, row: ProtectionRow, exchange: Exchange, context: ProtectionContext): Promise<void> {
  const calls = await VenueCalls.open(exchange, { resyncClock: context.resyncClock, attempts: 2, backoffMs: 250, maxWaitMs: 5000 })
  const tender = new Tender(store, exchange, calls, context)
  let current: Step = row
  try {
    // A look may end in a cancel and a placement: a few steps, each written before its venue call.
    for (let step = 0; current && step < 6; step++) {
      const at: ProtectionRow = current
      current = await tender.step(at)
      if (current) row = current
    }
  } catch (error) {
    if (!(error instanceof ProtectionCallError)) throw error
    // A 429 asked everyone to wait: so does this row, and every watching read of the exchange.
    const wait = error.failure.kind === 'limited' ? error.failure.waitMs : RETRY_MS
    if (error.failure.kind === 'limited') noteRateLimited(exchange.id, wait)
    await save(store, row, { last_error: error.message, due_at: Date.now() + Math.max(wait, RETRY_MS) })
  } finally {
    context.note(!calls.unanswered)
  }
}

/** Writes the row with `change` (and what `also` records with it) in one transaction; returns the row written. */
async function save(
  store: Store,
  row: ProtectionRow,
  change: Partial<ProtectionRow>,
  also?: (tx: Tx, next: ProtectionRow, now: Date) => Promise<void>,
): Promise<ProtectionRow> {
  const next = { ...row, ...change }
  const now = new Date()
  await store.write(async (tx) => {
    await saveProtection(tx, next, now)
    await also?.(tx, next, now)
  })
  return next
}

const NOTHING = { kind: null, quantity: null, stop_price: null, stop_limit_price: null, take_profit_price: null, venue_order_ids: '[]' } as const

class Tender {
  constructor(
    private readonly store: Store,
    private readonly exchange: Exchange,
    private readonly calls: VenueCalls,
    private readonly context: ProtectionContext,
  ) {}

  private save(row: ProtectionRow, change: Partial<ProtectionRow>, also?: (tx: Tx, next: ProtectionRow, now: Date) => Promise<void>): Promise<ProtectionRow> {
    return save(this.store, row, change, also)
  }

  step(row: ProtectionRow): Promise<Step> {
    if (row.phase === 'SENT') return this.sent(row)
    if (row.phase === 'RESTING') return this.resting(row)
    if (row.phase === 'SELLING') return this.selling(row)
    return this.idle(row)
  }

  private async plan(row: ProtectionRow): Promise<Plan | undefined> {
    const loaded = await this.calls.run(() => this.exchange.loadMarkets())
    if (!loaded.ok) throw new ProtectionCallError(loaded.failure)
    const db = this.store.read
    return planFor(this.exchange, row.pair, await positionOf(db, row.tenant_id, row.pair), await termsOf(db, row.tenant_id))
  }

  /** Where no OCO rests, Bulwark sells itself once the venue's mark reaches the take-profit. */
  private async takeProfitReached(row: ProtectionRow, plan: Plan | undefined): Promise<boolean> {
    if (!plan?.sellAtTakeProfit || plan.take_profit_price === null) return false
    const mark = await findFreshMark(this.store.read, row.tenant_id, row.pair, MARK_MAX_AGE_MS, new Date())
    return mark !== undefined && mark >= plan.take_profit_price
  }

  private async idle(row: ProtectionRow): Promise<Step> {
    const plan = await this.plan(row)
    if (!plan) {
      await this.save(row, { ...NOTHING, status: 'NONE', due_at: NEVER, last_error: null })
      return undefined
    }
    const { sellAtTakeProfit: _, ...planned } = plan
    if (await this.takeProfitReached(row, plan)) return this.sell({ ...row, ...planned }, 'venue_take_profit')
    const placing = await this.save(row, {
      ...planned,
      seq: row.seq + 1,
      phase: 'SENT',
      status: row.status === 'FAILED' ? 'FAILED' : 'PLACING',
      sale_reason: null,
      venue_order_ids: '[]',
      sent_at: Date.now(),
      due_at: Date.now() + RETRY_MS,
    })
    const placed = await sendPlan(this.calls, this.exchange, row.tenant_id, row.pair, placing.seq, plan)
    if (placed.ok) {
      // From here the poll reads it (./poll.ts): only the ledger makes a resting protection due.
      await this.save(placing, { phase: 'RESTING', status: 'RESTING', venue_order_ids: JSON.stringify(placed.venueOrderIds), due_at: NEVER, last_error: null })
      return undefined
    }
    const { failure } = placed
    if (failure.kind === 'refused' && !failure.duplicate) return this.refused(placing, failure.reason)
    // Nothing reached the venue: placed afresh when due. Anything else may be there: looked up first.
    const unsent = failure.kind === 'unsent' || failure.kind === 'limited' || failure.kind === 'skew'
    const wait = failure.kind === 'limited' ? failure.waitMs : RETRY_MS
    await this.save(placing, { phase: unsent ? 'IDLE' : 'SENT', last_error: failure.reason, due_at: Date.now() + wait })
    return undefined
  }

  private async refused(row: ProtectionRow, reason: string): Promise<Step> {
    const first = row.status !== 'FAILED'
    const failed = await this.save(
      row,
      { phase: 'IDLE', status: 'FAILED', last_error: reason, due_at: Date.now() + FAILED_RETRY_MS },
      async (tx, next, now) => {
        if (first) await recordProtectionFailed(tx, next, reason, now)
      },
    )
    return (await termsOf(this.store.read, row.tenant_id)).unprotectedAction === 'FLATTEN' ? this.sell(failed, 'flatten') : undefined
  }

  private async sent(row: ProtectionRow): Promise<Step> {
    const legs = await readLegs(this.calls, row)
    if (legs.some((l) => 'missing' in l)) {
      // An OCO list is placed whole or not at all; a single order was not placed.
      return this.save(row, { phase: 'IDLE', due_at: 0 })
    }
    const ids = legs.map((l) => ('order' in l ? String(l.order.id) : ''))
    return this.save(row, { phase: 'RESTING', status: 'RESTING', venue_order_ids: JSON.stringify(ids), last_error: null })
  }

  private async resting(row: ProtectionRow): Promise<Step> {
    const legs = (await readLegs(this.calls, row, this.context.openOrders)).filter((l): l is Extract<LegState, { order: CcxtOrder }> => 'order' in l)
    await this.applyFills(row, legs)
    const done = legs.find((l) => l.order.status === 'closed')
    const open = legs.filter((l) => l.order.status === 'open')
    if (done || open.length === 0) return this.ended(row, legs)
    const gapped = open.find((l) => triggeredAt(l.order) !== undefined)
    if (gapped) {
      const at = triggeredAt(gapped.order)!
      if (Date.now() - at < GAPPED_AFTER_MS) {
        await this.save(row, { due_at: at + GAPPED_AFTER_MS })
        return undefined
      }
      const ended = await this.cancelLegs(row, [gapped])
      if (ended) return ended
      await this.save(row, {}, (tx, next, now) => recordProtectionReplaced(tx, next, String(gapped.order.id), at, now))
      return this.sell(row, 'venue_stop')
    }
    const plan = await this.plan(row)
    const sellNow = await this.takeProfitReached(row, plan)
    if (plan && !sellNow && samePlan(row, plan)) {
      await this.save(row, { due_at: NEVER })
      return undefined
    }
    // No longer what should rest (or a take-profit to sell at): off the venue first, so its balance is free.
    const ended = await this.cancelLegs(row, open)
    if (ended) return ended
    if (sellNow) return this.sell(row, 'venue_take_profit')
    return this.save(row, { ...NOTHING, phase: 'IDLE', status: 'NONE', due_at: 0 })
  }

  /** Cancels open legs; when one of them filled first, the protection ended that way (the next step). */
  private async cancelLegs(row: ProtectionRow, legs: Extract<LegState, { order: CcxtOrder }>[]): Promise<Step> {
    const ended: Extract<LegState, { order: CcxtOrder }>[] = []
    for (const leg of legs) {
      const result = await cancelOnce(
        this.exchange,
        { symbol: row.pair, clientOrderId: leg.clientOrderId },
        { attempts: 2, backoffMs: 250, resyncClock: this.context.resyncClock },
      )
      if (result.outcome === 'unknown') throw new ProtectionCallError({ kind: 'unknown', reason: result.reason ?? 'the cancel got no answer' })
      if (result.venueOrder) ended.push({ ...leg, order: result.venueOrder })
    }
    await this.applyFills(row, ended)
    return ended.some((l) => (l.order.filled ?? 0) > 0) ? this.ended(row, ended) : undefined
  }

  /** The placement is over on the venue: filled (in whole or in part), or canceled there by hand. */
  private ended(row: ProtectionRow, legs: Extract<LegState, { order: CcxtOrder }>[]): Promise<ProtectionRow> {
    const filled = legs.find((l) => (l.order.filled ?? 0) > 0)
    return this.save(row, { ...NOTHING, phase: 'IDLE', status: 'PLACING', due_at: 0 }, async (tx, _next, now) => {
      if (filled) return recordProtectionFilled(tx, row, String(filled.order.id), `${filled.leg === 's' ? 'stop' : 'take-profit'} of ${describe(row)}`, now)
      const ids = legs.map((l) => l.order.id).join(', ')
      await recordMismatch(tx, row.tenant_id, `protection:${legs[0]?.clientOrderId ?? row.seq}`, now, {
        kind: 'missing_protection',
        pair: row.pair,
        venue_order_id: legs[0] ? String(legs[0].order.id) : null,
        detail: `the protection of ${row.pair} (${describe(row)}; ${row.exchange} order ${ids || 'not found'}) is no longer on the venue, canceled there by hand; placed again`,
      })
    })
  }

  private async applyFills(row: ProtectionRow, legs: Extract<LegState, { order: CcxtOrder }>[]): Promise<void> {
    for (const leg of legs) {
      const fills = await fillsOf(this.calls, this.exchange, leg.order, row.pair)
      if (fills.length === 0) continue
      const stop = leg.leg === 's'
      const reason: ExitReason = stop ? 'venue_stop' : 'venue_take_profit'
      const reference = (stop ? row.stop_price : row.take_profit_price) ?? fills[0].price
      await this.store.write((tx) => applyProtectionFills(tx, row, String(leg.order.id), fills, reason, reference, new Date()))
    }
  }

  /** A market sale of what is held, standing in for the protection (or, for FLATTEN, for none). */
  private async sell(row: ProtectionRow, reason: SaleReason): Promise<Step> {
    const position = await positionOf(this.store.read, row.tenant_id, row.pair)
    if (position.quantity <= 0) return this.save(row, { ...NOTHING, phase: 'IDLE', due_at: 0 })
    const selling = await this.save(row, {
      seq: row.seq + 1,
      phase: 'SELLING',
      kind: 'SALE',
      quantity: position.quantity,
      sale_reason: reason,
      sent_at: Date.now(),
      due_at: Date.now() + RETRY_MS,
    })
    const mark = (await findFreshMark(this.store.read, row.tenant_id, row.pair, MARK_MAX_AGE_MS, new Date())) ?? position.entry
    const order = { symbol: row.pair, side: 'sell' as const, type: 'market' as const, amount: position.quantity, referencePrice: mark }
    const placement = await placeOnce(
      this.exchange,
      { ...order, clientOrderId: legClientId(row.tenant_id, row.pair, selling.seq, 'm') },
      { resyncClock: this.context.resyncClock, attempts: 3, backoffMs: 500, maxWaitMs: 5000 },
    )
    if (placement.outcome === 'placed') return selling
    // Refused: tried again when due; without an answer: looked up first.
    const refused = placement.outcome === 'rejected'
    await this.save(selling, {
      phase: refused ? 'IDLE' : 'SELLING',
      last_error: placement.reason ?? null,
      due_at: Date.now() + (refused ? FAILED_RETRY_MS : RETRY_MS),
    })
    return undefined
  }

  private async selling(row: ProtectionRow): Promise<Step> {
    const clientOrderId = legClientId(row.tenant_id, row.pair, row.seq, 'm')
    const look = await this.calls.lookUp(row.pair, clientOrderId, row.sent_at ?? undefined)
    if ('failed' in look) throw new ProtectionCallError(look.failed)
    if ('missing' in look) return this.save(row, { ...NOTHING, phase: 'IDLE', due_at: 0 })
    const order = look.found
    const fills = await fillsOf(this.calls, this.exchange, order, row.pair)
    const reason = row.sale_reason ?? 'flatten'
    const reference = (reason === 'venue_stop' ? row.stop_price : reason === 'venue_take_profit' ? row.take_profit_price : null) ?? fills[0]?.price ?? 0
    if (fills.length > 0) await this.store.write((tx) => applyProtectionFills(tx, row, String(order.id), fills, reason, reference, new Date()))
    if (order.status === 'open') {
      await this.save(row, { due_at: Date.now() + 1000 })
      return undefined
    }
    return this.save(row, { ...NOTHING, phase: 'IDLE', sale_reason: null, due_at: 0 })
  }
}
