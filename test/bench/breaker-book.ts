// The books the circuit-breaker benches (test/bench/breaker-*.ts) trade against: daily candles of
// made-up pairs and, per tenant, closed round trips and open trades written through the paper
// broker's own functions (an order, then its fill), dated in the past, so that the rows, events and
// index entries are the ones real trading leaves behind, and no order counts towards today's limits.
import { latestCandle, upsertCandles, type Candle } from '../../src/market/prices.ts'
import { addDays } from '../../src/shared/dates.ts'
import { executionPrice, fillBuy, fillSell, openTradesOf, termsFor } from '../../src/trading/fills.ts'
import { insertPendingOrder, type OrderRow } from '../../src/trading/orders.ts'
import type { Queries, Tx } from '../../src/store/store.ts'

const HOUR = 3_600_000

function candle(pair: string, date: string, open: number, close: number, rng: () => number): Candle {
  const high = Math.max(open, close) * (1 + rng() * 0.01)
  const low = Math.min(open, close) * (1 - rng() * 0.01)
  return { pair, date, open, high, low, close, volume: Math.round(1000 + rng() * 9000) }
}

/** `days` daily candles per pair up to `lastDate`, a random walk from 10 to 1000, written in `tx`. */
export async function importHistory(tx: Tx, pairs: string[], lastDate: string, days: number, rng: () => number, now: Date): Promise<void> {
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
    await upsertCandles(tx, batch, now)
  }
}

/** The next candle of each pair, dated `date`, moving at most 1% from the pair's last close. */
export async function nextCandles(db: Queries, pairs: string[], date: string, rng: () => number): Promise<Candle[]> {
  const candles: Candle[] = []
  for (const pair of pairs) {
    const open = (await latestCandle(db, pair))!.close
    candles.push(candle(pair, date, open, open * (1 + (rng() - 0.5) * 0.02), rng))
  }
  return candles
}

async function order(tx: Tx, tenantId: string, pair: string, side: 'BUY' | 'SELL', quantity: number, at: Date): Promise<OrderRow> {
  const last = (await latestCandle(tx, pair))!
  return insertPendingOrder(tx, tenantId, { model_id: null, pair, side, type: 'MARKET', quantity, notional_usd: null, limit_price: null }, last, at, {
    source: 'api',
  })
}

/**
 * `closed` round trips (net PnL of either sign, about half losses) then `open` trades, each of 100
 * to 500 USD on a pair drawn from `pairs`, one every hour up to `until`, written in `tx`.
 */
export async function seedBook(
  tx: Tx,
  tenantId: string,
  pairs: string[],
  book: { open: number; closed: number },
  rng: () => number,
  until: Date,
): Promise<void> {
  const terms = await termsFor(tx, tenantId)
  let at = until.getTime() - (2 * book.closed + book.open) * HOUR
  const pick = () => pairs[Math.floor(rng() * pairs.length)]
  const buy = async (pair: string): Promise<number> => {
    const market = (await latestCandle(tx, pair))!.close
    const quantity = (100 + rng() * 400) / market
    const row = await order(tx, tenantId, pair, 'BUY', quantity, new Date(at))
    await fillBuy(tx, row, market, executionPrice(row, market, terms.slippage)!, terms, new Date(at))
    at += HOUR
    return quantity
  }
  for (let i = 0; i < book.closed; i++) {
    const pair = pick()
    const quantity = await buy(pair)
    const market = (await latestCandle(tx, pair))!.close * (1 + (rng() - 0.5) * 0.1)
    const row = await order(tx, tenantId, pair, 'SELL', quantity, new Date(at))
    const open = await tx.all(openTradesOf, { tenant: tenantId, pair, model: null, key: null, hook: null, mode: 'PAPER' })
    await fillSell(tx, row, market, executionPrice(row, market, terms.slippage)!, terms, open, new Date(at))
    at += HOUR
  }
  for (let i = 0; i < book.open; i++) await buy(pick())
}
