// The gateway's request security (SPEC 14), byte for byte as a Binance client sends it: signatures
// (HMAC-SHA256 hex of the query string and body, computed here with node:crypto: an independent
// oracle), timestamps against recvWindow, the X-MBX-APIKEY header and what keys may do, the replay
// rule, isolation between keys and between tenants, the gateway's own rate limit, the REST-only
// surface, and a server log that never holds a secret or a signature. Each refusal is Binance's
// code with the status SPEC 14 gives; where an order was asked for, the test proves nothing reached
// the venue (its book and the requests it received) nor the ledger.
import { randomBytes } from 'node:crypto'
import { request } from 'node:http'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import type { Venue } from '../support/venue/index.ts'
import { withDb } from '../trading/market.ts'
import { eventually, priceBoth } from '../venue/fixture-live.ts'
import { type Api, GATEWAY_PATH, type GatewayBot, type GatewayRes, gatewayKey, gatewayRequest, gatewaySuite, gatewayTenant } from './fixture.ts'
import { type Credentials, hmacHex, type SignedRequest, type SignOptions, send, sign, withSignature } from './signed-request.ts'

const test = suite('gateway: request security')
let venue: Venue
let server: Server
let api: Api
/** Tenant acme's first key (A) and second key (B); tenant globex's key. */
let bot: GatewayBot
let second: Credentials & { keyId: string }
let rival: GatewayBot
/** Every secret handed out and every signature sent: none may reach the server's log. */
const secrets: string[] = []
const signatures = new Set<string>()

gatewaySuite(test, (s) => ({ venue, server, api } = s))

test.before(async () => {
  bot = await gatewayTenant(server, api, venue, 'acme', { USDT: 100_000 })
  second = await gatewayKey(api, bot.tenant.jwt, 'acme second bot')
  rival = await gatewayTenant(server, api, venue, 'globex', { USDT: 100_000 })
  secrets.push(bot.secret, second.secret, rival.secret)
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-01', 64_000, 65_000)
})

const SYMBOL = 'BTCUSDT'
/** A BUY that rests on the venue (below the venue's 65000): placed, it stays NEW until canceled. */
const restingBuy = (extra: Record<string, string> = {}) => ({
  symbol: SYMBOL,
  side: 'BUY',
  type: 'LIMIT',
  timeInForce: 'GTC',
  quantity: '0.01',
  price: '60000',
  ...extra,
})

function signed(method: string, path: string, params: Record<string, string | number>, creds: Credentials, options: SignOptions = {}): SignedRequest {
  const request = sign(method, path, params, creds, options)
  signatures.add(request.signature)
  return request
}

const call = (method: string, path: string, params: Record<string, string | number>, creds: Credentials, options: SignOptions = {}) =>
  send(server, signed(method, path, params, creds, options))

/** Binance's refusal: this status, this code, a message, in JSON. */
function refused(res: GatewayRes, status: number, code: number, msg?: RegExp): void {
  assert.is(res.status, status, res.text)
  assert.is(res.json?.code, code, res.text)
  assert.type(res.json.msg, 'string')
  if (msg) assert.match(res.json.msg, msg)
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
}

function ok(res: GatewayRes): any {
  assert.is(res.status, 200, res.text)
  return res.json
}

interface Footprint {
  ledger: number
  onVenue: number
  orderCalls: number
}

/** What an order leaves behind: rows in the ledger, orders on the venue, order calls the venue received. */
async function footprint(): Promise<Footprint> {
  const ledger = await withDb(server, async (db) => Number((await db.get<{ n: number }>('SELECT count(*) AS n FROM orders'))!.n))
  const calls = await venue.requests({ path: '/api/v3/order' })
  return { ledger, onVenue: (await venue.orders()).length, orderCalls: calls.filter((r) => r.method !== 'GET').length }
}

