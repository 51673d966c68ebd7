// The venue calls of a protection (SPEC 13), through ccxt: a stop (STOP_LOSS, or STOP_LOSS_LIMIT where
// the market lacks stop-market orders), a take-profit (a LIMIT sell), or both as one OCO list (Binance
// spot's POST /api/v3/orderList/oco, which ccxt reaches only through its raw method); each leg named
// by a client order id derived from (tenant, pair, seq) (./store.ts), so that a placement whose
// answer was lost is looked up, never sent twice.
import type { Order as CcxtOrder } from 'ccxt'
import type { Exchange } from '../../venues/exchange.ts'
import type { Failure, VenueCalls } from '../../venues/placement-calls.ts'
import { fillOf, type VenueFill } from '../live/live-fills.ts'
import type { Plan } from './plan.ts'
import { legClientId, type ProtectionRow } from './store.ts'

export type Leg = 's' | 't'

/** The legs a placement of this kind rests as. */
export function legsOf(kind: ProtectionRow['kind']): Leg[] {
  if (kind === 'OCO') return ['s', 't']
  return kind === 'TAKE_PROFIT' ? ['t'] : kind === 'STOP' || kind === 'STOP_LIMIT' ? ['s'] : []
}

export type Placed = { ok: true; venueOrderIds: string[] } | { ok: false; failure: Failure }

/** Sends the placement `seq` of `plan`; what the venue answered. */
export async function sendPlan(calls: VenueCalls, exchange: Exchange, tenantId: string, pair: string, seq: number, plan: Plan): Promise<Placed> {
  const id = (leg: 's' | 't' | 'l') => legClientId(tenantId, pair, seq, leg)
  const text = (n: number) => exchange.numberToString(n) as string
  if (plan.kind === 'OCO') {
    const market = exchange.markets![pair]
    const stopLimit = plan.stop_limit_price !== null
    const sent = await calls.run(() =>
      (
        exchange as unknown as { privatePostOrderListOco(p: Record<string, string>): Promise<{ orderReports?: { orderId: number }[] }> }
      ).privatePostOrderListOco({
        symbol: market.id,
        side: 'SELL',
        quantity: text(plan.quantity),
        listClientOrderId: id('l'),
        aboveType: 'LIMIT_MAKER',
        abovePrice: text(plan.take_profit_price!),
        aboveClientOrderId: id('t'),
        belowType: stopLimit ? 'STOP_LOSS_LIMIT' : 'STOP_LOSS',
        belowStopPrice: text(plan.stop_price!),
        ...(stopLimit && { belowPrice: text(plan.stop_limit_price!), belowTimeInForce: 'GTC' }),
        belowClientOrderId: id('s'),
        newOrderRespType: 'ACK',
      }),
    )
    return sent.ok ? { ok: true, venueOrderIds: (sent.value.orderReports ?? []).map((r) => String(r.orderId)) } : sent
  }
  const sent = await calls.run(() => {
    if (plan.kind === 'TAKE_PROFIT') return exchange.createOrder(pair, 'limit', 'sell', plan.quantity, plan.take_profit_price!, { clientOrderId: id('t') })
    const params = { stopLossPrice: plan.stop_price!, clientOrderId: id('s') }
    return plan.kind === 'STOP_LIMIT'
      ? exchange.createOrder(pair, 'limit', 'sell', plan.quantity, plan.stop_limit_price!, params)
      : exchange.createOrder(pair, 'market', 'sell', plan.quantity, undefined, params)
  })
  return sent.ok ? { ok: true, venueOrderIds: [String(sent.value.id)] } : sent
}

export type LegState = { leg: Leg; clientOrderId: string; order: CcxtOrder } | { leg: Leg; clientOrderId: string; missing: true }

/**
 * The venue's record of each leg of the row's placement; from `known` (one read of the open orders)
 * where a leg is there, else asked one by one. Throws the failure of a read.
 */
export async function readLegs(calls: VenueCalls, row: ProtectionRow, known?: Map<string, CcxtOrder>): Promise<LegState[]> {
  const states: LegState[] = []
  for (const leg of legsOf(row.kind)) {
    const clientOrderId = legClientId(row.tenant_id, row.pair, row.seq, leg)
    const seen = known?.get(clientOrderId)
    if (seen) {
      states.push({ leg, clientOrderId, order: seen })
      continue
    }
    const look = await calls.lookUp(row.pair, clientOrderId, row.sent_at ?? undefined)
    if ('failed' in look) throw new ProtectionCallError(look.failed)
    states.push('found' in look ? { leg, clientOrderId, order: look.found } : { leg, clientOrderId, missing: true })
  }
  return states
}

/** A venue call that got no usable answer: the row is looked at again later. */
export class ProtectionCallError extends Error {
  constructor(readonly failure: Failure) {
    super(failure.reason)
  }
}

/** The fills of one venue order, as the ledger applies them. */
export async function fillsOf(calls: VenueCalls, exchange: Exchange, order: CcxtOrder, pair: string): Promise<VenueFill[]> {
  if (!((order.filled ?? 0) > 0)) return []
  const trades = await calls.run(() => exchange.fetchOrderTrades(String(order.id), pair))
  if (!trades.ok) throw new ProtectionCallError(trades.failure)
  return trades.value.map(fillOf)
}

/** When a stop-limit leg was triggered (Binance's workingTime), or undefined while it waits. */
export function triggeredAt(order: CcxtOrder): number | undefined {
  const working = Number((order.info as { workingTime?: unknown })?.workingTime)
  const stopLimit = /STOP_LOSS_LIMIT/i.test(String((order.info as { type?: unknown })?.type ?? ''))
  return stopLimit && order.status === 'open' && working > 0 ? working : undefined
}
