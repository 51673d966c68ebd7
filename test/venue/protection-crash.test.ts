// Protection across a crash, the kill switch and the profile (SPEC 13), through the real server,
// executor and ccxt against the test venue. The one that matters most: a `serve` holding a protected
// position is SIGKILLed, the price falls through the stop while it is down, the venue fills the stop;
// after the restart the trade is closed at the venue's fill with its fee, one incident, and equity and
// the breakers see the loss. Also: the kill switch leaves protections resting except FLATTEN, which
// cancels them and sells; new percentages re-place them and null cancels them.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Venue } from '../support/venue/index.ts'
import { near } from '../trading/market.ts'
import { type Api, crashSuite, eventually, incidentsOf, liveTenant, type LiveTenant, orderReaches, priceBoth } from './fixture-live.ts'

const test = suite('venue: protection across a crash, the kill switch and the profile')
const crashes = crashSuite(test)
let venue: Venue
test.before(() => {
  venue = crashes.venue()
})
const serve = crashes.serve

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const resting = async (account: string, symbol: string) => (await venue.orders({ account, open: true })).filter((o) => o.symbol === symbol) as any[]
const restingCount = (account: string, symbol: string, count: number) =>
  eventually(`${count} resting on ${symbol}`, async () => {
    const orders = await resting(account, symbol)
    return orders.length === count ? orders : undefined
  })

async function enter(api: Api, t: LiveTenant, pair: string, quantity: number): Promise<void> {
  const buy = await api('POST', '/api/v1/orders', { token: t.trader, body: { pair, side: 'BUY', type: 'MARKET', quantity, mode: 'LIVE' } })
  assert.is(buy.status, 200, buy.text)
  await orderReaches(api, t.trader, buy.json.id, ['FILLED'])
}

test("SIGKILLed while protected, the stop fills on the venue: after the restart the trade is closed at the venue's fill, once", async () => {
  const first = await serve()
  const t = await liveTenant(first.server, first.api, venue, 'crash', { USDT: 100_000 })
  await priceBoth(first.server, venue, 'BTC/USDT', '2025-07-01', 60_000, 60_000)
  const profile = await first.api('PATCH', '/api/v1/risk/profile', {
    token: t.trader,
    body: { venue_stop_loss_pct: 3, max_consecutive_losses: 1, capital_usd: 100_000 },
  })
  assert.is(profile.status, 200, profile.text)
  await enter(first.api, t, 'BTC/USDT', 0.05)
  const [stop] = await restingCount('crash', 'BTCUSDT', 1)
  await first.server.stop('SIGKILL')

  // While Bulwark is down the price falls through the stop and the venue fills it.
  await venue.setPrice('BTC/USDT', 57_500)
  const filled = (await venue.orders({ account: 'crash' })).find((o) => o.orderId === stop.orderId)!
  assert.is(filled.status, 'FILLED')
  const venueTrades = await venue.trades({ account: 'crash' })
  const buyCost = venueTrades.filter((f) => f.isBuyer).reduce((s, f) => s + Number(f.quoteQty), 0)
  const sale = venueTrades.filter((f) => f.orderId === stop.orderId)
  const sold = sale.reduce((s, f) => s + Number(f.qty), 0)
  const proceeds = sale.reduce((s, f) => s + Number(f.quoteQty), 0)
  const fee = sale.reduce((s, f) => s + Number(f.commission), 0)

  const second = await serve(first.server.dataDir)
  const closed = await eventually('closed after the restart', async () => {
    const list = (await second.api('GET', '/api/v1/trades?status=CLOSED', { token: t.trader })).json as any[]
    return list[0]
  })
  assert.is(closed.exit_reason, 'venue_stop')
  near(closed.exit_price, proceeds / sold, "the venue's fill price")
  // The test's own PnL: USDT in from the stop, less its fee, less what the entry cost.
  const pnl = proceeds - fee - buyCost
  const realized = closed.quantity * (closed.exit_price - closed.entry_price) - closed.fees_usd - closed.dust_quantity * closed.exit_price
  near(realized, pnl, 'realized PnL = what the account lost')
  const equity = (await second.api('GET', '/api/v1/risk/equity', { token: t.trader })).json
  near(equity.realized_pnl_usd, pnl, 'equity sees the loss')
  const paused = await eventually('the breaker tripped on it', async () => {
    const state = (await second.api('GET', '/api/v1/risk/profile', { token: t.trader })).json
    return state.trading_paused ? state : undefined
  })
  assert.ok(paused)
  await sleep(6000) // a protection poll and more: nothing is recorded twice
  const incidents = await incidentsOf(second.server, 'crash', 'VENUE_PROTECTION_FILLED')
  assert.is(incidents.length, 1)
  assert.match(incidents[0].reason, new RegExp(`order ${stop.orderId} \\(stop .*filled ${sold} BTC/USDT at ${proceeds / sold}`))
  assert.equal(await resting('crash', 'BTCUSDT'), [], 'no new protection for a closed position')
  await second.server.stop()
})