/** Runs `act` and checks that it left no order anywhere: not in the ledger, not on the venue, no order call to it. */
async function nothingPlaced<T>(act: () => Promise<T>): Promise<T> {
  const before = await footprint()
  const result = await act()
  // An order written would be sent by the executor after commit: give it a pass to show up.
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.equal(await footprint(), before, 'nothing reached the ledger or the venue')
  return result
}

const venueOrdersById = (clientOrderId: string) => venue.orders({ clientOrderId })
const orderPostsFor = async (clientOrderId: string) =>
  (await venue.requests({ method: 'POST', path: '/api/v3/order' })).filter((r) => r.params.newClientOrderId === clientOrderId).length

/** The Bulwark order id behind a venue orderId (the venue knows the order by it). */
async function bulwarkId(venueOrderId: number): Promise<string> {
  const order = (await venue.orders()).find((o) => o.orderId === venueOrderId)
  assert.ok(order, `venue order ${venueOrderId}`)
  return String(order.clientOrderId)
}

test('a bad signature is -1022 (400) and places nothing; a signature in upper-case hex is accepted, the body is signed after the query', async () => {
  const order = signed('POST', '/api/v3/order', restingBuy(), bot)
  const last = order.signature.at(-1) === '0' ? '1' : '0'
  const tampered = withSignature(order, order.signature.slice(0, -1) + last)
  refused(await nothingPlaced(() => send(server, tampered)), 400, -1022, /^Signature for this request is not valid\.$/)
  // Signed with another key's secret.
  const otherSecret = signed('POST', '/api/v3/order', restingBuy(), { apiKey: bot.apiKey, secret: second.secret })
  refused(await nothingPlaced(() => send(server, otherSecret)), 400, -1022)
  // A parameter changed after signing.
  const changed = { ...order, query: order.query.replace('quantity=0.01', 'quantity=0.02') }
  refused(await nothingPlaced(() => send(server, changed)), 400, -1022)
  // No signature at all: Binance's mandatory parameter.
  const unsigned = { ...order, query: order.query.replace(/&signature=[0-9a-f]+$/, '') }
  refused(await nothingPlaced(() => send(server, unsigned)), 400, -1102, /'signature'/)

  const read = signed('GET', '/api/v3/openOrders', { symbol: SYMBOL }, bot)
  assert.ok(Array.isArray(ok(await send(server, withSignature(read, read.signature.toUpperCase())))), 'upper-case hex is the same signature')

  // Parameters in the body (as ccxt sends a POST), and split between query and body: the signature
  // is of the query string followed by the body, no separator (Binance's own example).
  const inBody = signed('POST', '/api/v3/order/test', restingBuy(), bot, { body: true })
  assert.equal(ok(await nothingPlaced(() => send(server, inBody))), {})
  const query = `symbol=${SYMBOL}&side=BUY&type=LIMIT&timeInForce=GTC`
  const body = `quantity=0.01&price=60000&recvWindow=5000&timestamp=${Date.now()}`
  const signature = hmacHex(bot.secret, query + body)
  signatures.add(signature)
  const split: SignedRequest = { method: 'POST', path: '/api/v3/order/test', query, body: `${body}&signature=${signature}`, apiKey: bot.apiKey, signature }
  assert.equal(ok(await nothingPlaced(() => send(server, split))), {})
  // The same split signed as query + '&' + body is not what was sent.
  const joined = hmacHex(bot.secret, `${query}&${body}`)
  signatures.add(joined)
  refused(await send(server, { ...split, body: `${body}&signature=${joined}`, signature: joined }), 400, -1022)
})

