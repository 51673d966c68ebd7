// What a bot hears when Bulwark refuses (SPEC 14), through the real ccxt binance class: Binance's
// codes with Bulwark's reason, and nothing refused ever reaches the venue. A paused fleet refuses
// every key's opening orders (one kill switch stops every bot) while a SELL that reduces the key's
// own position passes; a profile limit names itself and its values; below the venue's minimum is
// Binance's -1013 filter failure; order/test checks without keeping anything.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import type { Venue } from '../support/venue/index.ts'
import { incidentsOf, priceBoth } from '../venue/fixture-live.ts'
import { type Api, type GatewayBot, binanceRefusal as refusal, gatewayExchange, gatewayKey, gatewaySuite, gatewayTenant } from './fixture.ts'

const test = suite('gateway: refusals')
let venue: Venue
let server: Server
let api: Api
let bot: GatewayBot

gatewaySuite(test, (s) => ({ venue, server, api } = s))

test.before(async () => {
  bot = await gatewayTenant(server, api, venue, 'acme', { USDT: 100_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-01', 65_000, 65_000)
})

const venueOrderCount = async () => (await venue.orders({ account: 'acme' })).length
const killSwitch = (action: string) => api('POST', '/api/v1/risk/kill-switch', { token: bot.trader, body: { action, pause: action === 'PAUSE' } })

test('a profile limit is -2010 naming the limit and its values, recorded as an incident, and nothing reaches the venue', async () => {
  const limited = await api('PATCH', '/api/v1/risk/profile', { token: bot.tenant.jwt, body: { max_exposure_usd: 1000 } })
  assert.is(limited.status, 200, limited.text)
  const before = await venueOrderCount()
  const { code, msg } = await refusal(gatewayExchange(server, bot).createOrder('BTC/USDT', 'market', 'buy', 0.1))
  assert.is(code, -2010)
  assert.match(msg, /^Order rejected by Bulwark: /)
  assert.match(msg, /max_exposure_usd/)
  assert.match(msg, /1000/)
  assert.is(await venueOrderCount(), before)
  const breaches = await incidentsOf(server, 'acme', 'RISK_LIMIT_BREACHED')
  assert.is(breaches.length, 1)
  assert.match(breaches[0].actor, /gateway key/)
  await api('PATCH', '/api/v1/risk/profile', { token: bot.tenant.jwt, body: { max_exposure_usd: 1_000_000 } })
})

test('below the venue minimum is -1013 Filter failure, and nothing reaches the venue', async () => {
  const before = await venueOrderCount()
  const { code, msg } = await refusal(gatewayExchange(server, bot).createOrder('BTC/USDT', 'limit', 'buy', 0.00001, 60_000))
  assert.is(code, -1013)
  assert.match(msg, /^Filter failure: /)
  assert.is(await venueOrderCount(), before)
})

test('order/test runs the checks and keeps nothing; a LIMIT_MAKER order is refused with the reason', async () => {
  const exchange = gatewayExchange(server, bot)
  const before = await venueOrderCount()
  const orders = (await api('GET', '/api/v1/orders', { token: bot.trader })).json.length
  const tested = await exchange.createOrder('BTC/USDT', 'limit', 'buy', 0.01, 60_000, { test: true })
  assert.ok(tested)
  assert.is((await api('GET', '/api/v1/orders', { token: bot.trader })).json.length, orders)
  // A bot's stops are taken (test/gateway/stops.test.ts); a post-only order is not.
  const maker = await refusal(exchange.createOrder('BTC/USDT', 'LIMIT_MAKER', 'buy', 0.01, 60_000))
  assert.is(maker.code, -2010)
  assert.match(maker.msg, /LIMIT_MAKER orders are not taken by the gateway/)
  assert.is(await venueOrderCount(), before)
})

test('a duplicate client order id while the first is open is -2010 Duplicate order sent.', async () => {
  const exchange = gatewayExchange(server, bot)
  const first = await exchange.createOrder('BTC/USDT', 'limit', 'buy', 0.01, 60_000, { clientOrderId: 'dup-1' })
  const before = await venueOrderCount()
  const again = await refusal(exchange.createOrder('BTC/USDT', 'limit', 'buy', 0.01, 60_000, { clientOrderId: 'dup-1' }))
  assert.equal(again, { code: -2010, msg: 'Duplicate order sent.' })
  assert.is(await venueOrderCount(), before)
  await exchange.cancelOrder(first.id!, 'BTC/USDT')
  // Once the first is done, the id is free again, as on Binance.
  const next = await exchange.createOrder('BTC/USDT', 'limit', 'buy', 0.01, 60_000, { clientOrderId: 'dup-1' })
  await exchange.cancelOrder(next.id!, 'BTC/USDT')
})

test('paused: every key of the tenant is refused an opening order with the reason, a SELL that reduces the key`s position passes', async () => {
  const exchange = gatewayExchange(server, bot)
  const other = gatewayExchange(server, await gatewayKey(api, bot.tenant.jwt, 'second bot'))
  await exchange.createOrder('BTC/USDT', 'market', 'buy', 0.02)
  const paused = await killSwitch('PAUSE')
  assert.is(paused.status, 200, paused.text)
  const before = await venueOrderCount()
  for (const bot of [exchange, other]) {
    const { code, msg } = await refusal(bot.createOrder('BTC/USDT', 'market', 'buy', 0.01))
    assert.is(code, -2010)
    assert.match(msg, /^Order rejected by Bulwark: trading paused \(/)
  }
  assert.is(await venueOrderCount(), before, 'nothing refused reached the venue')
  // The other key holds no position: its SELL reduces nothing of its own and is refused.
  const notItsOwn = await refusal(other.createOrder('BTC/USDT', 'market', 'sell', 0.01))
  assert.is(notItsOwn.code, -2010)
  const sold = await exchange.createOrder('BTC/USDT', 'market', 'sell', 0.01)
  assert.is(sold.status, 'closed')
  assert.is(await venueOrderCount(), before + 1)
  const resumed = await killSwitch('RESUME')
  assert.is(resumed.status, 200, resumed.text)
})

test.run()
