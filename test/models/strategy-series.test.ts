// The series forms against the rules applied to each window on their own, written out here in a few
// lines each (the SMA-seeded EMA loop, the population deviation, the max and min of slices): on
// seeded random series at very different price levels, with flat stretches and exact ties, every
// action equals, index by index, and every indicator agrees to 1e-9 relative.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { rollingHighest, rollingLowest, rollingMean, rollingStdev, rollingZScore, windowedEma } from '../../src/models/indicators.ts'
import { ACTION_CODE, ACTION_OF_CODE, STRATEGIES, type Window } from '../../src/models/strategies.ts'
import { prng } from '../../src/shared/prng.ts'

const test = suite('models: strategy series')

// --- the per-window definitions, independent of src/models ---
function emaOf(w: readonly number[], period: number): number {
  let current = 0
  for (let i = 0; i < period; i++) current += w[i]
  current /= period
  const alpha = 2 / (period + 1)
  for (let i = period; i < w.length; i++) current = alpha * w[i] + (1 - alpha) * current
  return current
}
function meanOf(w: readonly number[]): number {
  let sum = 0
  for (const v of w) sum += v
  return sum / w.length
}
function stdevOf(w: readonly number[]): number {
  const mean = meanOf(w)
  let squares = 0
  for (const v of w) squares += (v - mean) ** 2
  return Math.sqrt(squares / w.length)
}
function zOf(w: readonly number[]): number {
  if (Math.max(...w) === Math.min(...w)) return 0 // flat: the last close is the mean
  const deviation = stdevOf(w)
  return deviation === 0 ? 0 : (w[w.length - 1] - meanOf(w)) / deviation
}
type P = Record<string, number>
const RULES: Record<string, { needed: (p: P) => number; act: (w: Window, p: P) => string; margin: (w: Window, p: P) => number }> = {
  ema_cross: {
    needed: (p) => 5 * p.slow_ema,
    act: (w, p) => {
      const [fast, slow] = [emaOf(w.close, p.fast_ema), emaOf(w.close, p.slow_ema)]
      return fast > slow * (1 + p.band_pct / 100) ? 'ENTER_LONG' : fast < slow * (1 - p.band_pct / 100) ? 'EXIT_LONG' : 'HOLD'
    },
    margin: (w, p) => {
      const [fast, slow] = [emaOf(w.close, p.fast_ema), emaOf(w.close, p.slow_ema)]
      return Math.min(Math.abs(fast - slow * (1 + p.band_pct / 100)), Math.abs(fast - slow * (1 - p.band_pct / 100))) / slow
    },
  },
  zscore_reversion: {
    needed: (p) => p.lookback,
    act: (w, p) => (zOf(w.close) <= p.entry_z ? 'ENTER_LONG' : zOf(w.close) >= p.exit_z ? 'EXIT_LONG' : 'HOLD'),
    margin: (w, p) => Math.min(Math.abs(zOf(w.close) - p.entry_z), Math.abs(zOf(w.close) - p.exit_z)),
  },
  donchian_breakout: {
    needed: (p) => Math.max(p.entry_lookback, p.exit_lookback) + 1,
    act: (w, p) => {
      const last = w.close.length - 1
      const upper = Math.max(...w.high.slice(last - p.entry_lookback, last))
      const lower = Math.min(...w.low.slice(last - p.exit_lookback, last))
      return w.close[last] > upper ? 'ENTER_LONG' : w.close[last] < lower ? 'EXIT_LONG' : 'HOLD'
    },
    margin: (w, p) => {
      const last = w.close.length - 1
      const upper = Math.max(...w.high.slice(last - p.entry_lookback, last))
      return Math.min(Math.abs(w.close[last] - upper), Math.abs(w.close[last] - Math.min(...w.low.slice(last - p.exit_lookback, last))))
    },
  },
}
const PARAMETERS: Record<string, P[]> = {
  ema_cross: [
    { fast_ema: 2, slow_ema: 3, band_pct: 0 },
    { fast_ema: 5, slow_ema: 12, band_pct: 0 },
    { fast_ema: 3, slow_ema: 7, band_pct: 0.2 },
    { fast_ema: 10, slow_ema: 30, band_pct: 1 },
    { fast_ema: 20, slow_ema: 50, band_pct: 0.5 },
  ],
  zscore_reversion: [
    { lookback: 2, entry_z: -1, exit_z: 1 }, // two closes: z is exactly -1 or 1, on a threshold
    { lookback: 5, entry_z: -1, exit_z: 0 },
    { lookback: 8, entry_z: -1.5, exit_z: 0 },
    { lookback: 8, entry_z: -1.5, exit_z: 2 }, // exact ties in the designed series below
    { lookback: 20, entry_z: -1.5, exit_z: 0 },
    { lookback: 60, entry_z: -2, exit_z: 0.5 },
  ],
  donchian_breakout: [
    { entry_lookback: 2, exit_lookback: 2 },
    { entry_lookback: 5, exit_lookback: 30 },
    { entry_lookback: 20, exit_lookback: 10 },
    { entry_lookback: 55, exit_lookback: 20 },
  ],
}