test('timestamps: older than recvWindow or 1000 ms ahead is -1021; recvWindow over 60000 is refused', async () => {
  const stale = signed('POST', '/api/v3/order', restingBuy(), bot, { timestamp: Date.now() - 6000 })
  refused(await nothingPlaced(() => send(server, stale)), 400, -1021, /outside of the recvWindow/)
  const staleRead = await call('GET', '/api/v3/openOrders', { symbol: SYMBOL }, bot, { timestamp: Date.now() - 6000 })
  refused(staleRead, 400, -1021, /outside of the recvWindow/)
  // The same age within a wider window.
  ok(await call('GET', '/api/v3/openOrders', { symbol: SYMBOL }, bot, { timestamp: Date.now() - 6000, recvWindow: 10_000 }))
  const ahead = signed('POST', '/api/v3/order', restingBuy(), bot, { timestamp: Date.now() + 1500 })
  refused(await nothingPlaced(() => send(server, ahead)), 400, -1021, /1000ms ahead/)
  refused(await call('GET', '/api/v3/openOrders', {}, bot, { timestamp: Date.now() + 5000, recvWindow: 60_000 }), 400, -1021, /1000ms ahead/)
  // A little ahead (a client clock a few hundred ms fast) is fine, as on Binance.
  ok(await call('GET', '/api/v3/openOrders', {}, bot, { timestamp: Date.now() + 300 }))

  // At most 60000: -1131 BAD_RECV_WINDOW, as Binance's error codes list it.
  const wide = signed('POST', '/api/v3/order', restingBuy(), bot, { recvWindow: 60_001 })
  refused(await nothingPlaced(() => send(server, wide)), 400, -1131, /recvWindow/)
  ok(await call('GET', '/api/v3/openOrders', {}, bot, { timestamp: Date.now() - 30_000, recvWindow: 60_000 }))
})

test('X-MBX-APIKEY: missing or malformed is -2014, unknown or revoked is -2015 (401)', async () => {
  const order = signed('POST', '/api/v3/order', restingBuy(), bot)
  refused(await nothingPlaced(() => send(server, { ...order, apiKey: undefined })), 401, -2014, /^API-key format invalid\.$/)
  const malformed = signed('POST', '/api/v3/order', restingBuy(), { apiKey: 'not-a-key!', secret: bot.secret })
  refused(await nothingPlaced(() => send(server, malformed)), 401, -2014)
  const tooLong = signed('GET', '/api/v3/openOrders', {}, { apiKey: 'a'.repeat(129), secret: bot.secret })
  refused(await send(server, tooLong), 401, -2014)
  // A well-formed key nobody issued, signed with a secret of its own.
  const stranger = {
    apiKey: randomBytes(48)
      .toString('base64')
      .replace(/[^A-Za-z0-9]/g, '')
      .slice(0, 64),
    secret: randomBytes(32).toString('hex'),
  }
  refused(await nothingPlaced(() => call('POST', '/api/v3/order', restingBuy(), stranger)), 401, -2015, /^Invalid API-key, IP, or permissions for action\.$/)
  // A live key's id shape with one character changed.
  const typo = { apiKey: bot.apiKey.slice(0, -1) + (bot.apiKey.at(-1) === 'A' ? 'B' : 'A'), secret: bot.secret }
  refused(await call('GET', '/api/v3/openOrders', {}, typo), 401, -2015)

  // Revoked by the owner: the next request is refused, whatever it asks.
  const doomed = await gatewayKey(api, bot.tenant.jwt, 'acme doomed bot')
  secrets.push(doomed.secret)
  ok(await call('GET', '/api/v3/openOrders', {}, doomed))
  const revoked = await api('DELETE', `/api/v1/gateway/keys/${doomed.keyId}`, { token: bot.tenant.jwt })
  assert.is(revoked.status, 200, revoked.text)
  refused(await call('GET', '/api/v3/openOrders', {}, doomed), 401, -2015)
  refused(await nothingPlaced(() => call('POST', '/api/v3/order', restingBuy(), doomed)), 401, -2015)
  refused(await call('GET', '/api/v3/account', {}, doomed), 401, -2015)
  const listed = (await api('GET', '/api/v1/gateway/keys', { token: bot.tenant.jwt })).json
  assert.ok(listed.find((k: { id: string; revoked_at: string | null }) => k.id === doomed.keyId)?.revoked_at, 'listed as revoked')
  // The other keys of the tenant keep working.
  ok(await call('GET', '/api/v3/openOrders', {}, bot))
  ok(await call('GET', '/api/v3/openOrders', {}, second))
})

