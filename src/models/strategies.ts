// The built-in strategies: one pure function each, from a model's parameters and its latest daily
// candles (columns oldest first, the last value being the candle the signal is "as of") to the
// day's target.
// The models table names a strategy per model (column `strategy`); the parameters are the model's,
// covered by its published hash, so anyone holding the candles can recompute every signal.
import { ema, highest, lowest, zScore } from './indicators.ts'

export type Action = 'ENTER_LONG' | 'HOLD' | 'EXIT_LONG'
export type Direction = 'LONG' | 'HOLD' | 'DE-RISK'

export const DIRECTION: Record<Action, Direction> = { ENTER_LONG: 'LONG', HOLD: 'HOLD', EXIT_LONG: 'DE-RISK' }

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
  /** The target for the day after the last candle. Gets exactly candlesNeeded(p) candles. */
  decide(candles: Window, p: Parameters): Action
}

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
  decide(candles, p) {
    const fast = ema(candles.close, p.fast_ema)
    const slow = ema(candles.close, p.slow_ema)
    if (fast > slow * (1 + p.band_pct / 100)) return 'ENTER_LONG'
    if (fast < slow * (1 - p.band_pct / 100)) return 'EXIT_LONG'
    return 'HOLD'
  },
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
  decide(candles, p) {
    const z = zScore(candles.close)
    if (z <= p.entry_z) return 'ENTER_LONG'
    if (z >= p.exit_z) return 'EXIT_LONG'
    return 'HOLD'
  },
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
  decide(candles, p) {
    const last = candles.close.length - 1
    const close = candles.close[last]
    const upper = highest(candles.high.slice(last - p.entry_lookback, last))
    const lower = lowest(candles.low.slice(last - p.exit_lookback, last))
    if (close > upper) return 'ENTER_LONG'
    if (close < lower) return 'EXIT_LONG'
    return 'HOLD'
  },
}

export const STRATEGIES: Record<string, Strategy> = {
  ema_cross: emaCross,
  zscore_reversion: zscoreReversion,
  donchian_breakout: donchianBreakout,
}
