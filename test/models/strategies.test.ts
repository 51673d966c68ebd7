// The strategy rules on hand-made candles, including their thresholds, and the seeded models'
// parameters (whose hashes anyone can recompute).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DIRECTION, STRATEGIES, donchianBreakout, emaCross, zscoreReversion, type Window } from '../../src/models/strategies.ts'
import { modelHash } from '../../src/signals/publisher.ts'

const test = suite('models: strategies')

const bars = (closes: number[]): Window => ({ close: closes, high: closes.map((c) => c + 0.5), low: closes.map((c) => c - 0.5) })
const rising = (n: number, from = 100) => Array.from({ length: n }, (_, i) => from + i)
const falling = (n: number, from = 500) => Array.from({ length: n }, (_, i) => from - i)

test('directions of the three actions; what each rule reads', () => {
  assert.equal(DIRECTION, { ENTER_LONG: 'LONG', HOLD: 'HOLD', EXIT_LONG: 'DE-RISK' })
  assert.equal([emaCross.reads, zscoreReversion.reads, donchianBreakout.reads], ['closes', 'closes', 'bars'])
})

test('ema_cross: reads 5 x slow_ema closes; long in an uptrend, flat in a downtrend, undecided when flat', () => {
  const p = { fast_ema: 20, slow_ema: 50, band_pct: 0.5 }
  assert.is(emaCross.candlesNeeded(p), 250)
  assert.is(emaCross.decide(bars(rising(250)), p), 'ENTER_LONG')
  assert.is(emaCross.decide(bars(falling(250)), p), 'EXIT_LONG')
  assert.is(emaCross.decide(bars(Array(250).fill(100)), p), 'HOLD')
})

test('ema_cross: the neutral band, computed by hand', () => {
  // fast 2 (alpha 2/3), slow 3 (alpha 1/2), 15 closes: 14 x 100 then 103.
  // fast: 100 ... then 2/3*103 + 1/3*100 = 102; slow: 100 ... then 1/2*103 + 1/2*100 = 101.5
  // fast/slow = 102/101.5 = 1.004926...: above a 0.4% band, inside a 0.5% band.
  const candles = bars([...Array(14).fill(100), 103])
  assert.is(emaCross.decide(candles, { fast_ema: 2, slow_ema: 3, band_pct: 0.4 }), 'ENTER_LONG')
  assert.is(emaCross.decide(candles, { fast_ema: 2, slow_ema: 3, band_pct: 0.5 }), 'HOLD')
  // Mirror image: 97 -> fast 98, slow 98.5, 98/98.5 = 0.99492: below a 0.5% band, inside 0.6%.
  const down = bars([...Array(14).fill(100), 97])
  assert.is(emaCross.decide(down, { fast_ema: 2, slow_ema: 3, band_pct: 0.5 }), 'EXIT_LONG')
  assert.is(emaCross.decide(down, { fast_ema: 2, slow_ema: 3, band_pct: 0.6 }), 'HOLD')
})

test('zscore_reversion: z <= entry_z enters, z >= exit_z exits, in between holds', () => {
  const p = { lookback: 8, entry_z: -1.5, exit_z: 0 }
  assert.is(zscoreReversion.candlesNeeded(p), 8)
  // Each window has mean 5 and population deviation 2 (see the indicator test).
  assert.is(zscoreReversion.decide(bars([9, 7, 5, 5, 4, 4, 4, 2]), p), 'ENTER_LONG') // z = -1.5, on the threshold
  assert.is(zscoreReversion.decide(bars([9, 7, 5, 5, 4, 2, 4, 4]), p), 'HOLD') // z = -0.5
  assert.is(zscoreReversion.decide(bars([2, 4, 4, 4, 5, 5, 7, 9]), p), 'EXIT_LONG') // z = 2
  assert.is(zscoreReversion.decide(bars([4, 6, 4, 6, 4, 6, 4, 6]), p), 'EXIT_LONG') // z = 1
  assert.is(zscoreReversion.decide(bars(Array(8).fill(3)), p), 'EXIT_LONG') // flat: z = 0 = exit_z
})