test('a Bulwark API key is no gateway key, and a gateway key is no API key', async () => {
  const token = await bot.tenant.key(['orders:write', 'trades:read'])
  // An API key is not Binance's shape of a key (it has '_'): Binance answers that -2014, 401.
  const asGatewayKey = signed('POST', '/api/v3/order', restingBuy(), { apiKey: token, secret: bot.secret })
  refused(await nothingPlaced(() => send(server, asGatewayKey)), 401, -2014)
  // Nor is its alphanumeric part a key.
  refused(await call('GET', '/api/v3/openOrders', {}, { apiKey: token.replace(/[^A-Za-z0-9]/g, ''), secret: bot.secret }), 401, -2015)

  for (const credential of [bot.apiKey, bot.secret]) {
    const listed = await api('GET', '/api/v1/orders', { token: credential })
    assert.is(listed.status, 401, listed.text)
    const posted = await nothingPlaced(() =>
      api('POST', '/api/v1/orders', { token: credential, body: { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 0.01, mode: 'LIVE' } }),
    )
    assert.is(posted.status, 401, posted.text)
  }
})

test('a replayed signed request is -1022 and the venue holds one order; re-signed it is a new request, with the same newClientOrderId a duplicate while the first is open', async () => {
  const order = signed('POST', '/api/v3/order', restingBuy(), bot)
  const before = await footprint()
  const openOnVenue = async () => (await venue.orders({ account: 'acme', open: true })).length
  const openBefore = await openOnVenue()
  const first = ok(await send(server, order))
  assert.ok(first.orderId > 0, 'the venue acknowledged it')
  const id = await bulwarkId(first.orderId)
  refused(await nothingPlaced(() => send(server, order)), 400, -1022)
  // The same bytes with the signature's letters in upper case are the same signature.
  refused(await nothingPlaced(() => send(server, withSignature(order, order.signature.toUpperCase()))), 400, -1022)
  assert.is((await venueOrdersById(id)).length, 1, 'one order on the venue')
  assert.is(await orderPostsFor(id), 1, 'sent to the venue once')
  assert.equal(await footprint(), { ledger: before.ledger + 1, onVenue: before.onVenue + 1, orderCalls: before.orderCalls + 1 })

  // The same order signed again (a new timestamp) is another request: another order.
  const again = ok(await call('POST', '/api/v3/order', restingBuy(), bot))
  assert.is.not(again.orderId, first.orderId)
  assert.is(await openOnVenue(), openBefore + 2)

  // With the bot's own client order id: a second while the first is open is a duplicate.
  const named = ok(await call('POST', '/api/v3/order', restingBuy({ newClientOrderId: 'sec-dup-1' }), bot))
  assert.is(named.clientOrderId, 'sec-dup-1')
  refused(await nothingPlaced(() => call('POST', '/api/v3/order', restingBuy({ newClientOrderId: 'sec-dup-1' }), bot)), 400, -2010, /^Duplicate order sent\.$/)
  // Another key of the tenant may use the same id: its orders are its own.
  const secondsOwn = ok(await call('POST', '/api/v3/order', restingBuy({ newClientOrderId: 'sec-dup-1' }), second))
  ok(await call('DELETE', '/api/v3/order', { symbol: SYMBOL, orderId: secondsOwn.orderId }, second))
  // Once the first is canceled, the id is free again.
  ok(await call('DELETE', '/api/v3/order', { symbol: SYMBOL, origClientOrderId: 'sec-dup-1' }, bot))
  const reused = ok(await call('POST', '/api/v3/order', restingBuy({ newClientOrderId: 'sec-dup-1' }), bot))
  assert.is.not(reused.orderId, named.orderId)
  assert.is(await openOnVenue(), openBefore + 3)
  const canceled = ok(await call('DELETE', '/api/v3/openOrders', { symbol: SYMBOL }, bot))
  assert.equal(canceled.map((o: any) => o.orderId).sort(), [first.orderId, again.orderId, reused.orderId].sort())
  assert.is(await openOnVenue(), openBefore)
})

