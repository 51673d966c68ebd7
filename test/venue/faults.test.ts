// The venue misbehaving, through the real ccxt: down (connection refused), hanging, answering 5xx,
// and placing an order but losing the answer; each surfaces as its ccxt class, and an order whose
// answer was lost is found again by its client order id, exactly once. Also: a first loadMarkets()
// that fails does not break the exchange, TLS trusts the CA file and nothing else, bad options are
// refused, and the venue runs as a child process with the same control calls.
import * as ccxt from 'ccxt'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { DomainError } from '../../src/shared/errors.ts'
import { openExchange, venueError, type Exchange } from '../../src/venues/exchange.ts'
import { startVenue, startVenueChild, type Venue, venueKey } from '../support/venue/index.ts'
import { refusal, trader } from './fixture.ts'

const test = suite('venue: faults')
let venue: Venue
let exchange: Exchange

test.before(async () => {
  venue = await startVenue()
  exchange = await trader(venue, 'main', { USDT: 10_000 })
  await venue.setPrice('BTC/USDT', 60_000)
  await exchange.loadMarkets()
})
test.after(async () => {
  await venue.close()
})

/** The orders the venue holds under a client order id. */
const held = async (clientOrderId: string) => (await venue.orders({ clientOrderId })).length

test('down: connection refused is a NetworkError; back up, the same exchange works again', async () => {
  await venue.down()
  const error = await refusal(exchange.fetchBalance())
  assert.is(error.constructor, ccxt.NetworkError)
  assert.match(venueError(exchange, error).message, /ECONNREFUSED/)
  assert.not.match(venueError(exchange, error).message, /signature=/)
  await venue.up()
  assert.is((await exchange.fetchBalance()).USDT.free, 10_000)
})

test('hang: no answer within the ccxt timeout is a RequestTimeout', async () => {
  await venue.fault({ kind: 'hang', match: { path: '/api/v3/account' }, times: 1 })
  exchange.timeout = 500
  const error = await refusal(exchange.fetchBalance())
  exchange.timeout = 10_000
  assert.instance(error, ccxt.RequestTimeout)
  assert.is(venueError(exchange, error).code, undefined)
  assert.ok(await exchange.fetchBalance())
})

test('5xx: 500 and 503 are ExchangeNotAvailable', async () => {
  for (const status of [500, 503] as const) {
    await venue.fault({ kind: 'status', status, times: 1 })
    const error = await refusal(exchange.fetchTime())
    assert.instance(error, ccxt.ExchangeNotAvailable)
    assert.match(venueError(exchange, error).message, new RegExp(`^GET \\S+/api/v3/time ${status} `))
  }
})

test('the order placed, the answer dropped: a NetworkError, and the order found by its client id', async () => {
  await venue.fault({ kind: 'drop', match: { method: 'POST', path: '/api/v3/order' }, times: 1 })
  const error = await refusal(exchange.createOrder('BTC/USDT', 'limit', 'buy', 0.01, 59_000, { clientOrderId: 'ord_dropped' }))
  assert.is(error.constructor, ccxt.NetworkError)
  assert.match(error.message, /other side closed/)
  assert.is(await held('ord_dropped'), 1)
  const found = await exchange.fetchOrder('', 'BTC/USDT', { clientOrderId: 'ord_dropped' })
  assert.equal([found.status, found.amount, found.price], ['open', 0.01, 59_000])
  assert.equal(
    (await exchange.fetchOpenOrders('BTC/USDT')).map((o) => o.clientOrderId),
    ['ord_dropped'],
  )
  await exchange.cancelOrder(found.id!, 'BTC/USDT')
})

test('placed, then no answer or a 503: RequestTimeout or ExchangeNotAvailable, the fill on the venue', async () => {
  await venue.fault({ kind: 'hang', execute: true, match: { method: 'POST', path: '/api/v3/order' }, times: 1 })
  exchange.timeout = 500
  assert.instance(await refusal(exchange.createOrder('BTC/USDT', 'market', 'buy', 0.001, undefined, { clientOrderId: 'ord_slow' })), ccxt.RequestTimeout)
  exchange.timeout = 10_000
  await venue.fault({ kind: 'status', status: 503, execute: true, match: { method: 'POST', path: '/api/v3/order' }, times: 1 })
  assert.instance(await refusal(exchange.createOrder('BTC/USDT', 'market', 'buy', 0.001, undefined, { clientOrderId: 'ord_503' })), ccxt.ExchangeNotAvailable)
  for (const id of ['ord_slow', 'ord_503']) {
    assert.is(await held(id), 1)
    const found = await exchange.fetchOrder('', 'BTC/USDT', { clientOrderId: id })
    assert.equal([found.status, found.filled], ['closed', 0.001])
  }
})

test('a first loadMarkets that failed is retried by the next call, not handed back', async () => {
  await venue.down()
  const fresh = await trader(venue, 'late', { USDT: 50 })
  assert.instance(await refusal(fresh.loadMarkets()), ccxt.NetworkError)
  await venue.up()
  await venue.clearRequests()
  assert.is((await fresh.fetchBalance()).USDT.free, 50)
  assert.equal(
    (await venue.requests()).map((r) => r.path),
    ['/api/v3/exchangeInfo', '/api/v3/account'],
  )
})

test("TLS: without the CA file the venue's certificate is refused (a plain Error, not a ccxt one)", async () => {
  const untrusting = await openExchange({ exchange: 'binance', venueUrl: venue.url })
  const error = await refusal(untrusting.fetchTime())
  assert.not.instance(error, ccxt.BaseError)
  assert.is((error as NodeJS.ErrnoException).code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE')
})

test('bad options: a venue URL with a path, an exchange ccxt does not know', async () => {
  for (const venueUrl of ['https://127.0.0.1:9443/api', 'ftp://127.0.0.1', 'https://u:p@127.0.0.1', 'not a url']) {
    const error = await refusal(openExchange({ exchange: 'binance', venueUrl }))
    assert.instance(error, DomainError)
    assert.is((error as DomainError).code, 'validation_failed')
  }
  const unknown = await refusal(openExchange({ exchange: 'nosuchexchange' }))
  assert.match((unknown as DomainError).detail, /^exchange: "nosuchexchange" is not an exchange ccxt/)
})

test('as a child process: the same venue and control calls over IPC', async () => {
  const key = venueKey('child')
  const child = await startVenueChild({ keys: [key], balances: { USDT: 1000 } })
  try {
    const remote = await openExchange({ exchange: 'binance', venueUrl: child.url, caFile: child.caFile, apiKey: key.apiKey, secret: key.secret })
    await child.setPrice('BTC/USDT', 50_000)
    const order = await remote.createOrder('BTC/USDT', 'market', 'buy', 0.002)
    assert.equal([order.status, order.cost], ['closed', 100])
    assert.equal(await child.balances(), { USDT: { free: '900.00000000', locked: '0.00000000' }, BTC: { free: '0.00199800', locked: '0.00000000' } })
    assert.equal(
      (await child.orders()).map((o) => o.clientOrderId),
      [order.clientOrderId],
    )
    assert.match((await refusal(child.fillOrder({ symbol: 'BTC/USDT', orderId: 1 }))).message, /no order/)
  } finally {
    await child.close()
  }
  assert.ok(child.process.exitCode !== null || child.process.signalCode !== null)
})

test.run()
