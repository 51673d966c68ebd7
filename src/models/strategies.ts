// The built-in strategies: one pure function each, from a model's parameters and its latest daily
// candles (columns oldest first, the last value being the candle the signal is "as of") to the
// day's target. Each rule runs over a whole series at once (actions: one pass, the backtests' form),
// and decide is its last element, so the publisher and a backtest run the same code.
// The models table names a strategy per model (column `strategy`); the parameters are the model's,
// covered by its published hash, so anyone holding the candles can recompute every signal.
import { ema, highest, lowest, rollingHighest, rollingLowest, rollingMoments, windowedEma, zScore } from './indicators.ts'

export type Action = 'ENTER_LONG' | 'HOLD' | 'EXIT_LONG'
export type Direction = 'LONG' | 'HOLD' | 'DE-RISK'

export const DIRECTION: Record<Action, Direction> = { ENTER_LONG: 'LONG', HOLD: 'HOLD', EXIT_LONG: 'DE-RISK' }

/** Actions as the bytes `actions` returns: a byte array of a series is far cheaper than strings. 0: no action (too few candles). */
export const ACTION_CODE = { ENTER_LONG: 1, HOLD: 2, EXIT_LONG: 3 } as const satisfies Record<Action, number>
export const ACTION_OF_CODE: readonly (Action | null)[] = [null, 'ENTER_LONG', 'HOLD', 'EXIT_LONG']
const ENTER = ACTION_CODE.ENTER_LONG
const HOLD = ACTION_CODE.HOLD
const EXIT = ACTION_CODE.EXIT_LONG
type Code = 1 | 2 | 3

/**
 * A window of daily candles as columns, oldest first. `high` and `low` are filled only for a
 * strategy that reads bars: reading closes alone is several times cheaper, and most rules need no more.
 */
export interface Window {
  close: readonly number[]
  high: readonly number[]
  low: readonly number[]
}
export type Parameters = Record<string, number>

export interface Strategy {
  /** Names of the parameters, each a finite number. */
  parameters: readonly string[]
  /** Why these parameters cannot run, or null when they can. */
  invalid(p: Parameters): string | null
  /** Exactly how many candles the rule reads; a pair with fewer gets no signal. */
  candlesNeeded(p: Parameters): number
  /** Which columns the rule reads: closes only, or whole bars (high, low, close). */
  reads: 'closes' | 'bars'
  /**
   * The action code of every window of candlesNeeded(p) candles: element i for the window ending at
   * candle i, 0 before the first full window. Equal, index by index, to the rule applied to each
   * window on its own (series forms for speed; a comparison within rounding of its threshold is
   * settled by the per-window form, so rounding never decides).
   */
  actions(candles: Window, p: Parameters): Uint8Array
  /** The target for the day after the last candle: the last element of actions. Gets candlesNeeded(p) candles. */
  decide(candles: Window, p: Parameters): Action
}

function lastAction(strategy: Strategy, candles: Window, p: Parameters): Action {
  const needed = strategy.candlesNeeded(p)
  if (candles.close.length < needed) throw new RangeError(`needs ${needed} candles, got ${candles.close.length}`)
  const codes = strategy.actions(candles, p)
  return ACTION_OF_CODE[codes[codes.length - 1]]!
}

// The series forms divide by prices and scale their tolerances by them; anything else (a zero, a
// NaN that a running sum would carry forward) takes the per-window form at every index.
// (Loops: every() with a callback costs as much as the rule itself.)
function positiveFinite(values: readonly number[]): boolean {
  for (let i = 0; i < values.length; i++) if (!(values[i] > 0 && values[i] < Infinity)) return false
  return true
}
function finite(values: readonly number[]): boolean {
  for (let i = 0; i < values.length; i++) if (!(Math.abs(values[i]) < Infinity)) return false
  return true
}

function eachWindow(values: Window, needed: number, rule: (window: Window) => Code): Uint8Array {
  const out = new Uint8Array(values.close.length)
  for (let end = needed; end <= out.length; end++) {
    const cut = (column: readonly number[]) => column.slice(end - needed, end)
    out[end - 1] = rule({ close: cut(values.close), high: cut(values.high), low: cut(values.low) })
  }
  return out
}

// Far above the rounding of either form (about 3 x window x 1.1e-16 of the EMAs), far below any
// margin a decision turns on.
const EMA_TOLERANCE = 1e-9

const isPeriod = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 2 && (n as number) <= 1000

/**
 * Trend follower. Long while the fast EMA of closes is above the slow one by more than band_pct
 * percent, flat while it is below by more than band_pct; inside the band the trend is undecided.
 * Both EMAs run over the same window of 5 x slow_ema closes, seeded with their SMA, so the result
 * depends on a fixed number of candles (the seed's weight has decayed below 0.1% by the end).
 */