test('the kill switch leaves protections resting (PAUSE, CANCEL_AND_PAUSE, CANCEL_ORDERS); FLATTEN cancels them, then sells', async () => {
  const { server, api } = await serve()
  const t = await liveTenant(server, api, venue, 'killer', { USDT: 100_000 })
  await priceBoth(server, venue, 'ETH/USDT', '2025-07-02', 3000, 3000)
  await priceBoth(server, venue, 'SOL/USDT', '2025-07-02', 150, 150)
  await api('PATCH', '/api/v1/risk/profile', { token: t.trader, body: { venue_stop_loss_pct: 5, venue_take_profit_pct: 5 } })
  await enter(api, t, 'ETH/USDT', 1)
  await enter(api, t, 'SOL/USDT', 10)
  const eth = await restingCount('killer', 'ETHUSDT', 2)
  await restingCount('killer', 'SOLUSDT', 2)
  const kill = (body: Record<string, unknown>) => api('POST', '/api/v1/risk/kill-switch', { token: t.trader, body })
  for (const body of [
    { action: 'PAUSE', pause: true },
    { action: 'CANCEL_AND_PAUSE', pause: true },
    { action: 'CANCEL_ORDERS', pause: false },
  ]) {
    assert.is((await kill(body)).status, 200)
    await sleep(300)
    const still = await resting('killer', 'ETHUSDT')
    assert.equal(
      still.map((o) => o.orderId),
      eth.map((o) => o.orderId),
      `${body.action} leaves them`,
    )
  }
  assert.is((await kill({ action: 'FLATTEN', pause: true })).status, 200)
  const closed = await eventually('both flattened', async () => {
    const list = (await api('GET', '/api/v1/trades?status=CLOSED', { token: t.trader })).json as any[]
    return list.length === 2 ? list : undefined
  })
  assert.equal(
    closed.map((x) => x.exit_reason),
    ['flatten', 'flatten'],
  )
  assert.equal([...(await resting('killer', 'ETHUSDT')), ...(await resting('killer', 'SOLUSDT'))], [])
  const ethOrders = (await venue.orders({ account: 'killer' })).filter((o) => o.symbol === 'ETHUSDT' && o.side === 'SELL')
  assert.ok(
    ethOrders.filter((o) => o.orderListId !== -1).every((o) => o.status === 'CANCELED' || o.status === 'EXPIRED'),
    'the list canceled',
  )
  const market = ethOrders.find((o) => o.type === 'MARKET')!
  assert.ok(
    ethOrders.every((o) => o.type === 'MARKET' || Number(o.updateTime) <= Number(market.time)),
    'canceled before the sale went out',
  )
  await server.stop()
})

test('new percentages re-place the protections of open positions; both null cancel them', async () => {
  const { server, api } = await serve()
  const t = await liveTenant(server, api, venue, 'reprice', { USDT: 100_000 })
  await priceBoth(server, venue, 'BNB/USDT', '2025-07-03', 500, 500)
  const patch = (body: Record<string, unknown>) => api('PATCH', '/api/v1/risk/profile', { token: t.trader, body })
  await patch({ venue_stop_loss_pct: 5 })
  await enter(api, t, 'BNB/USDT', 2)
  const [before] = await restingCount('reprice', 'BNBUSDT', 1)
  near(Number(before.stopPrice), 475, 'stop 5% below')
  await patch({ venue_stop_loss_pct: 8 })
  const [after] = await eventually('re-placed at 8%', async () => {
    const orders = await resting('reprice', 'BNBUSDT')
    return orders.length === 1 && Number(orders[0].stopPrice) === 460 ? orders : undefined
  })
  assert.ok(after.orderId !== before.orderId)
  await patch({ venue_stop_loss_pct: null, venue_take_profit_pct: null })
  await restingCount('reprice', 'BNBUSDT', 0)
  const [open] = (await api('GET', '/api/v1/trades?status=OPEN', { token: t.trader })).json as any[]
  assert.equal(open.protection, { status: 'NONE', stop_price: null, take_profit_price: null, venue_order_ids: [] })
  await server.stop()
})

test.run()
