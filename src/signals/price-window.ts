// The candles a strategy reads for one pair up to one date, as columns, oldest first: the one
// read the publisher and (later) backtests share.
import { query, type Queries } from '../store/store.ts'
import type { Strategy, Window } from '../models/strategies.ts'

const recentCloses = query<[string, string, number], { close: number }>('SELECT close FROM prices WHERE pair = ? AND date <= ? ORDER BY date DESC LIMIT ?')
const recentBars = query<[string, string, number], { high: number; low: number; close: number }>(
  'SELECT high, low, close FROM prices WHERE pair = ? AND date <= ? ORDER BY date DESC LIMIT ?',
)

/** The last `count` candles up to `asOf` as columns, oldest first: what `strategy` reads. */
export async function windowOf(db: Queries, strategy: Strategy, pair: string, asOf: string, count: number): Promise<Window> {
  if (strategy.reads === 'closes') {
    const closes = await db.all(recentCloses, [pair, asOf, count])
    return { close: closes.map((r) => r.close).reverse(), high: [], low: [] }
  }
  const rows = (await db.all(recentBars, [pair, asOf, count])).reverse()
  return { high: rows.map((r) => r.high), low: rows.map((r) => r.low), close: rows.map((r) => r.close) }
}
