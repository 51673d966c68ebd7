// The per-order limits of the risk profile: max_open_trades and max_exposure_usd (SPEC 6) and the
// runaway and fat-finger limits of SPEC 9, max_order_notional_usd, price_band_pct and
// max_trades_per_day, each off while NULL. A breach is a refusal that records an incident
// (./pre-trade.ts writes it); the runaway trip, max_orders_per_minute, is risk's breaker.
import { query, type Queries } from '../store/store.ts'
import type { Candle } from '../market/prices.ts'
import type { OrderInput } from './orders.ts'

export interface OrderLimits {
  max_open_trades: number
  max_exposure_usd: number
  max_order_notional_usd: number | null
  price_band_pct: number | null
  max_trades_per_day: number | null
}

export interface Breach {
  limit: keyof OrderLimits
  detail: string
}

const limitsOf = query<[string], OrderLimits>(
  'SELECT max_open_trades, max_exposure_usd, max_order_notional_usd, price_band_pct, max_trades_per_day FROM risk_profiles WHERE tenant_id = ?',
)
// Kept per UTC day by a trigger on orders (sql/009_breaker_reads.sql): one row.
const openingOrdersOn = query<[string, string], { n: number }>('SELECT coalesce((SELECT n FROM opening_order_days WHERE tenant_id = ? AND day = ?), 0) AS n')

/** Quantities closer than this are equal: sizes come from float division. */
const EPSILON = 1e-9

export async function orderLimitsOf(db: Queries, tenantId: string): Promise<OrderLimits> {
  return (await db.get(limitsOf, [tenantId]))!
}

const usd = (n: number) => n.toFixed(2)
const round2 = (n: number) => Math.round(n * 100) / 100

/**
 * The first limit this order would break, in the order docs/risk.md lists them, or undefined.
 * `quantity` is the order's size once known (a SELL's is fixed before this), `book` the open trades
 * and pending opening orders with their exposure, `last` the price the order is checked at (the
 * last close, or for a LIVE order the venue's price, `venue`).
 *
 * @example
 * await findBreach(db, tenantId, limits, { side: 'BUY', type: 'LIMIT', pair: 'BTC/USDT', quantity: 1, limit_price: 150 }, 1, last, book, now)
 * // { limit: 'price_band_pct', detail: 'LIMIT price 150 is 50.00% from the last price 100 (...)' }
 */
export async function findBreach(
  db: Queries,
  tenantId: string,
  limits: OrderLimits,
  input: OrderInput,
  quantity: number | null,
  last: Candle & { venue?: boolean },
  book: { positions: number; exposureUsd: number },
  now: Date,
): Promise<Breach | undefined> {
  const price = input.limit_price ?? last.close
  const notional = input.notional_usd ?? (quantity ?? 0) * price
  if (limits.max_order_notional_usd !== null && notional > limits.max_order_notional_usd * (1 + EPSILON)) {
    return {
      limit: 'max_order_notional_usd',
      detail: `order notional ${usd(notional)} USD exceeds max_order_notional_usd ${limits.max_order_notional_usd}`,
    }
  }
  if (limits.price_band_pct !== null && input.limit_price !== undefined) {
    const distance = (Math.abs(input.limit_price - last.close) / last.close) * 100
    if (distance > limits.price_band_pct * (1 + EPSILON)) {
      return {
        limit: 'price_band_pct',
        detail: `LIMIT price ${input.limit_price} is ${distance.toFixed(2)}% from the last price ${last.close} (${last.venue ? `the venue's ${last.pair} price` : `${last.pair} close of ${last.date}`}), beyond price_band_pct ${limits.price_band_pct}`,
      }
    }
  }
  if (input.side !== 'BUY') return undefined
  if (limits.max_trades_per_day !== null) {
    const placed = (await db.get(openingOrdersOn, [tenantId, now.toISOString().slice(0, 10)]))!.n
    if (placed + 1 > limits.max_trades_per_day) {
      return { limit: 'max_trades_per_day', detail: `opening orders today (${placed}) + 1 would exceed max_trades_per_day ${limits.max_trades_per_day}` }
    }
  }
  if (book.positions + 1 > limits.max_open_trades) {
    return {
      limit: 'max_open_trades',
      detail: `open trades and pending opening orders (${book.positions}) + 1 would exceed max_open_trades ${limits.max_open_trades}`,
    }
  }
  if (book.exposureUsd + notional > limits.max_exposure_usd * (1 + EPSILON)) {
    return {
      limit: 'max_exposure_usd',
      detail: `exposure ${round2(book.exposureUsd)} USD + this order's ${round2(notional)} USD would exceed max_exposure_usd ${limits.max_exposure_usd}`,
    }
  }
  return undefined
}