// --- seeded series: random walks at each price level, flat stretches of flat bars, rounded to 8 digits ---
const LEVELS = [60000, 3000, 150, 1, 0.12, 0.00042]
function series(seed: number, level: number, length: number): Window {
  const random = prng(seed)
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
  const out: Window & { close: number[]; high: number[]; low: number[] } = { close: [], high: [], low: [] }
  let close = level
  let flat = 0
  const volatility = [0.0005, 0.01, 0.04][seed % 3]
  while (out.close.length < length) {
    if (flat === 0 && random() < 0.04) flat = 1 + Math.floor(random() * 70)
    if (flat > 0) flat--
    else close = Number((close * Math.exp(volatility * normal())).toPrecision(8))
    const wick = flat > 0 ? 0 : volatility * Math.abs(normal())
    out.close.push(close)
    out.high.push(Number((close * (1 + wick)).toPrecision(8)))
    out.low.push(Number((close * (1 - wick)).toPrecision(8)))
  }
  return out
}
// Windows whose z is exactly -1.5 or 2 (those of test/models/indicators.test.ts, scaled and moved
// to each price level): the two forms round them to opposite sides about a third of the time.
function ties(seed: number, length: number): Window {
  const random = prng(seed)
  const close: number[] = []
  while (close.length < length) {
    const level = LEVELS[Math.floor(random() * LEVELS.length)] * (1 + random())
    const step = level * [1e-2, 1e-4, 1e-6][Math.floor(random() * 3)] * (0.5 + random())
    for (const b of [9, 7, 5, 5, 4, 4, 4, 2, 2, 4, 4, 4, 5, 5, 7, 9]) close.push(level + b * step)
  }
  return { close, high: close, low: close }
}
const SERIES = [...LEVELS.flatMap((level, i) => [series(1000 + 2 * i, level, 700), series(1001 + 2 * i, level, 700)]), ties(3, 700)]
const close = (actual: number, expected: number, scale: number) => Math.abs(actual - expected) <= 1e-9 * Math.max(Math.abs(expected), scale)
const window = (s: Window, end: number, needed: number): Window => ({
  close: s.close.slice(end + 1 - needed, end + 1),
  high: s.high.slice(end + 1 - needed, end + 1),
  low: s.low.slice(end + 1 - needed, end + 1),
})

