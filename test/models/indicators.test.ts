// Indicators against values computed by hand (the arithmetic is in the comments).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { ema, emaSeries, highest, lowest, sma, stdev, zScore } from '../../src/models/indicators.ts'

const test = suite('models: indicators')

function close(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) < 1e-12, `${what}: ${actual} != ${expected}`)
}

test('sma: the arithmetic mean', () => {
  assert.is(sma([1, 2, 3, 4, 5]), 3) // 15 / 5
  assert.is(sma([10]), 10)
  close(sma([0.1, 0.2, 0.3]), 0.2, 'sma 0.1..0.3') // 0.6 / 3
})

test('ema: seeded with the SMA of the first period values, then alpha = 2/(n+1)', () => {
  // period 3: alpha = 0.5, seed = (1+2+3)/3 = 2; then 0.5*4 + 0.5*2 = 3, 0.5*5 + 0.5*3 = 4, 0.5*6 + 0.5*4 = 5
  assert.equal(emaSeries([1, 2, 3, 4, 5, 6], 3), [2, 3, 4, 5])
  assert.is(ema([1, 2, 3, 4, 5, 6], 3), 5)
  // period 4: alpha = 0.4, seed = (10+20+30+40)/4 = 25; 0.4*50 + 0.6*25 = 35; 0.4*10 + 0.6*35 = 25
  assert.equal(emaSeries([10, 20, 30, 40, 50, 10], 4), [25, 35, 25])
  close(ema([10, 20, 30, 40, 50, 10], 4), 25, 'ema period 4')
  // exactly `period` values: the EMA is the SMA
  assert.is(ema([2, 4, 6], 3), 4)
  // a constant series stays constant
  assert.is(ema(Array(50).fill(7), 20), 7)
})

test('ema and emaSeries agree on every prefix', () => {
  const values = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9]
  const series = emaSeries(values, 5)
  for (let end = 5; end <= values.length; end++) close(ema(values.slice(0, end), 5), series[end - 5], `prefix ${end}`)
})

test('stdev: population standard deviation', () => {
  // mean 5; squared deviations 9,1,1,1,0,0,4,16 = 32; 32/8 = 4; sqrt 4 = 2
  assert.is(stdev([2, 4, 4, 4, 5, 5, 7, 9]), 2)
  assert.is(stdev([5, 5, 5]), 0)
  // mean 2; deviations 1,0,1 -> 2/3
  close(stdev([1, 2, 3]), Math.sqrt(2 / 3), 'stdev 1,2,3')
})

test('zScore: distance of the last value from the mean in standard deviations', () => {
  assert.is(zScore([2, 4, 4, 4, 5, 5, 7, 9]), 2) // (9 - 5) / 2
  assert.is(zScore([9, 7, 5, 5, 4, 4, 4, 2]), -1.5) // (2 - 5) / 2
  assert.is(zScore([9, 7, 5, 5, 4, 2, 4, 4]), -0.5) // (4 - 5) / 2
  assert.is(zScore([3, 3, 3, 3]), 0) // flat: no deviation, no NaN
})

test('highest and lowest', () => {
  assert.is(highest([3, 9, -2, 9, 4]), 9)
  assert.is(lowest([3, 9, -2, 9, 4]), -2)
  assert.is(highest([-5]), -5)
})

test('too few values is a programming error, not a number', () => {
  assert.throws(() => sma([]), /needs 1 values/)
  assert.throws(() => ema([1, 2], 3), /needs 3 values, got 2/)
  assert.throws(() => ema([1, 2, 3], 0), /positive integer/)
  assert.throws(() => highest([]), /needs 1/)
  assert.throws(() => stdev([]), /needs 1/)
})

test.run()
