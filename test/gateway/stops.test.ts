// A bot's own stop through the gateway (SPEC 14: Freqtrade's stoploss_on_exchange), with the real
// ccxt binance class against a real server on the test venue: the bot's STOP_LOSS_LIMIT rests on the
// venue as a LIVE SELL of its key, Bulwark's protection (SPEC 13) steps aside for that quantity and
// covers the rest, never locking more than is held; canceled, the protection covers the whole
// position again; triggered, it closes the key's trade at the venue's fill. A BUY stop, a stop for
// more than the key holds and a stop of a type the market does not offer are -2010. The oracles are
// the venue's own book, balances and trades; planFor's remainder rule is checked on ccxt's markets.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { planFor, positionFrom } from '../../src/trading/protection/plan.ts'
import type { Exchange } from '../../src/venues/exchange.ts'
import type { Server } from '../support/harness.ts'
import { CATALOGUE_SYMBOLS, type Venue } from '../support/venue/index.ts'
import { near } from '../trading/market.ts'
import { eventually, orderReaches, priceBoth } from '../venue/fixture-live.ts'
import { type Api, type GatewayBot, binanceRefusal as refusal, gatewayExchange, gatewayKey, gatewaySuite, gatewayTenant } from './fixture.ts'

const test = suite('gateway: a bot`s own stops')
let venue: Venue
let server: Server
let api: Api
let bot: GatewayBot

// XRP/USDT offers no market stops (STOP_LOSS, TAKE_PROFIT), as some Binance markets do not.
const NO_MARKET_STOPS = ['LIMIT', 'LIMIT_MAKER', 'MARKET', 'STOP_LOSS_LIMIT', 'TAKE_PROFIT_LIMIT']
const symbols = CATALOGUE_SYMBOLS.map((s) => (s.base === 'XRP' ? { ...s, orderTypes: NO_MARKET_STOPS } : s))
gatewaySuite(test, (s) => ({ venue, server, api } = s), { symbols })

/** What the account holds of BTC after a BUY of `quantity` whose commission (0.1%) the venue took in BTC. */
const HELD = 0.01998