test('a signature seen once cannot carry a change to another endpoint: a test order is not replayed as an order, a read not as a cancel', async () => {
  // Binance signs the parameters, not the path: the same bytes are valid on order/test and order.
  const tested = signed('POST', '/api/v3/order/test', restingBuy(), bot)
  assert.equal(ok(await send(server, tested)), {})
  refused(await nothingPlaced(() => send(server, { ...tested, path: '/api/v3/order' })), 400, -1022)

  const resting = ok(await call('POST', '/api/v3/order', restingBuy(), bot))
  const read = signed('GET', '/api/v3/openOrders', { symbol: SYMBOL }, bot)
  assert.ok(ok(await send(server, read)).some((o: any) => o.orderId === resting.orderId))
  const cancels = (await venue.requests({ method: 'DELETE' })).length
  refused(await send(server, { ...read, method: 'DELETE' }), 400, -1022)
  assert.is((await venue.requests({ method: 'DELETE' })).length, cancels, 'no cancel reached the venue')
  assert.is((await venueOrdersById(await bulwarkId(resting.orderId)))[0].status, 'NEW', 'the order still rests')
  // The same read again on its own endpoint is a replay too.
  refused(await send(server, read), 400, -1022)
  ok(await call('DELETE', '/api/v3/order', { symbol: SYMBOL, orderId: resting.orderId }, bot))
})

test('keys are isolated: another key of the tenant, and a key of another tenant, cannot read, cancel or list an order', async () => {
  const resting = ok(await call('POST', '/api/v3/order', restingBuy({ newClientOrderId: 'iso-a-1' }), bot))
  const filled = ok(await call('POST', '/api/v3/order', { symbol: SYMBOL, side: 'BUY', type: 'MARKET', quantity: '0.01' }, bot))
  assert.is(filled.status, 'FILLED', JSON.stringify(filled))
  const restingId = await bulwarkId(resting.orderId)
  const venueTrades = (await venue.trades({ account: 'acme' })).filter((t) => t.orderId === filled.orderId)
  assert.ok(venueTrades.length > 0)
  // Its own key sees both.
  assert.is(ok(await call('GET', '/api/v3/order', { symbol: SYMBOL, orderId: resting.orderId }, bot)).clientOrderId, 'iso-a-1')
  assert.ok(ok(await call('GET', '/api/v3/openOrders', { symbol: SYMBOL }, bot)).some((o: any) => o.orderId === resting.orderId))
  assert.ok(ok(await call('GET', '/api/v3/myTrades', { symbol: SYMBOL }, bot)).some((t: any) => t.orderId === filled.orderId))

  for (const [who, creds] of [
    ['another key of the tenant', second],
    ['a key of another tenant', rival],
  ] as const) {
    for (const ref of [{ orderId: resting.orderId }, { origClientOrderId: 'iso-a-1' }, { origClientOrderId: restingId }, { orderId: filled.orderId }] as Record<
      string,
      string | number
    >[]) {
      refused(await call('GET', '/api/v3/order', { symbol: SYMBOL, ...ref }, creds), 400, -2013, /^Order does not exist\.$/)
    }
    const cancels = (await venue.requests({ method: 'DELETE' })).length
    for (const ref of [{ orderId: resting.orderId }, { origClientOrderId: 'iso-a-1' }, { origClientOrderId: restingId }] as Record<string, string | number>[]) {
      refused(await call('DELETE', '/api/v3/order', { symbol: SYMBOL, ...ref }, creds), 400, -2011, /^Unknown order sent\.$/)
    }
    refused(await call('DELETE', '/api/v3/openOrders', { symbol: SYMBOL }, creds), 400, -2011)
    assert.is((await venue.requests({ method: 'DELETE' })).length, cancels, `${who}: no cancel reached the venue`)
    const [onVenue] = await venueOrdersById(restingId)
    assert.is(onVenue.status, 'NEW', `${who}: the order still rests`)

    const open = ok(await call('GET', '/api/v3/openOrders', {}, creds))
    assert.not.ok(
      open.some((o: any) => o.orderId === resting.orderId),
      `${who}: not in openOrders`,
    )
    const all = ok(await call('GET', '/api/v3/allOrders', { symbol: SYMBOL }, creds))
    assert.not.ok(
      all.some((o: any) => o.orderId === resting.orderId || o.orderId === filled.orderId),
      `${who}: not in allOrders`,
    )
    const fromIds = ok(await call('GET', '/api/v3/allOrders', { symbol: SYMBOL, orderId: resting.orderId }, creds))
    assert.not.ok(
      fromIds.some((o: any) => o.orderId === resting.orderId),
      `${who}: not in allOrders from its orderId`,
    )
    const trades = ok(await call('GET', '/api/v3/myTrades', { symbol: SYMBOL }, creds))
    assert.not.ok(
      trades.some((t: any) => t.orderId === filled.orderId),
      `${who}: not in myTrades`,
    )
    const byOrder = ok(await call('GET', '/api/v3/myTrades', { symbol: SYMBOL, orderId: filled.orderId }, creds))
    assert.equal(byOrder, [], `${who}: myTrades of its orderId`)
  }
  ok(await call('DELETE', '/api/v3/order', { symbol: SYMBOL, orderId: resting.orderId }, bot))
})

