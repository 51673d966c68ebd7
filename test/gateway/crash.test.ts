// A bot's order through the gateway when the process dies or the venue is slow (SPEC 14: exactly
// one order on the venue, resolved in the ledger): the server SIGKILLed while the venue holds the
// bot's order (the venue placing it after the process died, or after the next process started),
// then restarted on the same data dir; the venue silent past 7 s, the bot answered -1007 and the
// order resolved once the executor finds it by its client order id. The oracles are the venue's
// book (how many orders it holds under the Bulwark id) and the order requests it received.
import ccxt from 'ccxt'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import type { Venue } from '../support/venue/index.ts'
import { near, withDb } from '../trading/market.ts'
import { type Api, crashSuite, eventually, orderReaches, outboxOf, priceBoth } from '../venue/fixture-live.ts'
import { type GatewayBot, gatewayExchange, gatewayTenant } from './fixture.ts'
import { send, sign, signedRequest } from './signed-request.ts'

const test = suite('gateway: crashes and a slow venue')
/** A send that got no answer is looked up once the venue's receive window has passed: give it room. */
const SETTLE = 40_000
const crashes = crashSuite(test)
let venue: Venue
test.before(() => {
  venue = crashes.venue()
})
// Each test counts the requests the venue received from its own start, under its own faults.
test.before.each(async () => {
  await venue.clearFaults()
  await venue.clearRequests()
})
const serve = crashes.serve
const NEW_ORDER = { method: 'POST', path: '/api/v3/order' }

/** The venue's orders under this client order id (a Bulwark order id). */
const onVenue = (account: string, clientOrderId: string) => venue.orders({ account, clientOrderId })
/** How many new-order requests for this client order id the venue received. */
const sendsOf = async (clientOrderId: string) => (await venue.requests(NEW_ORDER)).filter((r) => r.params.newClientOrderId === clientOrderId).length

/** The Bulwark order the bot's client order id names, read from the data dir (the server may be dead). */
function ledgerOrder(server: Pick<Server, 'dataDir'>, botClientOrderId: string): Promise<{ id: string; status: string } | undefined> {
  return withDb(server, (db) => db.get('SELECT id, status FROM orders WHERE bot_client_order_id = ?', [botClientOrderId]))
}

