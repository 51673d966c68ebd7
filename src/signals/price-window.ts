// The candles a strategy reads for one pair up to one date, as columns, oldest first: the one
// read the publisher and (later) backtests share.
import { statement } from '../store/db.ts'
import type { Strategy, Window } from '../models/strategies.ts'

const recentCloses = statement<[string, string, number], number>('SELECT close FROM prices WHERE pair = ? AND date <= ? ORDER BY date DESC LIMIT ?')
const recentBars = statement<[string, string, number], [number, number, number]>(
  'SELECT high, low, close FROM prices WHERE pair = ? AND date <= ? ORDER BY date DESC LIMIT ?',
)

/** The last `count` candles up to `asOf` as columns, oldest first: what `strategy` reads. */
export function windowOf(strategy: Strategy, pair: string, asOf: string, count: number): Window {
  if (strategy.reads === 'closes') return { close: recentCloses().pluck(true).all(pair, asOf, count).reverse(), high: [], low: [] }
  const rows = recentBars().raw(true).all(pair, asOf, count).reverse()
  return { high: rows.map((r) => r[0]), low: rows.map((r) => r[1]), close: rows.map((r) => r[2]) }
}
