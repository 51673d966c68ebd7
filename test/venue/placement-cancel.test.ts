// Canceling LIVE orders by client order id through the real ccxt against the test venue: open,
// partly filled, filled before the cancel (the kill switch's VENUE_CANCEL_INCOMPLETE), unknown, and
// a cancel that got no answer, a 5xx or a refused connection.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cancelOnce, placeOnce } from '../../src/venues/placement.ts'
import { startVenue, type Venue } from '../support/venue/index.ts'
import { account as accountOn, limitBuy } from './fixture-placement.ts'

const test = suite('venue: canceling orders by client order id')
let venue: Venue
const account = () => accountOn(venue)

test.before(async () => {
  venue = await startVenue()
  await venue.setPrice('BTC/USDT', 60_000)
})
test.after(async () => {
  await venue.close()
})

test('cancelOnce: an open order is canceled, a partly filled one keeps its fill, a filled one is already_done', async () => {
  const { exchange, sent, label } = await account()
  await placeOnce(exchange, limitBuy('ord_c1'))
  const open = await cancelOnce(exchange, { symbol: 'BTC/USDT', clientOrderId: 'ord_c1' })
  assert.equal([open.outcome, open.filledQuantity, open.venueOrder?.info.origClientOrderId], ['canceled', 0, 'ord_c1'])
  await placeOnce(exchange, limitBuy('ord_c2'))
  await venue.fillOrder({ clientOrderId: 'ord_c2' }, '0.004')
  const partly = await cancelOnce(exchange, { symbol: 'BTC/USDT', clientOrderId: 'ord_c2' })
  assert.equal([partly.outcome, partly.filledQuantity], ['canceled', 0.004])
  await placeOnce(exchange, limitBuy('ord_c3'))
  await venue.fillOrder({ clientOrderId: 'ord_c3' })
  await venue.clearRequests()
  const filled = await cancelOnce(exchange, { symbol: 'BTC/USDT', clientOrderId: 'ord_c3' })
  assert.equal([filled.outcome, filled.filledQuantity, filled.venueOrder?.status], ['already_done', 0.01, 'closed'])
  assert.is(filled.reason, 'order ord_c3 was closed before the cancel')
  assert.equal(await sent(), ['DELETE order 400', 'GET order 200'])
  assert.equal(
    (await venue.orders({ account: label })).map((o) => [o.clientOrderId, o.status, o.executedQty]),
    [
      ['ord_c1', 'CANCELED', '0.00000000'],
      ['ord_c2', 'CANCELED', '0.00400000'],
      ['ord_c3', 'FILLED', '0.01000000'],
    ],
  )
})

test('cancelOnce: an unknown id is canceled (nothing to cancel); a dropped, a 5xx and a refused cancel', async () => {
  const { exchange, sent, held } = await account()
  const target = (clientOrderId: string) => ({ symbol: 'BTC/USDT', clientOrderId })
  const none = await cancelOnce(exchange, target('ord_never'))
  assert.equal(none, { outcome: 'canceled', filledQuantity: 0, reason: 'no order ord_never on the venue: nothing to cancel', unanswered: false })
  assert.equal(await sent(), ['DELETE order 400', 'GET order 400'])
  await placeOnce(exchange, limitBuy('ord_cdrop'))
  await placeOnce(exchange, limitBuy('ord_c503'))
  await venue.clearRequests()
  await venue.fault({ kind: 'drop', match: { method: 'DELETE' }, times: 1 })
  const dropped = await cancelOnce(exchange, target('ord_cdrop'))
  assert.equal([dropped.outcome, dropped.venueOrder?.status, dropped.unanswered], ['canceled', 'canceled', true])
  await venue.fault({ kind: 'status', status: 503, match: { method: 'DELETE' }, times: 1 })
  assert.is((await cancelOnce(exchange, target('ord_c503'), { backoffMs: 10 })).outcome, 'canceled')
  assert.equal(await sent(), ['DELETE order -', 'GET order 200', 'DELETE order 503', 'GET order 200', 'DELETE order 200'])
  assert.equal([(await held('ord_cdrop'))[0].status, (await held('ord_c503'))[0].status], ['CANCELED', 'CANCELED'])
  await venue.down()
  const down = await cancelOnce(exchange, target('ord_cdrop'), { backoffMs: 10 })
  await venue.up()
  assert.is(down.outcome, 'unknown')
  assert.match(down.reason!, /^order ord_cdrop not canceled: .*ECONNREFUSED/)
})

test.run()