test('donchian_breakout: the close against the channel of the candles before it', () => {
  const p = { entry_lookback: 3, exit_lookback: 2 }
  assert.is(donchianBreakout.candlesNeeded(p), 4)
  // [high, low, close] per candle, oldest first
  const window = (rows: [number, number, number][]): Window => ({ high: rows.map((r) => r[0]), low: rows.map((r) => r[1]), close: rows.map((r) => r[2]) })
  // previous 3 highs 10, 12, 11 -> upper 12; previous 2 lows 8, 9 -> lower 8
  const before: [number, number, number][] = [
    [10, 7, 9],
    [12, 8, 10],
    [11, 9, 10],
  ]
  assert.is(donchianBreakout.decide(window([...before, [13, 11, 12.01]]), p), 'ENTER_LONG')
  assert.is(donchianBreakout.decide(window([...before, [13, 11, 12]]), p), 'HOLD') // equal to the high is no breakout
  assert.is(donchianBreakout.decide(window([...before, [9, 7, 8]]), p), 'HOLD') // equal to the low is no breakdown
  assert.is(donchianBreakout.decide(window([...before, [9, 6, 7.99]]), p), 'EXIT_LONG')
  // the first candle's low (7) is outside the exit window of 2, so 7.5 is a breakdown
  assert.is(donchianBreakout.decide(window([...before, [8, 7, 7.5]]), p), 'EXIT_LONG')
})

test('parameters are checked before a rule runs', () => {
  assert.is(emaCross.invalid({ fast_ema: 20, slow_ema: 50, band_pct: 0.5 }), null)
  assert.match(emaCross.invalid({ fast_ema: 50, slow_ema: 20, band_pct: 0.5 })!, /shorter/)
  assert.match(emaCross.invalid({ fast_ema: 20, slow_ema: 50 })!, /band_pct/)
  assert.match(zscoreReversion.invalid({ lookback: 20, entry_z: 0, exit_z: -1.5 })!, /below/)
  assert.match(donchianBreakout.invalid({ entry_lookback: 20, exit_lookback: 1.5 })!, /integers/)
  assert.equal(Object.keys(STRATEGIES).sort(), ['donchian_breakout', 'ema_cross', 'zscore_reversion'])
})

test('the seeded models: their parameters run, and their published hashes recompute', () => {
  const seeded: { id: string; strategy: string; version: string; parameters: Record<string, number>; hash: string }[] = [
    {
      id: 'trend-follower',
      strategy: 'ema_cross',
      version: '1.0.0',
      parameters: { fast_ema: 20, slow_ema: 50, band_pct: 0.5 },
      hash: 'b370e8211a8d0ca4c29effb6667f134fa0c6c4a52ecc486fa9b50b770861cf78',
    },
    {
      id: 'mean-reversion',
      strategy: 'zscore_reversion',
      version: '1.0.0',
      parameters: { lookback: 20, entry_z: -1.5, exit_z: 0 },
      hash: '42899cbdff44b5db3acae4b44d76ea33343aee1dfccc0f31d92fe3a4b4e7b173',
    },
    {
      id: 'breakout-momentum',
      strategy: 'donchian_breakout',
      version: '1.0.0',
      parameters: { entry_lookback: 20, exit_lookback: 10 },
      hash: '51dfea4b36a66493de33e0eecd29f6dd1f353244d27d895741aba16548600fdd',
    },
  ]
  for (const m of seeded) {
    assert.is(STRATEGIES[m.strategy].invalid(m.parameters), null, m.id)
    assert.is(modelHash(m), m.hash, m.id)
  }
  assert.is(zscoreReversion.candlesNeeded(seeded[1].parameters), 20)
  assert.is(donchianBreakout.candlesNeeded(seeded[2].parameters), 21)
})

test.run()
