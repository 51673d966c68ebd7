// What should rest on the venue for one pair (SPEC 13): computed from the ledger (the LIVE quantity
// held, its quantity-weighted average entry, Bulwark's SELLs at work), the tenant's profile and the
// market's rules (its order types, whether it takes OCO lists, its filters). Nothing is planned while
// a SELL of Bulwark's is on its way to the venue (queued, sent, unknown): its balance must be free,
// so the protection is canceled first. A SELL resting on the venue (a LIMIT sell, a bot's own stop
// or take-profit through the gateway, SPEC 14) locks what it has yet to sell: the protection covers
// the rest, so the two never compete for the same coins.
import type { Market } from 'ccxt'
import { type Queries, query } from '../../store/store.ts'
import { riskProfile } from '../../risk/profile.ts'
import type { Exchange } from '../../venues/exchange.ts'
import type { ProtectionKind } from './store.ts'

export interface Plan {
  kind: Exclude<ProtectionKind, 'SALE'>
  /** The LIVE quantity held less what resting SELLs reserve (Position.quantity), at the market's step. */
  quantity: number
  stop_price: number | null
  /** A stop-limit's limit: where the market lacks stop-market orders. */
  stop_limit_price: number | null
  take_profit_price: number | null
  /** Where the take-profit cannot rest beside the stop (no OCO): Bulwark sells when the mark reaches it. */
  sellAtTakeProfit: boolean
}

export interface Terms {
  stopPct: number | null
  takeProfitPct: number | null
  offsetPct: number
  unprotectedAction: 'ALERT' | 'FLATTEN'
}

export interface Position {
  /**
   * What the protection covers, and what a sale of its own may sell: the LIVE quantity the ledger
   * holds in the pair (over every model and gateway key), less what Bulwark's SELLs resting on the
   * venue have yet to sell; never below 0.
   */
  quantity: number
  /** The LIVE quantity the ledger holds in the pair. */
  held: number
  /** Quantity-weighted average entry (the venue's fills) of all that is held. */
  entry: number
  /** A SELL of Bulwark's in the pair is not resting on the venue yet (queued, sent, unknown): nothing may lock its coins. */
  selling: boolean
}

/** The ledger's figures of one pair: what Position is made of. */
export interface PositionFigures {
  held: number
  /** sum(quantity x entry price) of what is held. */
  cost: number
  /** The unfilled quantity of Bulwark's SELLs resting on the venue (their outbox row OPEN). */
  reserved: number
  /** A SELL of Bulwark's in the pair is queued, sent or unknown. */
  selling: boolean
}

// Bulwark's SELLs of the pair are found among the tenant's working outbox rows (their partial index),
// not by walking every order the tenant ever placed: that walk grew with the history (measured in a
// bench with 200 orders: 97 us against 6.8 us, and it ran after every fill).
const sellsIn = (states: string) =>
  `o.id IN (SELECT v.order_id FROM venue_orders v WHERE v.tenant_id = @tenant AND v.state <> 'DONE' AND v.state IN (${states}))
    AND o.pair = @pair AND o.mode = 'LIVE' AND o.side = 'SELL'`
const positionRow = query<{ tenant: string; pair: string }, { held: number | null; cost: number | null; reserved: number; selling: number }>(`
  SELECT sum(quantity) AS held, sum(quantity * entry_price) AS cost,
    (SELECT coalesce(sum(o.quantity - o.filled_quantity), 0) FROM orders o WHERE ${sellsIn("'OPEN'")}) AS reserved,
    CASE WHEN EXISTS (SELECT 1 FROM orders o WHERE ${sellsIn("'QUEUED', 'SENT', 'UNKNOWN'")}) THEN 1 ELSE 0 END AS selling
  FROM trades WHERE tenant_id = @tenant AND pair = @pair AND status = 'OPEN' AND mode = 'LIVE'`)

export async function termsOf(db: Queries, tenantId: string): Promise<Terms> {
  const profile = await riskProfile(db, tenantId)
  return {
    stopPct: profile.venue_stop_loss_pct ?? null,
    takeProfitPct: profile.venue_take_profit_pct ?? null,
    offsetPct: profile.stop_limit_offset_pct,
    unprotectedAction: profile.unprotected_action,
  }
}

export async function positionOf(db: Queries, tenantId: string, pair: string): Promise<Position> {
  const row = (await db.get(positionRow, { tenant: tenantId, pair }))!
  return positionFrom({ held: row.held ?? 0, cost: row.cost ?? 0, reserved: row.reserved, selling: row.selling === 1 })
}

/**
 * The position the protection sees: what is held less what resting SELLs reserve.
 *
 * @example
 * positionFrom({ held: 1, cost: 60000, reserved: 0.4, selling: false }) // { quantity: 0.6, held: 1, entry: 60000, selling: false }
 */
