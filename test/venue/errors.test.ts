// Binance's refusals through the real ccxt: each surfaces as its ccxt class, and venueError()
// recovers the venue's own code and message. Signatures are checked byte for byte (Binance's own
// documented example included), clocks either way, filters, balances, key rights and the weight limit.
import * as ccxt from 'ccxt'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openExchange, venueError, type Exchange } from '../../src/venues/exchange.ts'
import { hmacHex, signedPayload } from '../support/venue/auth.ts'
import { startVenue, type Venue, venueKey } from '../support/venue/index.ts'
import { refusal, trader } from './fixture.ts'

const test = suite('venue: refusals as ccxt errors with the venue code')
let venue: Venue
let exchange: Exchange

test.before(async () => {
  venue = await startVenue()
  exchange = await trader(venue, 'main', { USDT: 100, BTC: 0.01 })
  await venue.setPrice('BTC/USDT', 60_000)
})
test.after(async () => {
  await venue.close()
})

/** The error, its ccxt class and what venueError() makes of it. */
async function refused(call: Promise<unknown>, on: Exchange = exchange) {
  const error = await refusal(call)
  return { error, detail: venueError(on, error) }
}

test("the HMAC is Binance's: its documented example signs to its documented signature", () => {
  const secret = 'NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j'
  const payload = 'symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559'
  assert.is(hmacHex(secret, payload), 'c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71')
  // Query string and body are signed as one text, with no separator between them.
  assert.is(signedPayload('symbol=LTCBTC&side=BUY&signature=ab', 'quantity=1&price=0.1').payload, 'symbol=LTCBTC&side=BUYquantity=1&price=0.1')
})

