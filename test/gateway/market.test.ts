// The gateway's market data and the calls of a bot's start (SPEC 14), through the real ccxt binance
// class aimed at a real server whose --venue-url is the test venue: public data without a key, the
// same as straight from the venue; loadMarkets with a gateway key (the sapi calls answered as a
// spot-only account); time from the gateway's own clock; one venue request per path and query a
// second; the venue's refusals relayed, its silence -1007 within 7 s; what the gateway never serves.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { type Exchange, openExchange } from '../../src/venues/exchange.ts'
import type { Server } from '../support/harness.ts'
import type { Venue } from '../support/venue/index.ts'
import { type Api, gatewayExchange, gatewayRequest, gatewaySuite, gatewayTenant } from './fixture.ts'

const test = suite('gateway: market data')
let venue: Venue
let server: Server
let api: Api
/** The same calls straight to the venue. */
let direct: Exchange
/** A bot without a key. */
let anonymous: Exchange

gatewaySuite(test, (s) => ({ venue, server, api } = s))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const TICKER_FIELDS = ['symbol', 'last', 'bid', 'ask', 'bidVolume', 'askVolume', 'high', 'low', 'open', 'close', 'change', 'baseVolume', 'quoteVolume']
const pick = (ticker: object) => Object.fromEntries(TICKER_FIELDS.map((f) => [f, (ticker as Record<string, unknown>)[f]]))

/** The gateway's request lines logged while `run` ran ("GET /gateway/binance/... 200"), once `count` are in. */
async function gatewayCalls(run: () => Promise<unknown>, count: number): Promise<string[]> {
  const from = server.output().length
  await run()
  const lines = () =>
    server
      .output()
      .slice(from)
      .split('\n')
      .flatMap((line) => {
        try {
          const entry = JSON.parse(line)
          return typeof entry.route === 'string' && entry.route.startsWith('/gateway/') ? [`${entry.method} ${entry.route} ${entry.status}`] : []
        } catch {
          return []
        }
      })
  // Request lines are written a little after their answers (at most 20 ms later on an idle machine).
  for (const until = Date.now() + 3000; lines().length < count && Date.now() < until; ) await sleep(20)
  await sleep(50) // and none more
  return lines().sort()
}

test("without a key: markets, tickers, order book and candles are the venue's, as straight from it", async () => {
  direct = await openExchange({ exchange: 'binance', venueUrl: venue.url, caFile: venue.caFile })
  anonymous = gatewayExchange(server)
  await Promise.all([direct.loadMarkets(), anonymous.loadMarkets()])
  assert.equal(anonymous.symbols, direct.symbols)
  assert.ok(anonymous.symbols.includes('BTC/USDT'))
  assert.equal(anonymous.market('BTC/USDT').info, direct.market('BTC/USDT').info)
  assert.equal(anonymous.market('BTC/USDT').limits, direct.market('BTC/USDT').limits)

  await venue.setPrice('BTC/USDT', 65_000)
  await venue.setPrice('ETH/USDT', '2000.05')
  await venue.setBalances({ USDT: 100_000 })
  await venue.injectOrder({ symbol: 'ETH/USDT', side: 'BUY', quantity: '2.5', price: '2000' })
  assert.equal(pick(await anonymous.fetchTicker('BTC/USDT')), pick(await direct.fetchTicker('BTC/USDT')))
  assert.is((await anonymous.fetchTicker('BTC/USDT')).last, 65_000)
  const some = await anonymous.fetchTickers(['BTC/USDT', 'ETH/USDT'])
  assert.equal(Object.keys(some).sort(), ['BTC/USDT', 'ETH/USDT'])
  const all = await anonymous.fetchTickers()
  const allDirect = await direct.fetchTickers()
  assert.equal(Object.keys(all).sort(), Object.keys(allDirect).sort())
  for (const symbol of Object.keys(allDirect)) assert.equal(pick(all[symbol]), pick(allDirect[symbol]), symbol)

  const book = await anonymous.fetchOrderBook('ETH/USDT', 10)
  const bookDirect = await direct.fetchOrderBook('ETH/USDT', 10)
  assert.equal([book.bids, book.asks, book.nonce], [bookDirect.bids, bookDirect.asks, bookDirect.nonce])
  assert.is(book.bids.length, 10)
  assert.ok(
    book.bids.some(([price, amount]) => price === 2000 && amount === 3.5),
    'the resting order is in the book',
  )

  const candles = await anonymous.fetchOHLCV('BTC/USDT', '1d', undefined, 30)
  assert.is(candles.length, 30)
  assert.equal(candles, await direct.fetchOHLCV('BTC/USDT', '1d', undefined, 30))
  const since = candles[3][0]
  assert.equal(await anonymous.fetchOHLCV('LTC/USDT', '1d', since, 5), await direct.fetchOHLCV('LTC/USDT', '1d', since, 5))
})

