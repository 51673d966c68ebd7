// The candles a backtest reads for one pair, in its worker thread (./worker.ts) over the worker's
// own read-only connection, as typed arrays. Reads table prices (pair, date, open, high, low,
// close, volume).
import type Database from 'better-sqlite3'
import { addDays } from '../shared/dates.ts'
import type { Strategy } from '../models/strategies.ts'

/** One pair's candles, oldest first: the warm-up before the range, then the range itself. */
export interface PairCandles {
  /** Per candle, its day on the calendar (0 = from); -1 for the warm-up candles before from. */
  day: Int32Array
  close: Float64Array
  /** Empty for a strategy that reads closes only. */
  high: Float64Array
  low: Float64Array
}

/** The candles of `pair` a backtest of `strategy` over the calendar (from its first to last day) reads. */
export type ReadCandles = (strategy: Pick<Strategy, 'reads'>, pair: string, days: Map<string, number>, from: string, to: string, needed: number) => PairCandles

/** Every day from `from` to `to`, with its index: what maps a candle's date onto the calendar. */
export function calendar(from: string, to: string): Map<string, number> {
  const days = new Map<string, number>()
  for (let date = from, i = 0; date <= to; date = addDays(date, 1), i++) days.set(date, i)
  return days
}

/** A ReadCandles over `connection`, its statements prepared once. */
export function candleReader(connection: Database.Database): ReadCandles {
  // The publisher's window for as_of D is the last candlesNeeded candles up to D, gaps or not; the
  // warm-up starts at the (needed - 1)th candle before from, so the first day's window is the same.
  const warmUpStart = connection.prepare<[string, string, number], string>(
    'SELECT date FROM prices WHERE pair = ? AND date < ? ORDER BY date DESC LIMIT 1 OFFSET ?',
  )
  // SQLite hands over one number per row several times faster than a date and a number: the closes
  // come alone, and the dates only for a pair with a gap in the range (count below its span).
  const rangeShape = connection.prepare<[string, string, string], [number, string | null, string | null]>(
    'SELECT count(*), min(date), max(date) FROM prices WHERE pair = ? AND date >= ? AND date <= ?',
  )
  const closesBetween = connection.prepare<[string, string, string], number>(
    'SELECT close FROM prices WHERE pair = ? AND date >= ? AND date <= ? ORDER BY date',
  )
  const barsBetween = connection.prepare<[string, string, string], [number, number, number]>(
    'SELECT high, low, close FROM prices WHERE pair = ? AND date >= ? AND date <= ? ORDER BY date',
  )
  const datesBetween = connection.prepare<[string, string, string], string>('SELECT date FROM prices WHERE pair = ? AND date >= ? AND date <= ? ORDER BY date')
  warmUpStart.pluck(true)
  closesBetween.pluck(true)
  datesBetween.pluck(true)
  barsBetween.raw(true)
  rangeShape.raw(true)
  return (strategy, pair, days, from, to, needed) => {
    const start = needed > 1 ? (warmUpStart.get(pair, from, needed - 2) ?? '') : from
    const candles: PairCandles = { day: new Int32Array(0), close: new Float64Array(0), high: new Float64Array(0), low: new Float64Array(0) }
    if (strategy.reads === 'closes') {
      candles.close = Float64Array.from(closesBetween.all(pair, start, to))
    } else {
      const rows = barsBetween.all(pair, start, to)
      candles.high = Float64Array.from(rows, (r) => r[0])
      candles.low = Float64Array.from(rows, (r) => r[1])
      candles.close = Float64Array.from(rows, (r) => r[2])
    }
    const [inRange, first, last] = rangeShape.get(pair, from, to)!
    const n = candles.close.length
    const warmUp = n - inRange
    candles.day = new Int32Array(n).fill(-1)
    if (inRange === 0) return candles
    const firstDay = days.get(first!)!
    if (days.get(last!)! - firstDay + 1 === inRange) {
      for (let j = 0; j < inRange; j++) candles.day[warmUp + j] = firstDay + j
    } else {
      const dates = datesBetween.all(pair, from, to)
      for (let j = 0; j < inRange; j++) candles.day[warmUp + j] = days.get(dates[j])!
    }
    return candles
  }
}
