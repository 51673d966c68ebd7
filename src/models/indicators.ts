// Technical indicators over a window of values, oldest first. Pure functions, written once and shared
// by every strategy, so a rule reads like its definition and the arithmetic is tested in one place
// (test/models/indicators.test.ts). Each throws on a window too short for it: strategies check
// their candle count first, so reaching a throw is a programming error, not bad data.

function need(values: readonly number[], count: number, what: string): void {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`${what}: period must be a positive integer, got ${count}`)
  if (values.length < count) throw new RangeError(`${what}: needs ${count} values, got ${values.length}`)
}

/** Arithmetic mean of all values. */
export function sma(values: readonly number[]): number {
  need(values, 1, 'sma')
  let sum = 0
  for (const v of values) sum += v
  return sum / values.length
}

/**
 * Exponential moving average with smoothing 2 / (period + 1), seeded with the simple average of the
 * first `period` values (the TA-Lib convention). Element i of the result is the EMA at
 * values[period - 1 + i], so the series is values.length - period + 1 long.
 */
export function emaSeries(values: readonly number[], period: number): number[] {
  need(values, period, 'ema')
  const alpha = 2 / (period + 1)
  let current = sma(values.slice(0, period))
  const out = [current]
  for (let i = period; i < values.length; i++) {
    current = alpha * values[i] + (1 - alpha) * current
    out.push(current)
  }
  return out
}

/** The EMA at the last value (see emaSeries). */
export function ema(values: readonly number[], period: number): number {
  need(values, period, 'ema')
  const alpha = 2 / (period + 1)
  let current = 0
  for (let i = 0; i < period; i++) current += values[i]
  current /= period
  for (let i = period; i < values.length; i++) current = alpha * values[i] + (1 - alpha) * current
  return current
}

/** Population standard deviation (divides by n, as Bollinger Bands and TA-Lib STDDEV do). */
export function stdev(values: readonly number[]): number {
  const mean = sma(values)
  let squares = 0
  for (const v of values) squares += (v - mean) ** 2
  return Math.sqrt(squares / values.length)
}

/**
 * How many standard deviations the last value lies from the window's mean. A flat window has its
 * last value exactly at the mean, so its z-score is 0: tested as equal values, because the rounded
 * mean of twenty closes of 0.12 is not 0.12, and the deviation about it came out 7e-17 (z = -1).
 */
export function zScore(values: readonly number[]): number {
  need(values, 1, 'zScore')
  if (values.every((v) => v === values[0])) return 0
  const deviation = stdev(values)
  if (deviation === 0) return 0
  return (values[values.length - 1] - sma(values)) / deviation
}

export function highest(values: readonly number[]): number {
  need(values, 1, 'highest')
  let max = -Infinity
  for (const v of values) if (v > max) max = v
  return max
}

export function lowest(values: readonly number[]): number {
  need(values, 1, 'lowest')
  let min = Infinity
  for (const v of values) if (v < min) min = v
  return min
}

// Series forms: the same indicators over every window of a whole series at once, each in one pass
// with O(1) work per window, so a backtest over years of candles costs what a handful of days used
// to. Element i is the value over the window ending at values[i]; NaN before the first full window.
// They agree with the per-window functions above to rounding (test/models/strategy-series.test.ts),
// not bit for bit: a rule comparing one to a threshold settles near-ties with the per-window form.

/**
 * Mean, population variance and `spread` (mean square about the shift, the size of what cancels
 * in the variance: its rounding error is a few lookback x epsilon x spread) of every window of
 * `lookback` values. Sums run within blocks of `lookback` values, forwards from each block's start
 * and backwards from its end, so a window is one block's suffix plus the next one's prefix: no
 * rounding carries from one window to the next, as it would in a running sum with values added
 * and removed. Both pieces are taken about the first value of the later block, a value inside the
 * window, so a flat window sums to exactly 0 and the variance of prices near 60,000 does not
 * cancel away.
 */
export function rollingMoments(values: ArrayLike<number>, lookback: number): { mean: Float64Array; variance: Float64Array; spread: Float64Array } {
  return blockSums(values, lookback, true)
}

export const rollingMean = (values: ArrayLike<number>, lookback: number): Float64Array => blockSums(values, lookback, false).mean

