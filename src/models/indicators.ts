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
 * How many standard deviations the last value lies from the window's mean. A flat window (zero
 * deviation) has its last value exactly at the mean, so its z-score is 0 rather than NaN.
 */
export function zScore(values: readonly number[]): number {
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