export const emaCross: Strategy = {
  parameters: ['fast_ema', 'slow_ema', 'band_pct'],
  invalid: (p) => {
    if (!isPeriod(p.fast_ema) || !isPeriod(p.slow_ema)) return 'fast_ema and slow_ema must be integers from 2 to 1000'
    if (p.fast_ema >= p.slow_ema) return 'fast_ema must be shorter than slow_ema'
    if (!(p.band_pct >= 0 && p.band_pct < 100)) return 'band_pct must be from 0 to under 100'
    return null
  },
  candlesNeeded: (p) => 5 * p.slow_ema,
  reads: 'closes',
  actions(candles, p) {
    const needed = 5 * p.slow_ema
    const rule = (window: Window) => emaCrossRule(ema(window.close, p.fast_ema), ema(window.close, p.slow_ema), p)
    if (!positiveFinite(candles.close)) return eachWindow(candles, needed, rule)
    const fast = windowedEma(candles.close, p.fast_ema, needed)
    const slow = windowedEma(candles.close, p.slow_ema, needed)
    const above = 1 + p.band_pct / 100
    const below = 1 - p.band_pct / 100
    const out = new Uint8Array(candles.close.length)
    for (let i = needed - 1; i < out.length; i++) {
      const f = fast[i]
      const upper = slow[i] * above
      const lower = slow[i] * below
      const tolerance = EMA_TOLERANCE * Math.max(f, slow[i])
      if (f - upper > tolerance) out[i] = ENTER
      else if (lower - f > tolerance) out[i] = EXIT
      else if (upper - f > tolerance && f - lower > tolerance) out[i] = HOLD
      else out[i] = rule({ close: candles.close.slice(i + 1 - needed, i + 1), high: [], low: [] })
    }
    return out
  },
  decide: (candles, p) => lastAction(emaCross, candles, p),
}

function emaCrossRule(fast: number, slow: number, p: Parameters): Code {
  if (fast > slow * (1 + p.band_pct / 100)) return ENTER
  if (fast < slow * (1 - p.band_pct / 100)) return EXIT
  return HOLD
}

/**
 * Mean reversion. z = (close - SMA) / population standard deviation over the last `lookback`
 * closes (the last close included). Long once the close is stretched to entry_z or below, flat
 * once it is back to exit_z or above, undecided in between.
 */
export const zscoreReversion: Strategy = {
  parameters: ['lookback', 'entry_z', 'exit_z'],
  invalid: (p) => {
    if (!isPeriod(p.lookback)) return 'lookback must be an integer from 2 to 1000'
    if (!Number.isFinite(p.entry_z) || !Number.isFinite(p.exit_z)) return 'entry_z and exit_z must be numbers'
    if (p.entry_z >= p.exit_z) return 'entry_z must be below exit_z'
    return null
  },
  candlesNeeded: (p) => p.lookback,
  reads: 'closes',
  actions(candles, p) {
    const n = p.lookback
    const rule = (window: Window) => zscoreRule(zScore(window.close), p)
    if (!positiveFinite(candles.close)) return eachWindow(candles, n, rule)
    const { mean, variance, spread } = rollingMoments(candles.close, n)
    const out = new Uint8Array(candles.close.length)
    for (let i = n - 1; i < out.length; i++) {
      const deviation = Math.sqrt(variance[i])
      const z = (candles.close[i] - mean[i]) / deviation
      // Rounding of both forms: the variance's grows with spread / variance, the per-window mean's
      // with mean / deviation (closes near 60,000 that barely move); 64x the error analysis, and 1e-9.
      const tolerance = (1 + Math.abs(z)) * (1e-9 + 64 * n * Number.EPSILON * (spread[i] / variance[i] + mean[i] / deviation))
      if (!(variance[i] > 0)) out[i] = rule({ close: candles.close.slice(i + 1 - n, i + 1), high: [], low: [] })
      else if (z < p.entry_z - tolerance) out[i] = ENTER
      else if (z > p.exit_z + tolerance) out[i] = EXIT
      else if (z > p.entry_z + tolerance && z < p.exit_z - tolerance) out[i] = HOLD
      else out[i] = rule({ close: candles.close.slice(i + 1 - n, i + 1), high: [], low: [] })
    }
    return out
  },
  decide: (candles, p) => lastAction(zscoreReversion, candles, p),
}

function zscoreRule(z: number, p: Parameters): Code {
  if (z <= p.entry_z) return ENTER
  if (z >= p.exit_z) return EXIT
  return HOLD
}

/**
 * Breakout momentum (Donchian channel). Long when the close breaks above the highest high of the
 * entry_lookback candles before it, flat when it breaks below the lowest low of the exit_lookback
 * candles before it, undecided inside the channel. The two cannot both hold: a close above the
 * higher channel is above every low too.
 */
export const donchianBreakout: Strategy = {
  parameters: ['entry_lookback', 'exit_lookback'],
  invalid: (p) => (isPeriod(p.entry_lookback) && isPeriod(p.exit_lookback) ? null : 'entry_lookback and exit_lookback must be integers from 2 to 1000'),
  candlesNeeded: (p) => Math.max(p.entry_lookback, p.exit_lookback) + 1,
  reads: 'bars',
  actions(candles, p) {
    const needed = Math.max(p.entry_lookback, p.exit_lookback) + 1
    const { close, high, low } = candles
    if (!(finite(close) && finite(high) && finite(low))) {
      return eachWindow(candles, needed, (window) => {
        const last = window.close.length - 1
        const upper = highest(window.high.slice(last - p.entry_lookback, last))
        return donchianRule(window.close[last], upper, lowest(window.low.slice(last - p.exit_lookback, last)))
      })
    }
    // Maxima and minima are exact, so the series form needs no tie-break.
    const uppers = rollingHighest(high, p.entry_lookback)
    const lowers = rollingLowest(low, p.exit_lookback)
    const out = new Uint8Array(close.length)
    for (let i = needed - 1; i < out.length; i++) out[i] = donchianRule(close[i], uppers[i - 1], lowers[i - 1])
    return out
  },
  decide: (candles, p) => lastAction(donchianBreakout, candles, p),
}

function donchianRule(close: number, upper: number, lower: number): Code {
  if (close > upper) return ENTER
  if (close < lower) return EXIT
  return HOLD
}

export const STRATEGIES: Record<string, Strategy> = {
  ema_cross: emaCross,
  zscore_reversion: zscoreReversion,
  donchian_breakout: donchianBreakout,
}