// rollingMoments; without squares, the mean alone (variance and spread left empty). Few arrays:
// on a single window, as the publisher's decide runs, allocating them is most of the cost.
function blockSums(values: ArrayLike<number>, lookback: number, squared: boolean) {
  needSeries('rollingMoments', lookback)
  const n = values.length
  // Suffix sums of every block but the last, about the next block's first value: [sums, squares].
  const suffix = new Float64Array(squared ? 2 * n : n)
  for (let end = lookback; end < n; end += lookback) {
    const shift = values[end]
    let sum = 0
    let squares = 0
    for (let i = end - 1; i >= end - lookback; i--) {
      const d = values[i] - shift
      sum += d
      suffix[i] = sum
      if (squared) {
        squares += d * d
        suffix[n + i] = squares
      }
    }
  }
  const mean = new Float64Array(n).fill(Number.NaN)
  const variance = new Float64Array(squared ? n : 0).fill(Number.NaN)
  const spread = new Float64Array(squared ? n : 0).fill(Number.NaN)
  let shift = 0
  let sum = 0
  let squares = 0
  for (let i = 0; i < n; i++) {
    const at = i % lookback
    if (at === 0) {
      shift = values[i]
      sum = 0
      squares = 0
    }
    const d = values[i] - shift
    sum += d
    if (squared) squares += d * d
    if (i < lookback - 1) continue
    // The window is block i's prefix, after the previous block's suffix unless it is a whole block.
    const whole = at === lookback - 1
    const offset = (whole ? sum : suffix[i - lookback + 1] + sum) / lookback
    mean[i] = shift + offset
    if (squared) {
      spread[i] = (whole ? squares : suffix[n + i - lookback + 1] + squares) / lookback
      variance[i] = Math.max(0, spread[i] - offset * offset)
    }
  }
  return { mean, variance, spread }
}

/** Population standard deviation of every window (see stdev). */
export const rollingStdev = (values: ArrayLike<number>, lookback: number): Float64Array => rollingMoments(values, lookback).variance.map(Math.sqrt)

/** zScore of every window; a flat window's is 0. */
export function rollingZScore(values: ArrayLike<number>, lookback: number): Float64Array {
  const { mean, variance } = rollingMoments(values, lookback)
  return mean.map((m, i) => (i < lookback - 1 ? Number.NaN : variance[i] > 0 ? (values[i] - m) / Math.sqrt(variance[i]) : 0))
}

/**
 * ema(window, period) for every window of `window` values. Unrolled, the EMA at a window's end is
 * (1-a)^m x SMA(first `period` values) + sum over k < m of a (1-a)^k x value[end - k], m = window -
 * period: the seed term comes from rollingMean, and the weighted sum slides by one multiply, one
 * add and one subtract. The sum is started afresh every m values, so no rounding outlives a window.
 */
export function windowedEma(values: ArrayLike<number>, period: number, window: number): Float64Array {
  needSeries('windowedEma', period)
  if (!Number.isInteger(window) || window < period) throw new RangeError(`windowedEma: window must be an integer of at least ${period}, got ${window}`)
  const n = values.length
  const out = new Float64Array(n).fill(Number.NaN)
  const alpha = 2 / (period + 1)
  const keep = 1 - alpha
  const m = window - period
  const decay = keep ** m
  const leaving = alpha * decay
  const seeds = rollingMean(values, period)
  if (m === 0) return seeds
  let weighted = 0
  for (let i = window - 1; i < n; i++) {
    if ((i - window + 1) % m === 0) {
      weighted = 0
      for (let j = i - m + 1; j <= i; j++) weighted = alpha * values[j] + keep * weighted
    } else {
      weighted = keep * weighted + alpha * values[i] - leaving * values[i - m]
    }
    out[i] = decay * seeds[i - m] + weighted
  }
  return out
}

/** highest(values over the last `lookback`) at every index, exact (maxima do not round); a NaN makes NaNs. */
export const rollingHighest = (values: ArrayLike<number>, lookback: number): Float64Array => rollingExtreme(values, lookback, true)

/** lowest(values over the last `lookback`) at every index, exact. */
export const rollingLowest = (values: ArrayLike<number>, lookback: number): Float64Array => rollingExtreme(values, lookback, false)

// The blocks of rollingMoments again (van Herk / Gil-Werman): a window's extreme is that of the
// previous block's suffix and this block's prefix. Faster here than a deque of candidates.
function rollingExtreme(values: ArrayLike<number>, lookback: number, highest: boolean): Float64Array {
  needSeries(highest ? 'rollingHighest' : 'rollingLowest', lookback)
  const n = values.length
  // (A ternary, not Math.max through a variable: that one is not inlined, and costs 3x.)
  const better = (a: number, b: number) => ((highest ? a > b : a < b) ? a : b)
  const suffix = new Float64Array(n)
  for (let end = lookback; end < n; end += lookback) {
    let extreme = values[end - 1]
    for (let i = end - 1; i >= end - lookback; i--) suffix[i] = extreme = better(values[i], extreme)
  }
  const out = new Float64Array(n).fill(Number.NaN)
  let extreme = 0
  for (let i = 0; i < n; i++) {
    const at = i % lookback
    extreme = at === 0 ? values[i] : better(values[i], extreme)
    if (i >= lookback - 1) out[i] = at === lookback - 1 ? extreme : better(suffix[i - lookback + 1], extreme)
  }
  return out
}

// A series shorter than one window is fine (all NaN); only the period is a programming error.
function needSeries(what: string, period: number): void {
  if (!Number.isInteger(period) || period < 1) throw new RangeError(`${what}: period must be a positive integer, got ${period}`)
}
