// The books the circuit-breaker benches (test/bench/breaker-*.ts) trade against: daily candles of
// made-up pairs and, per tenant, closed round trips and open trades written through the paper
// broker's own functions (an order, then its fill), dated in the past, so that the rows, events and
// index entries are the ones real trading leaves behind, and no order counts towards today's limits.
import { latestCandle, upsertCandles, type Candle } from '../../src/market/prices.ts'
import { addDays } from '../../src/shared/dates.ts'
import { executionPrice, fillBuy, fillSell, openTradesOf, termsFor } from '../../src/trading/fills.ts'
import { insertPendingOrder, type OrderRow } from '../../src/trading/orders.ts'

const HOUR = 3_600_000

function candle(pair: string, date: string, open: number, close: number, rng: () => number): Candle {
  const high = Math.max(open, close) * (1 + rng() * 0.01)
  const low = Math.min(open, close) * (1 - rng() * 0.01)
  return { pair, date, open, high, low, close, volume: Math.round(1000 + rng() * 9000) }
}

/** `days` daily candles per pair up to `lastDate`, a random walk from 10 to 1000. Call inside write(). */
export function importHistory(pairs: string[], lastDate: string, days: number, rng: () => number, now: Date): void {
  for (let start = 0; start < pairs.length; start += 100) {
    const batch: Candle[] = []
    for (const pair of pairs.slice(start, start + 100)) {
      let close = 10 * 100 ** rng()
      for (let d = days - 1; d >= 0; d--) {
        const open = close
        close = open * (1 + (rng() - 0.5) * 0.06)
        batch.push(candle(pair, addDays(lastDate, -d), open, close, rng))
      }
    }
    upsertCandles(batch, now)
  }
}

/** The next candle of each pair, dated `date`, moving at most 1% from the pair's last close. */
export function nextCandles(pairs: string[], date: string, rng: () => number): Candle[] {
  return pairs.map((pair) => {
    const open = latestCandle(pair)!.close
    return candle(pair, date, open, open * (1 + (rng() - 0.5) * 0.02), rng)
  })
}

function order(tenantId: string, pair: string, side: 'BUY' | 'SELL', quantity: number, at: Date): OrderRow {
  const last = latestCandle(pair)!
  return insertPendingOrder(tenantId, { model_id: null, pair, side, type: 'MARKET', quantity, notional_usd: null, limit_price: null }, last, at, {
    source: 'api',
  })
}

/**
 * `closed` round trips (net PnL of either sign, about half losses) then `open` trades, each of 100
 * to 500 USD on a pair drawn from `pairs`, one every hour up to `until`. Call inside write().
 */
export function seedBook(tenantId: string, pairs: string[], book: { open: number; closed: number }, rng: () => number, until: Date): void {
  const terms = termsFor(tenantId)
  let at = until.getTime() - (2 * book.closed + book.open) * HOUR
  const pick = () => pairs[Math.floor(rng() * pairs.length)]
  const buy = (pair: string): number => {
    const market = latestCandle(pair)!.close
    const quantity = (100 + rng() * 400) / market
    const row = order(tenantId, pair, 'BUY', quantity, new Date(at))
    fillBuy(row, market, executionPrice(row, market, terms.slippage)!, terms, new Date(at))
    at += HOUR
    return quantity
  }
  for (let i = 0; i < book.closed; i++) {
    const pair = pick()
    const quantity = buy(pair)
    const market = latestCandle(pair)!.close * (1 + (rng() - 0.5) * 0.1)
    const row = order(tenantId, pair, 'SELL', quantity, new Date(at))
    const open = openTradesOf().all({ tenant: tenantId, pair, model: null, mode: 'PAPER' })
    fillSell(row, market, executionPrice(row, market, terms.slippage)!, terms, open, new Date(at))
    at += HOUR
  }
  for (let i = 0; i < book.open; i++) buy(pick())
}