test("time is the gateway's clock (it checks timestamps by it), ping its own; neither asks the venue", async () => {
  await venue.setClockOffset(-45_000)
  await venue.clearRequests()
  try {
    const before = Date.now()
    const time = await anonymous.fetchTime()
    assert.ok(time! >= before - 50 && time! <= Date.now() + 50, `gateway time ${time} vs local ${before}`)
    const ping = await gatewayRequest(server, 'GET', '/api/v3/ping')
    assert.is(ping.status, 200)
    assert.equal(ping.json, {})
    assert.equal([...(await venue.requests({ path: '/api/v3/time' })), ...(await venue.requests({ path: '/api/v3/ping' }))], [])
    const venueTime = await direct.fetchTime()
    assert.ok(venueTime! < before - 40_000, 'the venue runs 45 s behind')
  } finally {
    await venue.setClockOffset(0)
  }
})

test('loadMarkets with a gateway key: the sapi calls answered as a spot-only account, none of them by the venue', async () => {
  const bot = await gatewayTenant(server, api, venue, 'acme', { USDT: 1000 })
  const exchange = gatewayExchange(server, bot)
  await venue.clearRequests()
  const calls = await gatewayCalls(() => exchange.loadMarkets(), 5)
  assert.equal(calls, [
    'GET /gateway/binance/api/v3/exchangeInfo 200',
    'GET /gateway/binance/sapi/v1/capital/config/getall 200',
    'GET /gateway/binance/sapi/v1/margin/allPairs 200',
    'GET /gateway/binance/sapi/v1/margin/allPairs 200',
    'GET /gateway/binance/sapi/v1/margin/isolated/allPairs 200',
  ])
  // (The tenant's own venue session polls the venue meanwhile, with the tenant's venue key.)
  const reached = await venue.requests()
  assert.ok(
    reached.every((r) => !r.path.startsWith('/sapi/') && r.apiKey !== bot.apiKey),
    JSON.stringify(reached.map((r) => r.path)),
  )
  assert.equal(exchange.symbols, direct.symbols)
  const btc = exchange.market('BTC/USDT')
  assert.is(btc.margin, false)
  assert.is(btc.spot, true)
  // The coins: every asset of the venue's symbols, tradeable, neither deposit nor withdrawal through the gateway.
  const assets = new Set(Object.values(direct.markets!).flatMap((m) => [m!.base, m!.quote]))
  assert.equal(
    Object.keys(exchange.currencies)
      .filter((code) => assets.has(code))
      .sort(),
    [...assets].sort(),
  )
  const usdt = exchange.currencies.USDT!
  assert.is(usdt.active, true)
  assert.is(usdt.type, 'crypto')
  assert.is((usdt.info as any).depositAllEnable, false)
  assert.is((usdt.info as any).withdrawAllEnable, false)
  assert.equal((usdt.info as any).networkList, [])

  // The sapi calls are signed ones: a wrong secret is refused at the door, before any answer.
  const forged = gatewayExchange(server, { apiKey: bot.apiKey, secret: 'x'.repeat(64) })
  const refused = await forged.loadMarkets().then(
    () => undefined,
    (error: Error) => error,
  )
  assert.ok(refused?.message.includes('-1022'), String(refused))
  const status = await gatewayRequest(server, 'GET', '/sapi/v1/system/status')
  assert.equal([status.status, status.json], [200, { status: 0, msg: 'normal' }])
})

test('an answer is served for 1 s: calls within it reach the venue once, a later one or another query again', async () => {
  await venue.clearRequests()
  const started = Date.now()
  const first = await anonymous.fetchOrderBook('SOL/USDT', 5)
  const second = await anonymous.fetchOrderBook('SOL/USDT', 5)
  const together = await Promise.all(Array.from({ length: 5 }, () => gatewayRequest(server, 'GET', '/api/v3/depth?symbol=SOLUSDT&limit=5')))
  assert.ok(Date.now() - started < 900, 'the calls took under a second')
  assert.equal(second.bids, first.bids)
  for (const res of together)
    assert.equal(
      res.json.bids,
      first.bids.map(([p, q]) => [p, q].map((x) => x!.toFixed(8))),
    )
  assert.is((await venue.requests({ path: '/api/v3/depth' })).length, 1)
  await anonymous.fetchOrderBook('SOL/USDT', 6)
  assert.is((await venue.requests({ path: '/api/v3/depth' })).length, 2, 'another query is another answer')

  await sleep(1100)
  await venue.setPrice('SOL/USDT', 151.5)
  const later = await anonymous.fetchOrderBook('SOL/USDT', 5)
  assert.is((await venue.requests({ path: '/api/v3/depth' })).length, 3)
  assert.is(later.bids[0][0], 151.49)
})

