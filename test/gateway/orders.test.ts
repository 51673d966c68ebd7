// A bot's orders through the gateway (SPEC 14), with the real ccxt binance class aimed at a real
// server whose venue is the test venue: a resting LIMIT order placed, read and canceled; a MARKET
// order filled with its fills relayed; each a LIVE order of the tenant in the ledger (source
// gateway, the key, the bot's client order id), named on the venue by Bulwark's id. The oracles are
// the venue's own book and trades.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import type { Venue } from '../support/venue/index.ts'
import { eventually, priceBoth } from '../venue/fixture-live.ts'
import { type Api, type GatewayBot, gatewayExchange, gatewaySuite, gatewayTenant } from './fixture.ts'

const test = suite('gateway: orders')
let venue: Venue
let server: Server
let api: Api
let bot: GatewayBot

gatewaySuite(test, (s) => ({ venue, server, api } = s))

test.before(async () => {
  bot = await gatewayTenant(server, api, venue, 'acme', { USDT: 100_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-01', 64_000, 65_000)
})

const ledgerOrder = async (id: string) => (await api('GET', `/api/v1/orders/${id}`, { token: bot.trader })).json

test('a LIMIT order rests on the venue under Bulwark id; ccxt reads it, lists it and cancels it', async () => {
  const exchange = gatewayExchange(server, bot)
  const placed = await exchange.createOrder('BTC/USDT', 'limit', 'buy', 0.01, 60_000, { clientOrderId: 'bot-limit-1' })
  assert.is(placed.clientOrderId, 'bot-limit-1')
  assert.is(placed.status, 'open')
  const onVenue = (await venue.orders({ account: 'acme', symbol: 'BTCUSDT' })).find((o) => String(o.orderId) === placed.id)
  assert.ok(onVenue, 'the order is on the venue under the id ccxt was given')
  assert.is(onVenue.status, 'NEW')
  assert.match(String(onVenue.clientOrderId), /^ord_/, 'the venue knows it by the Bulwark order id')
  const order = await ledgerOrder(String(onVenue.clientOrderId))
  assert.is(order.mode, 'LIVE')
  assert.is(order.source, 'gateway')
  assert.is(order.gateway_key_id, bot.keyId)
  assert.is(order.bot_client_order_id, 'bot-limit-1')
  assert.is(order.limit_price, 60_000)

  const fetched = await exchange.fetchOrder(placed.id!, 'BTC/USDT')
  assert.is(fetched.clientOrderId, 'bot-limit-1')
  assert.is(fetched.amount, 0.01)
  assert.is(fetched.price, 60_000)
  const byClientId = await exchange.fetchOrder('', 'BTC/USDT', { origClientOrderId: 'bot-limit-1' })
  assert.is(byClientId.id, placed.id)
  assert.equal(
    (await exchange.fetchOpenOrders('BTC/USDT')).map((o) => o.id),
    [placed.id],
  )

  const canceled = await exchange.cancelOrder(placed.id!, 'BTC/USDT')
  assert.is(canceled.status, 'canceled')
  const after = (await venue.orders({ account: 'acme', symbol: 'BTCUSDT' })).find((o) => String(o.orderId) === placed.id)
  assert.is(after?.status, 'CANCELED')
  assert.is((await ledgerOrder(order.id)).status, 'CANCELED')
  assert.equal(await exchange.fetchOpenOrders('BTC/USDT'), [])
})

test('a MARKET order fills on the venue; the answer carries its fills, myTrades and the ledger agree with the venue', async () => {
  const exchange = gatewayExchange(server, bot)
  const placed = await exchange.createOrder('BTC/USDT', 'market', 'buy', 0.02)
  assert.is(placed.status, 'closed')
  assert.is(placed.filled, 0.02)
  // Asked at once, the gateway answers from the ledger: the answer left before the booking, which
  // the server finished before reading these requests.
  const [fetched, booked] = await Promise.all([exchange.fetchOrder(placed.id!, 'BTC/USDT'), exchange.fetchMyTrades('BTC/USDT')])
  assert.is(fetched.status, 'closed')
  assert.is(fetched.filled, 0.02)
  assert.equal(
    booked.filter((t) => t.order === placed.id).map((t) => [t.id, t.amount, t.price]),
    placed.trades.map((t) => [t.id, t.amount, t.price]),
  )
  const venueTrades = (await venue.trades({ account: 'acme', symbol: 'BTCUSDT' })).filter((t) => String(t.orderId) === placed.id)
  assert.ok(venueTrades.length > 0)
  // Oracle: the venue's own fills, summed here.
  const quote = venueTrades.reduce((sum, t) => sum + Number(t.qty) * Number(t.price), 0)
  assert.ok(Math.abs((placed.cost ?? 0) - quote) < 1e-6, `cost ${placed.cost} against the venue's ${quote}`)
  assert.is(placed.trades.length, venueTrades.length)
  const mine = await exchange.fetchMyTrades('BTC/USDT')
  assert.equal(
    mine.filter((t) => t.order === placed.id).map((t) => [t.id, t.amount, t.price]),
    venueTrades.map((t) => [String(t.id), Number(t.qty), Number(t.price)]),
  )
  const trades = (await api('GET', '/api/v1/trades?status=OPEN', { token: bot.trader })).json
  const position = trades.find((t: { gateway_key_id: string | null }) => t.gateway_key_id === bot.keyId)
  assert.ok(position, 'the position is the key`s')
  assert.is(position.source, 'gateway')
})

test('account shows the venue account balances', async () => {
  const exchange = gatewayExchange(server, bot)
  const balance = await exchange.fetchBalance()
  const venueBalances = await venue.balances('acme')
  assert.is(balance.USDT?.free, Number(venueBalances.USDT.free))
  await eventually('BTC on the account', () => (Number(venueBalances.BTC?.free) > 0 ? true : undefined))
})

test.run()