test('the rate limit: past 1200 requests a minute a key gets 429 -1003 with Retry-After; another key is not limited by it', async () => {
  const hammer = await gatewayKey(api, bot.tenant.jwt, 'acme hammer')
  secrets.push(hammer.secret)
  // The gateway counts in clock-minute windows: start early in one, so that 1201 requests fit in it.
  const intoMinute = Date.now() % 60_000
  if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50))
  const started = Date.now()
  const base = started - 2000
  // Distinct bytes for each (a timestamp of their own, well within a 60 s window): no replays.
  const requests = Array.from({ length: 1201 }, (_, i) => signed('GET', '/api/v3/openOrders', {}, hammer, { timestamp: base - i, recvWindow: 60_000 }))
  const answers: GatewayRes[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: 24 }, async () => {
      while (next < requests.length) answers.push(await send(server, requests[next++]))
    }),
  )
  const elapsed = Date.now() - started
  console.log(`gateway security: 1201 signed openOrders requests in ${elapsed} ms`)
  assert.ok(Math.floor(started / 60_000) === Math.floor(Date.now() / 60_000), `all 1201 requests within one minute window (took ${elapsed} ms)`)
  const statuses = answers.map((a) => a.status)
  assert.is(statuses.filter((s) => s === 200).length, 1200, `statuses: ${[...new Set(statuses)]}`)
  const limited = answers.filter((a) => a.status === 429)
  assert.is(limited.length, 1)
  refused(limited[0], 429, -1003, /Too many requests/)
  const retryAfter = Number(limited[0].headers.get('retry-after'))
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${limited[0].headers.get('retry-after')}`)
  // Still limited, for orders too: and a refused order places nothing.
  refused(await call('GET', '/api/v3/openOrders', {}, hammer), 429, -1003)
  refused(await nothingPlaced(() => call('POST', '/api/v3/order', restingBuy(), hammer)), 429, -1003)
  // Other keys, of the tenant and of another, are not.
  ok(await call('GET', '/api/v3/openOrders', {}, bot))
  ok(await call('GET', '/api/v3/openOrders', {}, second))
  ok(await call('GET', '/api/v3/openOrders', {}, rival))
})

test('REST only: userDataStream and WebSocket paths are -1020, an unknown path is 404 -1020', async () => {
  const key = { 'X-MBX-APIKEY': bot.apiKey }
  for (const [method, path] of [
    ['POST', '/api/v3/userDataStream'],
    ['PUT', '/api/v3/userDataStream?listenKey=abc'],
    ['DELETE', '/api/v3/userDataStream?listenKey=abc'],
    ['POST', '/sapi/v1/userDataStream'],
    ['GET', '/ws/btcusdt@trade'],
    ['GET', '/stream?streams=btcusdt@trade'],
  ]) {
    const res = await gatewayRequest(server, method, path, key)
    assert.is(res.json?.code, -1020, `${method} ${path}: ${res.text}`)
    assert.is(res.json.msg, 'This operation is not supported.')
    assert.ok(res.status >= 400 && res.status < 500, `${method} ${path}: ${res.status}`)
  }
  refused(await gatewayRequest(server, 'GET', '/api/v3/nothing-here', key), 404, -1020)
  refused(await gatewayRequest(server, 'GET', '/api/v1/order', key), 404, -1020)
  refused(await gatewayRequest(server, 'GET', '/', key), 404, -1020)
  // A path the gateway has, with a method it has not.
  refused(await nothingPlaced(() => call('PUT', '/api/v3/order', restingBuy(), bot)), 405, -1020)
})

/** A body sent in chunks, without a Content-Length: the gateway counts it as it comes. */
function streamed(path: string, chunks: string[]): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${GATEWAY_PATH}${path}`, {
      method: 'POST',
      headers: { 'X-MBX-APIKEY': bot.apiKey, 'Content-Type': 'application/x-www-form-urlencoded', 'Transfer-Encoding': 'chunked' },
    })
    req.on('response', (res) => {
      let text = ''
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }))
    })
    // The server may answer and close before every chunk is written.
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)))
    for (const chunk of chunks) req.write(chunk)
    req.end()
  })
}