test('one byte changed after signing, in the query string or in the body, is refused with -1022', async () => {
  const get = exchange.sign('account', 'private', 'GET', {})
  const tampered = get.url.replace('recvWindow=5000', 'recvWindow=5001')
  assert.is.not(tampered, get.url)
  const { error, detail } = await refused(exchange.fetch(tampered, 'GET', get.headers))
  assert.instance(error, ccxt.AuthenticationError)
  assert.equal([detail.code, detail.message], [-1022, 'Signature for this request is not valid.'])
  // Untouched, the same request passes; and the signature's hex digits may come in any case.
  assert.ok(Array.isArray((await exchange.fetch(get.url, 'GET', get.headers)).balances))
  const upper = get.url.replace(/signature=([0-9a-f]+)/, (_: string, hex: string) => `signature=${hex.toUpperCase()}`)
  assert.ok(Array.isArray((await exchange.fetch(upper, 'GET', get.headers)).balances))
  const post = exchange.sign('order', 'private', 'POST', { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.0001' })
  const body = post.body.replace('quantity=0.0001', 'quantity=0.0002')
  const forged = await refused(exchange.fetch(post.url, 'POST', post.headers, body))
  assert.equal(forged.detail.code, -1022)
  assert.equal(await venue.orders({ account: 'main' }), [])
})

test('a wrong secret is -1022, an unknown key -2015: both AuthenticationError', async () => {
  const key = venueKey('main').apiKey
  const wrongSecret = await openExchange({ exchange: 'binance', venueUrl: venue.url, caFile: venue.caFile, apiKey: key, secret: 'not-the-secret' })
  const bad = await refused(wrongSecret.fetchBalance(), wrongSecret)
  assert.instance(bad.error, ccxt.AuthenticationError)
  assert.is(bad.detail.reason, '-1022 Signature for this request is not valid.')
  const stranger = await openExchange({ exchange: 'binance', venueUrl: venue.url, caFile: venue.caFile, apiKey: 'unknownKey', secret: 'x' })
  const unknown = await refused(stranger.fetchBalance(), stranger)
  assert.instance(unknown.error, ccxt.AuthenticationError)
  assert.is(unknown.detail.reason, '-2015 Invalid API-key, IP, or permissions for action.')
})

test('a clock behind by more than recvWindow, or 1 s ahead, is -1021: InvalidNonce, a NetworkError', async () => {
  exchange.options.timeDifference = 6000 // ccxt stamps requests 6 s in the past
  const behind = await refused(exchange.fetchBalance())
  assert.instance(behind.error, ccxt.InvalidNonce)
  assert.instance(behind.error, ccxt.NetworkError)
  assert.is(behind.detail.reason, '-1021 Timestamp for this request is outside of the recvWindow.')
  exchange.options.timeDifference = -1500
  const ahead = await refused(exchange.fetchBalance())
  assert.is(ahead.detail.reason, "-1021 Timestamp for this request was 1000ms ahead of the server's time.")
  exchange.options.timeDifference = 0
  await venue.setClockOffset(10_000)
  assert.is((await refused(exchange.fetchBalance())).detail.code, -1021)
  await venue.setClockOffset(0)
  assert.ok(await exchange.fetchBalance())
})

test('filter failures are -1013: LOT_SIZE and PRICE_FILTER as InvalidOrder, NOTIONAL as BadRequest; ccxt stops what rounds to 0', async () => {
  const base = { symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC' }
  for (const quantity of ['0.000005', '0.000015']) {
    // Below minQty, then off the step size: ccxt's own createOrder would round these first.
    const lot = await refused(exchange.privatePostOrder({ ...base, quantity, price: '50000' }))
    assert.instance(lot.error, ccxt.InvalidOrder)
    assert.is(lot.detail.reason, '-1013 Filter failure: LOT_SIZE')
  }
  await venue.clearRequests()
  const local = await refused(exchange.createOrder('BTC/USDT', 'limit', 'buy', 0.000005, 50_000))
  assert.instance(local.error, ccxt.InvalidOrder)
  assert.equal([local.detail.code, await venue.requests()], [undefined, []])
  const tick = await refused(exchange.privatePostOrder({ ...base, quantity: '0.001', price: '50000.001' }))
  assert.instance(tick.error, ccxt.InvalidOrder)
  assert.is(tick.detail.reason, '-1013 Filter failure: PRICE_FILTER')
  // 0.00005 BTC x 50,000 = 2.5 USDT, under the 5 USDT minimum; MARKET orders are held to it too.
  const small = await refused(exchange.createOrder('BTC/USDT', 'limit', 'buy', 0.00005, 50_000))
  assert.instance(small.error, ccxt.BadRequest)
  assert.not.instance(small.error, ccxt.InvalidOrder)
  assert.is(small.detail.reason, '-1013 Filter failure: NOTIONAL')
  assert.is((await refused(exchange.createOrder('BTC/USDT', 'market', 'sell', 0.00005))).detail.reason, '-1013 Filter failure: NOTIONAL')
  assert.equal(await venue.orders({ account: 'main' }), [])
})

test('insufficient balance is -2010: InsufficientFunds, and no order is made', async () => {
  const { error, detail } = await refused(exchange.createOrder('BTC/USDT', 'market', 'buy', 0.01))
  assert.instance(error, ccxt.InsufficientFunds)
  assert.equal(detail, {
    code: -2010,
    message: 'Account has insufficient balance for requested action.',
    retryAfterSeconds: undefined,
    reason: '-2010 Account has insufficient balance for requested action.',
  })
  assert.is((await refused(exchange.createOrder('BTC/USDT', 'limit', 'sell', 0.02, 70_000))).detail.code, -2010)
  assert.equal(await venue.orders({ account: 'main' }), [])
})

test('a duplicate client order id of an open order is -2010; a finished one may be used again', async () => {
  const first = await exchange.createOrder('BTC/USDT', 'limit', 'sell', 0.001, 70_000, { clientOrderId: 'ord_dup' })
  const dup = await refused(exchange.createOrder('BTC/USDT', 'limit', 'sell', 0.001, 71_000, { clientOrderId: 'ord_dup' }))
  assert.instance(dup.error, ccxt.InvalidOrder)
  assert.is(dup.detail.reason, '-2010 Duplicate order sent.')
  await exchange.cancelOrder(first.id!, 'BTC/USDT')
  const again = await exchange.createOrder('BTC/USDT', 'limit', 'sell', 0.001, 72_000, { clientOrderId: 'ord_dup' })
  assert.is((await exchange.fetchOrder('', 'BTC/USDT', { clientOrderId: 'ord_dup' })).id, again.id)
  assert.is((await venue.orders({ clientOrderId: 'ord_dup' })).length, 2)
  await exchange.cancelOrder(again.id!, 'BTC/USDT')
})

test('unknown orders: fetchOrder -2013, cancelOrder -2011, both OrderNotFound', async () => {
  const missing = await refused(exchange.fetchOrder('', 'BTC/USDT', { clientOrderId: 'ord_nowhere' }))
  assert.instance(missing.error, ccxt.OrderNotFound)
  assert.is(missing.detail.reason, '-2013 Order does not exist.')
  const gone = await refused(exchange.cancelOrder('999999', 'BTC/USDT'))
  assert.instance(gone.error, ccxt.OrderNotFound)
  assert.is(gone.detail.reason, '-2011 Unknown order sent.')
})

test('a key that may not trade: -2015, AuthenticationError, then DDoSProtection once ccxt has read with it', async () => {
  const reader = await trader(venue, 'reader', { USDT: 1000 }, { enableSpotAndMarginTrading: false })
  const first = await refused(reader.createOrder('BTC/USDT', 'market', 'buy', 0.001), reader)
  assert.instance(first.error, ccxt.AuthenticationError)
  assert.is(first.detail.code, -2015)
  assert.is((await reader.fetchBalance()).USDT.free, 1000)
  const later = await refused(reader.createOrder('BTC/USDT', 'market', 'buy', 0.001), reader)
  assert.instance(later.error, ccxt.DDoSProtection)
  assert.is(later.detail.reason, '-2015 Invalid API-key, IP, or permissions for action.')
})

test('a parameter the endpoint does not document is refused with -1104', async () => {
  const { error, detail } = await refused(exchange.privateGetAccount({ colour: 'blue' }))
  assert.instance(error, ccxt.BadRequest)
  assert.is(detail.reason, "-1104 Not all sent parameters were read; read '2' parameter(s) but was sent '3'.")
})

test("errors are classified by binance's spot table, as they would be on api.binance.com", () => {
  const classify = (exchange as any).getExceptionsByUrl.bind(exchange)
  // -2026 (order archived) is in the spot table only: without it ccxt would say ExchangeError.
  assert.is(classify(`${venue.url}/api/v3/order?symbol=BTCUSDT`, 'exact')['-2026'], ccxt.InvalidOrder)
  assert.is(classify(`${venue.url}/sapi/v1/account/apiRestrictions`, 'exact')['-2026'], ccxt.InvalidOrder)
  assert.equal(classify(`${venue.url}/elsewhere`, 'exact'), {})
})

test('past the request weight: HTTP 429, -1003 and Retry-After, as DDoSProtection', async () => {
  const fresh = await openExchange({ exchange: 'binance', venueUrl: venue.url, caFile: venue.caFile })
  await venue.setRateLimit({ weight: 5, windowMs: 600_000 })
  let answered = 0
  const { error, detail } = await refused(
    (async () => {
      for (;;) {
        await fresh.fetchTime() // weight 1
        answered++
      }
    })(),
    fresh,
  )
  assert.is(answered, 5)
  assert.instance(error, ccxt.DDoSProtection)
  assert.is(detail.code, -1003)
  assert.match(detail.message, /^Too much request weight used; current limit is 5 request weight per 10 MINUTE\./)
  assert.is(detail.retryAfterSeconds, Number(fresh.last_response_headers!['Retry-After']))
  assert.ok(detail.retryAfterSeconds! >= 1 && detail.retryAfterSeconds! <= 600)
  const last = (await venue.requests({ path: '/api/v3/time' })).at(-1)!
  assert.equal([last.status, last.code], [429, -1003])
  await venue.setRateLimit({ weight: 6000 })
  assert.ok(await fresh.fetchTime())
})

test.run()