for (const [name, sets] of Object.entries(PARAMETERS)) {
  test(`${name}: actions equal the per-window rule at every index, ties included; decide is the last of them`, () => {
    const strategy = STRATEGIES[name]
    const rule = RULES[name]
    let windows = 0
    let ties = 0
    for (const p of sets) {
      const needed = rule.needed(p)
      assert.is(strategy.candlesNeeded(p), needed)
      for (const s of SERIES) {
        const codes = strategy.actions(s, p)
        assert.is(codes.length, s.close.length)
        for (let i = 0; i < needed - 1; i++) assert.is(codes[i], 0)
        for (let end = needed - 1; end < s.close.length; end++) {
          const w = window(s, end, needed)
          const expected = rule.act(w, p)
          if (ACTION_OF_CODE[codes[end]] !== expected)
            assert.unreachable(`${name} ${JSON.stringify(p)} at ${end} of a series at ${s.close[0]}: ${ACTION_OF_CODE[codes[end]]}, expected ${expected}`)
          windows++
          if (rule.margin(w, p) <= 1e-9 * s.close[end]) ties++
          if (end % 37 === 0) assert.is(strategy.decide(w, p), expected)
        }
      }
    }
    assert.ok(windows > 10_000, `${windows} windows`)
    assert.ok(ties > 100, `only ${ties} windows within rounding of a threshold`) // the tie-break runs, not just the fast path
  })
}

test('a zero close takes the per-window form, with the same results', () => {
  const walk = series(77, 0.12, 300)
  const s = { ...walk, close: walk.close.map((c, i) => (i === 150 ? 0 : c)) }
  for (const name of ['ema_cross', 'zscore_reversion']) {
    for (const p of PARAMETERS[name]) {
      const codes = STRATEGIES[name].actions(s, p)
      const needed = RULES[name].needed(p)
      for (let end = needed - 1; end < 300; end++) assert.is(ACTION_OF_CODE[codes[end]], RULES[name].act(window(s, end, needed), p), `${name} at ${end}`)
    }
  }
})

test('series indicators agree with the per-window definitions to 1e-9 relative; extremes exactly', () => {
  for (const s of SERIES) {
    for (const [period, length] of [
      [2, 3],
      [3, 15],
      [12, 60],
      [50, 250],
      [7, 7],
    ]) {
      const series = windowedEma(s.close, period, length)
      for (let end = 0; end < s.close.length; end++) {
        if (end < length - 1) assert.ok(Number.isNaN(series[end]))
        else if (!close(series[end], emaOf(s.close.slice(end + 1 - length, end + 1), period), 0)) assert.unreachable(`ema ${period}/${length} at ${end}`)
      }
    }
    for (const lookback of [2, 5, 20, 60]) {
      const [means, deviations, zs] = [rollingMean(s.close, lookback), rollingStdev(s.close, lookback), rollingZScore(s.close, lookback)]
      const [highs, lows] = [rollingHighest(s.high, lookback), rollingLowest(s.low, lookback)]
      for (let end = lookback - 1; end < s.close.length; end++) {
        const w = s.close.slice(end + 1 - lookback, end + 1)
        // The per-window deviation is off by up to lookback x epsilon x the mean: 1e-10 where a window
        // of closes near 70,000 is flat and it should be 0. Relative agreement is asked above that.
        const floor = lookback * Number.EPSILON * meanOf(w)
        const ok = close(means[end], meanOf(w), 0) && Math.abs(deviations[end] - stdevOf(w)) <= 1e-9 * stdevOf(w) + floor && close(zs[end], zOf(w), 1)
        if (!ok) assert.unreachable(`lookback ${lookback} at ${end}: ${[means[end], deviations[end], zs[end]]} vs ${[meanOf(w), stdevOf(w), zOf(w)]}`)
        assert.is(highs[end], Math.max(...s.high.slice(end + 1 - lookback, end + 1)))
        assert.is(lows[end], Math.min(...s.low.slice(end + 1 - lookback, end + 1)))
      }
    }
  }
})

test('action codes: 0 none, 1 ENTER_LONG, 2 HOLD, 3 EXIT_LONG', () => {
  assert.equal(ACTION_CODE, { ENTER_LONG: 1, HOLD: 2, EXIT_LONG: 3 })
  assert.equal(ACTION_OF_CODE, [null, 'ENTER_LONG', 'HOLD', 'EXIT_LONG'])
  assert.equal([...STRATEGIES.ema_cross.actions({ close: [1, 2, 3], high: [], low: [] }, PARAMETERS.ema_cross[0])], [0, 0, 0])
})

test.run()