/** A tenant with a gateway key on a fresh server, prices set on both sides. */
async function start(slug: string): Promise<{ server: Server; api: Api; bot: GatewayBot }> {
  const { server, api } = await serve()
  const bot = await gatewayTenant(server, api, venue, slug, { USDT: 100_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-01', 64_000, 65_000)
  return { server, api, bot }
}

/** The bot's createOrder, not awaited: what became of it ('answered', or the error ccxt threw). */
function botBuys(server: Server, bot: GatewayBot, clientOrderId: string): Promise<unknown> {
  const exchange = gatewayExchange(server, bot)
  return exchange.createOrder('BTC/USDT', 'market', 'buy', 0.01, undefined, { clientOrderId }).then(
    () => 'answered',
    (error: unknown) => error,
  )
}

/** What the bot reads when it asks again after a restart: the order by its own client order id. */
async function botAsksAgain(server: Server, bot: GatewayBot, clientOrderId: string, venueOrderId: number): Promise<void> {
  const exchange = gatewayExchange(server, bot)
  const fetched = await exchange.fetchOrder('', 'BTC/USDT', { origClientOrderId: clientOrderId })
  assert.is(fetched.id, String(venueOrderId), 'the venue`s orderId')
  assert.is(fetched.clientOrderId, clientOrderId)
  assert.is(fetched.status, 'closed')
  assert.is(fetched.filled, 0.01)
  const raw = await signedRequest(server, 'GET', '/api/v3/order', { symbol: 'BTCUSDT', origClientOrderId: clientOrderId }, bot)
  assert.is(raw.status, 200, raw.text)
  assert.is(raw.json.status, 'FILLED')
  assert.is(raw.json.orderId, venueOrderId)
}

test('SIGKILL while the venue holds the bot`s order, which it places after the process died: one order after the restart, the bot finds it', async () => {
  const { server: first, bot } = await start('alpha')
  await venue.fault({ kind: 'delay', ms: 3000, match: NEW_ORDER, times: 1 })
  const outcome = botBuys(first, bot, 'bot-crash-1')
  const held = await eventually('the venue holds the order', async () => (await venue.requests(NEW_ORDER)).find((r) => r.fault === 'delay'))
  const order = (await ledgerOrder(first, 'bot-crash-1'))!
  assert.is((await outboxOf(first, order.id))?.state, 'SENT', 'Bulwark sent it and has no answer')
  assert.is((await onVenue('alpha', order.id)).length, 0, 'not placed yet')
  await first.stop('SIGKILL')
  assert.instance(await outcome, ccxt.NetworkError, 'the bot got no answer')

  // The venue does what it was asked when its delay ends, and answers nobody.
  const [placed] = await eventually('the venue placed it', async () => {
    const found = await onVenue('alpha', order.id)
    return found.length ? found : undefined
  })
  assert.is(placed.status, 'FILLED')
  assert.ok(held.at <= Number(placed.time))
  assert.is((await ledgerOrder(first, 'bot-crash-1'))?.status, 'PENDING', 'the dead process recorded nothing')

  const { server: second, api } = await serve(first.dataDir)
  const filled = await orderReaches(api, bot.trader, order.id, ['FILLED'], SETTLE)
  near(filled.filled_quantity, 0.01, 'filled')
  assert.is(filled.source, 'gateway')
  assert.is(filled.bot_client_order_id, 'bot-crash-1')
  assert.is((await onVenue('alpha', order.id)).length, 1, 'exactly one order on the venue under the Bulwark id')
  assert.is(await sendsOf(order.id), 1, 'sent once: found by its id, not placed again')
  await botAsksAgain(second, bot, 'bot-crash-1', Number(placed.orderId))
})

test('SIGKILL, and the venue places the order only after the next process started: it waits out the window, then finds it; one order', async () => {
  const { server: first, bot } = await start('bravo')
  // The venue takes the request now and acts on it 4 s later (within the executor's 5 s recvWindow):
  // the restarted process's first lookup may well find nothing yet.
  await venue.fault({ kind: 'delay', ms: 4000, match: NEW_ORDER, times: 1 })
  const outcome = botBuys(first, bot, 'bot-crash-2')
  await eventually('the venue holds the order', async () => (await venue.requests(NEW_ORDER)).find((r) => r.fault === 'delay'))
  const order = (await ledgerOrder(first, 'bot-crash-2'))!
  await first.stop('SIGKILL')
  assert.instance(await outcome, ccxt.NetworkError)

  const { server: second, api } = await serve(first.dataDir)
  const filled = await orderReaches(api, bot.trader, order.id, ['FILLED'], SETTLE)
  near(filled.filled_quantity, 0.01, 'filled')
  const [placed] = await onVenue('bravo', order.id)
  assert.is((await onVenue('bravo', order.id)).length, 1, 'exactly one order on the venue under the Bulwark id')
  // Only the executor's first send: a resend would have been a second request under the same id.
  assert.is(await sendsOf(order.id), 1, 'not sent again')
  const lookups = (await venue.requests({ method: 'GET', path: '/api/v3/order' })).filter((r) => r.params.origClientOrderId === order.id)
  assert.ok(
    lookups.some((r) => r.at < Number(placed.time)),
    `the restarted process looked for it before the venue placed it: lookups at ${lookups.map((r) => r.at - Number(placed.time))} ms from the placement`,
  )
  await botAsksAgain(second, bot, 'bot-crash-2', Number(placed.orderId))
})

test('the venue silent past 7 s: the bot hears 503 -1007 in time, finds its order, cannot place it twice; the order resolves once found by its id', async () => {
  const { server, api, bot } = await start('charlie')
  // The venue fills the order at once and answers after 12 s: past the gateway's 7 s and the
  // executor's own 10 s timeout, after which the executor looks it up by its client order id.
  await venue.fault({ kind: 'delay', ms: 12_000, execute: true, match: NEW_ORDER, times: 1 })
  const params = { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.01', newClientOrderId: 'bot-slow-1' }
  const started = Date.now()
  const res = await signedRequest(server, 'POST', '/api/v3/order', params, bot)
  const elapsed = Date.now() - started
  assert.is(res.status, 503, res.text)
  assert.equal(res.json, { code: -1007, msg: 'Timeout waiting for response from backend server. Send status unknown; execution status unknown.' })
  assert.ok(elapsed >= 7000 && elapsed < 7800, `answered after ${elapsed} ms`)
  const order = (await ledgerOrder(server, 'bot-slow-1'))!
  const [placed] = await onVenue('charlie', order.id)
  assert.is(placed?.status, 'FILLED', 'the venue has filled it')

  // The bot asks what became of it: the order exists (a bot must not conclude it does not and resend).
  const asked = await signedRequest(server, 'GET', '/api/v3/order', { symbol: 'BTCUSDT', origClientOrderId: 'bot-slow-1' }, bot)
  assert.is(asked.status, 200, asked.text)
  assert.is(asked.json.clientOrderId, 'bot-slow-1')
  // A resend under the same client order id while Bulwark has not resolved it: a duplicate.
  const resent = await signedRequest(server, 'POST', '/api/v3/order', params, bot)
  assert.is(resent.status, 400, resent.text)
  assert.equal(resent.json, { code: -2010, msg: 'Duplicate order sent.' })

  const filled = await orderReaches(api, bot.trader, order.id, ['FILLED'], SETTLE)
  near(filled.filled_quantity, 0.01, 'filled')
  assert.is((await onVenue('charlie', order.id)).length, 1, 'exactly one order on the venue')
  assert.is(await sendsOf(order.id), 1, 'sent once, then looked up')
  const lookups = (await venue.requests({ method: 'GET', path: '/api/v3/order' })).filter((r) => r.params.origClientOrderId === order.id)
  assert.ok(lookups.length >= 1, 'the executor looked it up by its client order id')
  const again = await signedRequest(server, 'GET', '/api/v3/order', { symbol: 'BTCUSDT', origClientOrderId: 'bot-slow-1' }, bot)
  assert.is(again.status, 200, again.text)
  assert.is(again.json.status, 'FILLED')
  assert.is(again.json.orderId, placed.orderId)
  assert.is(again.json.executedQty, '0.01000000')
})

test('a signed order captured before a restart and replayed after it, within its recvWindow, is refused (-1022): one order', async () => {
  const { server: first, bot } = await start('delta')
  // What a listener on the LAN captured: a bot's new order, signed with ccxt's binance recvWindow (10 s).
  const captured = sign('POST', '/api/v3/order', { symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity: '0.01', price: '60000' }, bot, {
    recvWindow: 10_000,
  })
  const placed = await send(first, captured)
  assert.is(placed.status, 200, placed.text)
  await first.stop()
  const { server: second } = await serve(first.dataDir)
  const replayed = await send(second, captured)
  assert.ok(Date.now() - Number(new URLSearchParams(captured.query).get('timestamp')) < 10_000, 'replayed within its window')
  assert.is(replayed.status, 400, `the replay was taken: ${replayed.text}`)
  assert.is(replayed.json.code, -1022)
  assert.is((await venue.orders({ account: 'delta' })).length, 1, 'one order on the venue')
})

test.run()
