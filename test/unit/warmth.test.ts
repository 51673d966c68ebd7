// When a lane keeps the venue warm (src/trading/live/warmth.ts): from WARM_EVERY_MS after its last
// venue call, for WARM_FOR_MS after the last order of each pair, and for those pairs only.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { WARM_EVERY_MS, WARM_FOR_MS, Warmth } from '../../src/trading/live/warmth.ts'

const test = suite('unit: keeping the venue warm')
const T = 1_700_000_000_000

test('nothing traded: nothing read', () => {
  assert.equal(new Warmth().due(T), [])
})

test('read once the lane has called nothing for WARM_EVERY_MS; a call of its own starts the wait again', () => {
  const warmth = new Warmth()
  warmth.traded('BTC/USDT', T)
  assert.equal(warmth.due(T + WARM_EVERY_MS - 1), [])
  assert.equal(warmth.due(T + WARM_EVERY_MS), ['BTC/USDT'])
  warmth.called(T + WARM_EVERY_MS)
  assert.equal(warmth.due(T + 2 * WARM_EVERY_MS - 1), [])
  assert.equal(warmth.due(T + 2 * WARM_EVERY_MS), ['BTC/USDT'])
})

test('each pair for WARM_FOR_MS after its own last order', () => {
  const warmth = new Warmth()
  warmth.traded('BTC/USDT', T)
  warmth.traded('ETH/USDT', T + 60_000)
  assert.equal(warmth.due(T + WARM_FOR_MS), ['BTC/USDT', 'ETH/USDT'])
  assert.equal(warmth.due(T + WARM_FOR_MS + 1), ['ETH/USDT'])
  assert.equal(warmth.due(T + 60_000 + WARM_FOR_MS + 1), [])
})

test.run()