test('a body over 64 KiB is 413 -1000, declared or streamed, and places nothing; the next request is served', async () => {
  const padding = `&note=${'x'.repeat(70 * 1024)}`
  const declared = await nothingPlaced(() =>
    send(server, { ...signed('POST', '/api/v3/order', restingBuy(), bot), body: `${new URLSearchParams(restingBuy())}${padding}` }),
  )
  refused(declared, 413, -1000, /larger than 65536 bytes/)
  const chunks = Array.from({ length: 9 }, () => 'x'.repeat(8 * 1024))
  const grown = await nothingPlaced(() => streamed('/api/v3/order', [`symbol=${SYMBOL}&side=BUY&note=`, ...chunks]))
  assert.is(grown.status, 413)
  assert.is(grown.json.code, -1000)
  assert.match(grown.json.msg, /larger than 65536 bytes/)
  // A small body sent the same way is read whole: its signature is what is judged.
  const small = await streamed('/api/v3/order', [`symbol=${SYMBOL}&side=BUY&`, 'type=LIMIT&timestamp=1&signature=00'])
  assert.is(small.json.code, -1022, JSON.stringify(small.json))
  ok(await call('GET', '/api/v3/openOrders', {}, bot))
})

test('the server log holds no secret and no signature', async () => {
  // A last request, so that its line is in the output before it is read.
  ok(await call('GET', '/api/v3/openOrders', {}, bot))
  const output = await eventually('the log of the gateway requests', () => {
    const text = server.output()
    return text.includes(`${GATEWAY_PATH}/api/v3/openOrders`) ? text : undefined
  })
  for (const secret of secrets) assert.not.ok(output.includes(secret), 'an api_secret in the log')
  const hex = new Set((output.match(/[0-9a-fA-F]{64}/g) ?? []).map((h) => h.toLowerCase()))
  const leaked = [...signatures].filter((s) => hex.has(s.toLowerCase()))
  assert.equal(leaked, [], 'signatures in the log')
  assert.ok(signatures.size > 1200)
  assert.not.ok(/signature=/.test(output), 'a query string with its signature in the log')
})

test.run()
