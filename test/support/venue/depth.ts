// GET /api/v3/depth (rest-api.md "Order book"): the test venue has no market makers, so each side is
// a ladder of 1 unit a tick away from the last price and onwards (the bid and ask the tickers show),
// with the resting LIMIT orders of every account added at their prices.
import { isOpen } from './book.ts'
import { VenueError } from './errors.ts'
import type { Route, VenueState } from './routes.ts'
import { findSymbol, fmt, ONE, type VenueSymbol } from './symbols.ts'

/** Binance's weight per limit: 1-100 5, 101-500 25, 501-1000 50, 1001-5000 250. */
function weight(limit: number): number {
  return limit <= 100 ? 5 : limit <= 500 ? 25 : limit <= 1000 ? 50 : 250
}

function limitOf(raw: string | undefined): number {
  if (raw === undefined) return 100
  if (!/^[0-9]{1,20}$/.test(raw) || Number(raw) < 1)
    throw new VenueError(-1100, "Illegal characters found in parameter 'limit'; legal range is '^[0-9]{1,20}$'.")
  // Above 5000 the answer is cut to 5000, as Binance documents.
  return Math.min(Number(raw), 5000)
}

function side(state: VenueState, s: VenueSymbol, buy: boolean, limit: number): string[][] {
  const levels = new Map<bigint, bigint>()
  const last = state.market.last(s)
  for (let i = 1n; i <= BigInt(limit); i++) {
    const price = buy ? last - i * s.tick : last + i * s.tick
    if (price <= 0n) break
    levels.set(price, ONE)
  }
  for (const o of state.book.orders) {
    if (o.symbol !== s || !isOpen(o) || o.workingTime === -1 || o.price === 0n || (o.side === 'BUY') !== buy) continue
    levels.set(o.price, (levels.get(o.price) ?? 0n) + o.origQty - o.executedQty)
  }
  return [...levels]
    .sort(([a], [b]) => (a === b ? 0 : a > b === buy ? -1 : 1))
    .slice(0, limit)
    .map(([price, qty]) => [fmt(price), fmt(qty)])
}

export function depthRoute(state: VenueState): Route {
  return {
    security: 'NONE',
    params: ['symbol', 'limit', 'symbolStatus'],
    weight: (p) => weight(limitOf(p.limit)),
    handle: (p) => {
      const s = findSymbol(state.symbols, p.symbol)
      const limit = limitOf(p.limit)
      // Grows with each order placed, each order ended and each trade (never goes back), so two reads
      // of an unchanged book carry the same id, as on Binance.
      const { orders, trades } = state.book
      const lastUpdateId = orders.length + trades.length + orders.filter((o) => !isOpen(o)).length
      return { lastUpdateId, bids: side(state, s, true, limit), asks: side(state, s, false, limit) }
    },
  }
}