export function positionFrom(figures: PositionFigures): Position {
  const { held, cost, reserved, selling } = figures
  // Float sums: 0.02 - 0.0199 is 0.0000999...9, which the market's step would cut to 0.00009.
  const rest = Number((held - reserved).toPrecision(12))
  return { quantity: Math.max(0, rest), held, entry: held > 0 ? cost / held : 0, selling }
}

/** The raw exchangeInfo of a Binance market, where ccxt keeps it. */
interface MarketInfo {
  orderTypes?: string[]
  ocoAllowed?: boolean
}

/** Whether this exchange offers OCO lists on this market (Binance spot's orderList/oco). */
export function offersOco(exchange: Exchange, market: Market): boolean {
  const info = market?.info as MarketInfo
  return (
    typeof (exchange as unknown as Record<string, unknown>).privatePostOrderListOco === 'function' &&
    info?.ocoAllowed === true &&
    canRest(market, 'LIMIT_MAKER')
  )
}

/** Whether the market's order types name this one (markets that do not list their types take it). */
function canRest(market: Market, type: string): boolean {
  const types = (market?.info as MarketInfo)?.orderTypes
  return !Array.isArray(types) || types.includes(type)
}

/**
 * The protection for `position` under `terms`, fitted to the market; undefined when none should rest
 * (off, nothing left beside the resting SELLs, a SELL on its way, or a quantity the market would not
 * take: dust).
 *
 * @example
 * planFor(binance, 'BTC/USDT', { quantity: 0.1, held: 0.1, entry: 60000, selling: false }, { stopPct: 5, takeProfitPct: 10, offsetPct: 1, unprotectedAction: 'ALERT' })
 * // { kind: 'OCO', quantity: 0.1, stop_price: 57000, stop_limit_price: null, take_profit_price: 66000, sellAtTakeProfit: false }
 */
export function planFor(exchange: Exchange, pair: string, position: Position, terms: Terms): Plan | undefined {
  if (position.selling || position.quantity <= 0) return undefined
  if (terms.stopPct === null && terms.takeProfitPct === null) return undefined
  const market = exchange.markets?.[pair]
  if (!market) return undefined
  const fit = (value: number, round: 'amountToPrecision' | 'priceToPrecision'): number | undefined => {
    try {
      const fitted = Number(exchange[round](pair, value))
      return fitted > 0 ? fitted : undefined
    } catch {
      return undefined // ccxt throws when the value rounds to nothing
    }
  }
  const quantity = fit(position.quantity, 'amountToPrecision')
  if (quantity === undefined || quantity < (market.limits.amount?.min ?? 0)) return undefined
  const price = (n: number) => fit(n, 'priceToPrecision') ?? null
  const stop = terms.stopPct === null ? null : price(position.entry * (1 - terms.stopPct / 100))
  const takeProfit = terms.takeProfitPct === null ? null : price(position.entry * (1 + terms.takeProfitPct / 100))
  // A sale below the market's minimum cost would be refused: what is held is dust there.
  const lowest = Math.min(stop ?? Number.POSITIVE_INFINITY, takeProfit ?? Number.POSITIVE_INFINITY)
  if (quantity * lowest < (market.limits.cost?.min ?? 0)) return undefined
  const stopMarket = canRest(market, 'STOP_LOSS')
  const stopLimit = stop === null || stopMarket ? null : price(stop * (1 - terms.offsetPct / 100))
  const stopKind = stopMarket ? 'STOP' : 'STOP_LIMIT'
  if (stop === null) return { kind: 'TAKE_PROFIT', quantity, stop_price: null, stop_limit_price: null, take_profit_price: takeProfit, sellAtTakeProfit: false }
  if (takeProfit === null) return { kind: stopKind, quantity, stop_price: stop, stop_limit_price: stopLimit, take_profit_price: null, sellAtTakeProfit: false }
  const oco = offersOco(exchange, market)
  return { kind: oco ? 'OCO' : stopKind, quantity, stop_price: stop, stop_limit_price: stopLimit, take_profit_price: takeProfit, sellAtTakeProfit: !oco }
}

/** Whether what rests is what the plan asks for. */
export function samePlan(
  resting: { kind: string | null; quantity: number | null; stop_price: number | null; stop_limit_price: number | null; take_profit_price: number | null },
  plan: Plan,
): boolean {
  return (
    resting.kind === plan.kind &&
    resting.quantity === plan.quantity &&
    resting.stop_price === plan.stop_price &&
    resting.stop_limit_price === plan.stop_limit_price &&
    resting.take_profit_price === plan.take_profit_price
  )
}