test.before(async () => {
  bot = await gatewayTenant(server, api, venue, 'acme', { USDT: 100_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-01', 65_000, 65_000)
  const profile = await api('PATCH', '/api/v1/risk/profile', { token: bot.trader, body: { venue_stop_loss_pct: 5 } })
  assert.is(profile.status, 200, profile.text)
})

const resting = async (symbol = 'BTCUSDT') => (await venue.orders({ account: 'acme', open: true })).filter((o) => o.symbol === symbol) as Record<string, any>[]
/** The venue's open orders of the pair once `check` holds for them. */
const restsAs = (what: string, check: (orders: Record<string, any>[]) => boolean, symbol = 'BTCUSDT') =>
  eventually(what, async () => {
    const orders = await resting(symbol)
    return check(orders) ? orders : undefined
  })
const isProtection = (o: Record<string, any>) => String(o.clientOrderId).startsWith('bwp')
const ledgerOrder = async (id: string) => (await api('GET', `/api/v1/orders/${id}`, { token: bot.trader })).json
const openTrades = async (pair = 'BTC/USDT') =>
  ((await api('GET', '/api/v1/trades?status=OPEN', { token: bot.trader })).json as any[]).filter((t) => t.pair === pair)

test('planFor: the protection covers what is held less what resting SELLs reserve; nothing for dust or while a SELL is on its way', async () => {
  const exchange = gatewayExchange(server) as unknown as Exchange
  await exchange.loadMarkets()
  const terms = { stopPct: 5, takeProfitPct: null, offsetPct: 1, unprotectedAction: 'ALERT' as const }
  const plan = (reserved: number, selling = false) => planFor(exchange, 'BTC/USDT', positionFrom({ held: 0.02, cost: 0.02 * 60_000, reserved, selling }), terms)
  assert.is(plan(0)?.quantity, 0.02)
  assert.is(plan(0.015)?.quantity, 0.005)
  assert.is(plan(0.015)?.stop_price, 57_000, 'the trigger from the average entry of all that is held')
  assert.is(plan(0.02), undefined, 'all of it reserved')
  assert.is(plan(0.019999), undefined, 'the rest is below the market`s step')
  assert.is(plan(0.01995), undefined, 'the rest (0.00005 BTC, 2.85 USDT at the trigger) is below the minimum notional of 5: dust')
  assert.is(plan(0.0199)?.quantity, 0.0001, 'the rest (5.7 USDT at the trigger) is protected')
  assert.is(plan(0, true), undefined, 'a SELL on its way to the venue: its coins must be free')
})

test('a bot`s STOP_LOSS_LIMIT takes the protection`s place for its quantity; canceled, the protection covers the whole position again', async () => {
  const exchange = gatewayExchange(server, bot)
  const buy = await exchange.createOrder('BTC/USDT', 'market', 'buy', 0.02)
  assert.is(buy.status, 'closed')
  const before = await restsAs('the protection for the whole position', (o) => o.length === 1 && isProtection(o[0]))
  near(Number(before[0].origQty), HELD, 'the whole position')

  const placed = await exchange.createOrder('BTC/USDT', 'STOP_LOSS_LIMIT', 'sell', 0.01, 63_000, { stopPrice: 63_500, clientOrderId: 'ft-stop-1' })
  assert.is(placed.status, 'open')
  assert.is(placed.clientOrderId, 'ft-stop-1')
  const both = await restsAs('the bot`s stop and the protection for the rest', (o) => o.length === 2 && o.some((x) => x.type === 'STOP_LOSS_LIMIT'))
  const own = both.find((o) => o.type === 'STOP_LOSS_LIMIT')!
  const protection = both.find(isProtection)!
  assert.is(String(own.orderId), placed.id)
  assert.match(String(own.clientOrderId), /^ord_/, 'a LIVE order of Bulwark on the venue')
  assert.equal([Number(own.origQty), Number(own.stopPrice), Number(own.price)], [0.01, 63_500, 63_000])
  near(Number(protection.origQty), HELD - 0.01, 'the protection covers the rest')
  assert.is(protection.type, 'STOP_LOSS')
  // The oracle: the venue's balance. Never more locked than the account holds, and all of it protected.
  const btc = (await venue.balances('acme')).BTC
  near(Number(btc.locked), HELD, 'the two lock what is held, no more')
  near(Number(btc.free), 0, 'nothing left unprotected')

  const order = await ledgerOrder(String(own.clientOrderId))
  assert.equal(
    [order.side, order.type, order.limit_price, order.stop_price, order.stop_trigger, order.status, order.gateway_key_id],
    ['SELL', 'LIMIT', 63_000, 63_500, 'STOP_LOSS', 'OPEN', bot.keyId],
  )
  const fetched = await exchange.fetchOrder(placed.id!, 'BTC/USDT')
  assert.equal([fetched.info.type, fetched.triggerPrice, fetched.price, fetched.amount, fetched.status], ['STOP_LOSS_LIMIT', 63_500, 63_000, 0.01, 'open'])
  const open = await exchange.fetchOpenOrders('BTC/USDT')
  assert.equal(
    open.map((o) => [o.id, o.info.type, o.triggerPrice]),
    [[placed.id, 'STOP_LOSS_LIMIT', 63_500]],
  )
  const trade = (await openTrades())[0]
  assert.is(trade.protection.status, 'RESTING')
  assert.equal(trade.protection.venue_order_ids, [String(protection.orderId)])

  const canceled = await exchange.cancelOrder(placed.id!, 'BTC/USDT')
  assert.is(canceled.status, 'canceled')
  const after = await restsAs('the protection for the whole position again', (o) => o.length === 1 && isProtection(o[0]) && Number(o[0].origQty) === HELD)
  assert.is(after[0].type, 'STOP_LOSS')
  assert.is((await ledgerOrder(order.id)).status, 'CANCELED')
})

test('a bot`s stop for the whole position leaves the protection nothing; triggered, it closes the key`s trade at the venue`s fill', async () => {
  const exchange = gatewayExchange(server, bot)
  await restsAs('the protection', (o) => o.length === 1 && isProtection(o[0]))
  const placed = await exchange.createOrder('BTC/USDT', 'STOP_LOSS_LIMIT', 'sell', HELD, 63_500, { stopPrice: 64_000 })
  const alone = await restsAs('the bot`s stop alone', (o) => o.length === 1 && o[0].type === 'STOP_LOSS_LIMIT')
  assert.is(String(alone[0].orderId), placed.id)
  await eventually('no protection', async () => ((await openTrades())[0]?.protection.status === 'NONE' ? true : undefined))
  near(Number((await venue.balances('acme')).BTC.locked), HELD, 'locked once')

  await venue.setPrice('BTC/USDT', 63_800)
  const order = await orderReaches(api, bot.trader, String(alone[0].clientOrderId), ['FILLED'])
  const fills = (await venue.trades({ account: 'acme', symbol: 'BTCUSDT' })).filter((t) => String(t.orderId) === placed.id)
  assert.ok(fills.length > 0, 'the venue filled the bot`s stop')
  const sold = fills.reduce((s, f) => s + Number(f.qty), 0)
  const price = fills.reduce((s, f) => s + Number(f.qty) * Number(f.price), 0) / sold
  near(sold, HELD, 'all of it')
  const closed = ((await api('GET', '/api/v1/trades?status=CLOSED', { token: bot.trader })).json as any[]).filter((t) => t.pair === 'BTC/USDT')
  assert.is(closed.length, 1)
  assert.is(closed[0].gateway_key_id, bot.keyId)
  near(closed[0].exit_price, price, 'closed at the venue`s fill')
  assert.is(closed[0].id, order.trade_id)
  assert.equal(await openTrades(), [])
  const fetched = await exchange.fetchOrder(placed.id!, 'BTC/USDT')
  assert.equal([fetched.status, fetched.filled, fetched.info.type], ['closed', HELD, 'STOP_LOSS_LIMIT'])
  assert.equal(await resting(), [], 'flat: nothing rests')
})

test('a BUY stop, a stop for more than the key holds, and a stop of a type the market lacks are -2010; none reaches the venue', async () => {
  await venue.setPrice('BTC/USDT', 65_000)
  const exchange = gatewayExchange(server, bot)
  await exchange.createOrder('BTC/USDT', 'market', 'buy', 0.02)
  await restsAs('the protection', (o) => o.length === 1 && isProtection(o[0]))
  const count = async () => (await venue.orders({ account: 'acme' })).length
  const before = await count()

  const buy = await refusal(exchange.createOrder('BTC/USDT', 'STOP_LOSS_LIMIT', 'buy', 0.01, 67_000, { stopPrice: 66_000 }))
  assert.is(buy.code, -2010)
  assert.match(buy.msg, /^Order rejected by Bulwark: a BUY STOP_LOSS_LIMIT .*long only/)
  const more = await refusal(exchange.createOrder('BTC/USDT', 'STOP_LOSS_LIMIT', 'sell', 0.03, 63_000, { stopPrice: 63_500 }))
  assert.is(more.code, -2010)
  assert.match(more.msg, /exceeds the open position on LIVE BTC\/USDT of gateway key/)
  // Another key of the tenant holds nothing: it may not protect this key's position.
  const other = gatewayExchange(server, await gatewayKey(api, bot.tenant.jwt, 'other bot'))
  const foreign = await refusal(other.createOrder('BTC/USDT', 'STOP_LOSS_LIMIT', 'sell', 0.01, 63_000, { stopPrice: 63_500 }))
  assert.is(foreign.code, -2010)
  assert.match(foreign.msg, /there is none on LIVE BTC\/USDT of gateway key/)
  assert.is(await count(), before, 'nothing reached the venue')

  // ccxt refuses a type the market does not list before it sends; its raw call does not.
  await priceBoth(server, venue, 'XRP/USDT', '2025-03-01', 0.5, 0.5)
  await exchange.createOrder('XRP/USDT', 'market', 'buy', 100)
  await restsAs('the XRP protection', (o) => o.length === 1 && isProtection(o[0]), 'XRPUSDT')
  const xrp = await refusal((exchange as any).privatePostOrder({ symbol: 'XRPUSDT', side: 'SELL', type: 'STOP_LOSS', quantity: '50', stopPrice: '0.45' }))
  assert.is(xrp.code, -2010)
  assert.match(xrp.msg, /STOP_LOSS orders are not offered on XRP\/USDT/)
  assert.ok(!(await venue.orders({ account: 'acme', symbol: 'XRPUSDT' })).some((o) => o.type === 'STOP_LOSS'), 'never sent')
  await restsAs('the XRP protection again', (o) => o.length === 1 && isProtection(o[0]), 'XRPUSDT')
})

test.run()