test("only Binance's documented parameters go on, no header of the bot's; the venue's refusals come back as it gave them", async () => {
  await venue.clearRequests()
  const priced = await gatewayRequest(server, 'GET', '/api/v3/ticker/price?symbol=BTCUSDT&timestamp=1&foo=bar', { 'X-MBX-APIKEY': 'a'.repeat(64) })
  assert.equal([priced.status, priced.json], [200, { symbol: 'BTCUSDT', price: '65000.00000000' }])
  // (The tenant's venue session may ask the venue too: every request is looked at.)
  const sent = await venue.requests({ path: '/api/v3/ticker/price' })
  assert.ok(
    sent.some((r) => JSON.stringify(r.params) === '{"symbol":"BTCUSDT"}'),
    JSON.stringify(sent),
  )
  assert.ok(sent.every((r) => r.params.foo === undefined && r.params.timestamp === undefined && r.apiKey === undefined))

  const unknown = await gatewayRequest(server, 'GET', '/api/v3/ticker/24hr?symbol=NOPEUSDT')
  assert.equal([unknown.status, unknown.json], [400, { code: -1121, msg: 'Invalid symbol.' }])
  const missing = await gatewayRequest(server, 'GET', '/api/v3/klines?symbol=BTCUSDT')
  assert.equal([missing.status, missing.json], [400, { code: -1102, msg: "Mandatory parameter 'interval' was not sent, was empty/null, or malformed." }])
  const one = await gatewayRequest(server, 'GET', '/api/v3/exchangeInfo?symbol=BTCUSDT')
  assert.is(one.status, 200)
  assert.equal(
    one.json.symbols.map((s: { symbol: string }) => s.symbol),
    ['BTCUSDT'],
  )
})

test('a venue that does not answer: 503 -1007 within 7 s; one that refuses connections: 503 -1001', async () => {
  await venue.fault({ kind: 'hang', match: { method: 'GET', path: '/api/v3/ticker/price' }, times: 1 })
  const started = Date.now()
  const silent = await gatewayRequest(server, 'GET', '/api/v3/ticker/price?symbol=ETHUSDT')
  const took = Date.now() - started
  assert.equal(
    [silent.status, silent.json],
    [503, { code: -1007, msg: 'Timeout waiting for response from backend server. Send status unknown; execution status unknown.' }],
  )
  assert.ok(took >= 6900 && took < 8500, `answered after ${took} ms`)
  // Not kept: the next request asks the venue again.
  const again = await gatewayRequest(server, 'GET', '/api/v3/ticker/price?symbol=ETHUSDT')
  assert.is(again.status, 200)

  await venue.down()
  try {
    const down = await gatewayRequest(server, 'GET', '/api/v3/ticker/price?symbol=XRPUSDT')
    assert.equal([down.status, down.json.code, down.headers.get('retry-after')], [503, -1001, '1'])
  } finally {
    await venue.up()
  }
})

test('REST only: WebSocket streams and userDataStream are -1020; an unknown path is -1020 404', async () => {
  for (const [method, path] of [
    ['POST', '/api/v3/userDataStream'],
    ['PUT', '/api/v3/userDataStream'],
    ['GET', '/ws/btcusdt@trade'],
    ['GET', '/stream?streams=btcusdt@trade'],
  ]) {
    const res = await gatewayRequest(server, method, path)
    assert.equal([res.status, res.json], [400, { code: -1020, msg: 'This operation is not supported.' }], `${method} ${path}`)
  }
  const unknown = await gatewayRequest(server, 'GET', '/api/v3/aggTrades?symbol=BTCUSDT')
  assert.is(unknown.status, 404)
  assert.is(unknown.json.code, -1020)
  const wrongMethod = await gatewayRequest(server, 'DELETE', '/api/v3/depth?symbol=BTCUSDT')
  assert.equal([wrongMethod.status, wrongMethod.json.code], [405, -1020])
})

test.run()
