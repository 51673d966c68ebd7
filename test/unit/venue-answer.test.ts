// What a waiting bot is told of the venue's answer before the ledger books it
// (src/trading/live/order-watch.ts venueAnswerOf): the status orders_now will show once booked, and
// nothing at all when the fills in hand do not add up to what the venue says filled.
import type { Order } from 'ccxt'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { venueAnswerOf } from '../../src/trading/live/order-watch.ts'
import type { VenueFill } from '../../src/trading/live/live-fills.ts'

const test = suite('unit: the venue answer relayed to a bot')

const order = (status: string, filled: number) => ({ id: '1001', status, filled }) as unknown as Order
const fill = (id: string, amount: number, price: number): VenueFill => ({ id, amount, price, fee: { cost: amount * 0.001, currency: 'BTC' }, timestamp: 1 })

test('a resting order: OPEN, or PARTIALLY_FILLED once something filled', () => {
  assert.equal(venueAnswerOf(order('open', 0), []), { venueOrderId: '1001', status: 'OPEN', filled: 0, fills: [] })
  const part = [fill('7', 0.004, 60_000)]
  assert.equal(venueAnswerOf(order('open', 0.004), part)?.status, 'PARTIALLY_FILLED')
})

test('a filled order with every fill: FILLED, the fills as given', () => {
  const fills = [fill('7', 0.006, 60_000), fill('8', 0.004, 60_010)]
  const answer = venueAnswerOf(order('closed', 0.01), fills)
  assert.is(answer?.status, 'FILLED')
  assert.is(answer?.filled, 0.01)
  assert.equal(answer?.fills, fills)
})

test('canceled or expired (a MARKET order the book could not fill): CANCELED', () => {
  assert.is(venueAnswerOf(order('canceled', 0), [])?.status, 'CANCELED')
  assert.is(venueAnswerOf(order('expired', 0.002), [fill('9', 0.002, 60_000)])?.status, 'CANCELED')
})

test('nothing relayed when the fills in hand fall short of what filled, or the status is not one the ledger books as such', () => {
  // Filled before, its fills already booked: the ledger answers, with every fill.
  assert.is(venueAnswerOf(order('canceled', 0.004), []), undefined)
  assert.is(venueAnswerOf(order('closed', 0.01), [fill('7', 0.006, 60_000)]), undefined)
  assert.is(venueAnswerOf(order('rejected', 0), []), undefined)
  assert.is(venueAnswerOf({ status: 'open', filled: 0 } as unknown as Order, []), undefined)
})

test.run()
