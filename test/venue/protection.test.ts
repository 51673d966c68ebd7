// Protection that outlives the process (SPEC 13), through the real API, executor and ccxt against the
// test venue: what rests on the venue after an entry fill (one OCO list, its prices from the venue's
// average fill), how it follows the position (grown, sold by hand, the profile changed), and what its
// fill does to the ledger (the trade closed at the venue's fill and fee, one incident, the breakers).
// Every expected price, quantity and PnL is computed here from the venue's own records.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import type { Venue } from '../support/venue/index.ts'
import { near } from '../trading/market.ts'
import { type Api, eventually, liveSuite, incidentsOf, liveTenant, type LiveTenant, orderReaches, priceBoth } from './fixture-live.ts'
import { roundTo } from './fixture-protection.ts'

const test = suite('venue: protection resting on the venue')
let venue: Venue
let server: Server
let api: Api
const COMMISSION = 0.001

liveSuite(test, (s) => ({ venue, server, api } = s))

const post = (t: LiveTenant, body: Record<string, unknown>) => api('POST', '/api/v1/orders', { token: t.trader, body: { mode: 'LIVE', ...body } })
const patch = (t: LiveTenant, body: Record<string, unknown>) => api('PATCH', '/api/v1/risk/profile', { token: t.trader, body })
const openTrades = async (t: LiveTenant, pair = 'BTC/USDT') =>
  ((await api('GET', '/api/v1/trades?status=OPEN', { token: t.trader })).json as any[]).filter((x) => x.pair === pair)
const resting = async (account: string, symbol = 'BTCUSDT') =>
  (await venue.orders({ account, open: true })).filter((o) => o.symbol === symbol) as Record<string, any>[]
/** The venue's open protective orders once they are these types (sorted), with the API's trade saying RESTING. */
const restsAs = (t: LiveTenant, types: string[], check: (orders: Record<string, any>[]) => boolean = () => true, pair = 'BTC/USDT') =>
  eventually(`protection ${types.join('+')}`, async () => {
    const orders = await resting(t.account, pair.replace('/', ''))
    const trade = (await openTrades(t, pair))[0]
    const same = JSON.stringify(orders.map((o) => o.type).sort()) === JSON.stringify([...types].sort())
    return same && check(orders) && trade?.protection?.status === 'RESTING' ? { orders, trade } : undefined
  })
/** What the account holds of `asset` after a BUY of `quantity` that paid its commission in it. */
const heldAfterBuy = (quantity: number) => quantity * (1 - COMMISSION)

test('an entry fill rests one OCO list for the whole quantity: stop and take-profit from the average fill, fitted to the market', async () => {
  const t = await liveTenant(server, api, venue, 'oco', { USDT: 100_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-05-01', 60_000, 60_000)
  const profile = await patch(t, { venue_stop_loss_pct: 5, venue_take_profit_pct: 10 })
  assert.is(profile.status, 200, profile.text)
  assert.equal([profile.json.venue_stop_loss_pct, profile.json.venue_take_profit_pct, profile.json.stop_limit_offset_pct], [5, 10, 1])
  assert.is(profile.json.unprotected_action, 'ALERT')
  const buy = await post(t, { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 0.02 })
  const filled = await orderReaches(api, t.trader, buy.json.id, ['FILLED'])
  const { orders, trade } = await restsAs(t, ['LIMIT_MAKER', 'STOP_LOSS'])
  // The oracle: the venue's own fills and the market's tick and step.
  assert.is(filled.status, 'FILLED')
  const fills = (await venue.trades({ account: 'oco' })).filter((f) => f.isBuyer)
  const bought = fills.reduce((s, f) => s + Number(f.qty), 0)
  const entry = fills.reduce((s, f) => s + Number(f.qty) * Number(f.price), 0) / bought
  const held = roundTo(heldAfterBuy(bought), 0.00001, 'down')
  const stop = orders.find((o) => o.type === 'STOP_LOSS')!
  const take = orders.find((o) => o.type === 'LIMIT_MAKER')!
  near(Number(stop.stopPrice), roundTo(entry * 0.95, 0.01), 'stop = entry x (1 - 5%)')
  near(Number(take.price), roundTo(entry * 1.1, 0.01), 'take-profit = entry x (1 + 10%)')
  for (const o of [stop, take]) {
    near(Number(o.origQty), held, 'the whole quantity held')
    assert.is(o.side, 'SELL')
    assert.is(o.orderListId, stop.orderListId, 'one list')
  }
  assert.ok(stop.orderListId !== -1)
  assert.equal(trade.protection, {
    status: 'RESTING',
    stop_price: Number(stop.stopPrice),
    take_profit_price: Number(take.price),
    venue_order_ids: [String(stop.orderId), String(take.orderId)],
  })
  // Protections are not orders of the API.
  const listed = (await api('GET', '/api/v1/orders', { token: t.trader })).json as any[]
  assert.is(listed.length, 1)
})

test('a grown position replaces its protection with the new quantity and average entry', async () => {
  const t = await liveTenant(server, api, venue, 'grow', { USDT: 100_000 })
  await priceBoth(server, venue, 'ETH/USDT', '2025-05-02', 3000, 3000)
  await patch(t, { venue_stop_loss_pct: 10 })
  const first = await post(t, { pair: 'ETH/USDT', side: 'BUY', type: 'MARKET', quantity: 1 })
  await orderReaches(api, t.trader, first.json.id, ['FILLED'])
  const before = await restsAs(t, ['STOP_LOSS'], () => true, 'ETH/USDT')
  near(Number(before.orders[0].stopPrice), 2700, 'stop at 3000 x 0.9')
  await venue.setPrice('ETH/USDT', 3200)
  const second = await post(t, { pair: 'ETH/USDT', side: 'BUY', type: 'MARKET', quantity: 1 })
  await orderReaches(api, t.trader, second.json.id, ['FILLED'])
  const held = roundTo(heldAfterBuy(1) * 2, 0.0001, 'down')
  const entry = (3000 + 3200) / 2
  const after = await restsAs(t, ['STOP_LOSS'], (o) => Number(o[0].origQty) === held, 'ETH/USDT')
  near(Number(after.orders[0].stopPrice), roundTo(entry * 0.9, 0.01), 'stop from the new average entry')
  const all = (await venue.orders({ account: 'grow' })).filter((o) => o.type === 'STOP_LOSS')
  assert.equal(
    all.map((o) => o.status),
    ['CANCELED', 'NEW'],
    'the first canceled, one resting',
  )
})

test('a SELL by hand cancels the protection first (its balance is free), sells, and leaves none behind', async () => {
  const t = await liveTenant(server, api, venue, 'manual', { USDT: 100_000 })
  await priceBoth(server, venue, 'SOL/USDT', '2025-05-03', 150, 150)
  await patch(t, { venue_stop_loss_pct: 5, venue_take_profit_pct: 20 })
  const buy = await post(t, { pair: 'SOL/USDT', side: 'BUY', type: 'MARKET', quantity: 10 })
  await orderReaches(api, t.trader, buy.json.id, ['FILLED'])
  await restsAs(t, ['LIMIT_MAKER', 'STOP_LOSS'], () => true, 'SOL/USDT')
  const trade = (await openTrades(t, 'SOL/USDT'))[0]
  const sell = await post(t, { pair: 'SOL/USDT', side: 'SELL', type: 'MARKET', quantity: trade.quantity })
  assert.is(sell.status, 200, sell.text)
  await orderReaches(api, t.trader, sell.json.id, ['FILLED'])
  assert.equal(await resting('manual', 'SOLUSDT'), [], 'no protection left behind')
  const closed = ((await api('GET', '/api/v1/trades?status=CLOSED', { token: t.trader })).json as any[])[0]
  assert.is(closed.exit_reason, 'manual')
  assert.is(closed.protection, null)
  assert.equal(await incidentsOf(server, 'manual', 'VENUE_RECONCILIATION_MISMATCH'), [])
})

test('a resting LIMIT sell keeps its coins; the protection covers the rest while it works, and the whole position once it is canceled', async () => {
  const t = await liveTenant(server, api, venue, 'limitsell', { USDT: 100_000 })
  await priceBoth(server, venue, 'ADA/USDT', '2025-05-05', 0.45, 0.45)
  await patch(t, { venue_stop_loss_pct: 10 })
  const buy = await post(t, { pair: 'ADA/USDT', side: 'BUY', type: 'MARKET', quantity: 1000 })
  await orderReaches(api, t.trader, buy.json.id, ['FILLED'])
  await restsAs(t, ['STOP_LOSS'], () => true, 'ADA/USDT')
  const held = roundTo(heldAfterBuy(1000), 0.1, 'down')
  const sell = await post(t, { pair: 'ADA/USDT', side: 'SELL', type: 'LIMIT', quantity: 500, limit_price: 0.46 })
  assert.is(sell.status, 200, sell.text)
  await orderReaches(api, t.trader, sell.json.id, ['OPEN'])
  // The protection was canceled before the SELL went (its coins free), then placed again for the rest.
  const whileSelling = await restsAs(t, ['LIMIT', 'STOP_LOSS'], () => true, 'ADA/USDT')
  const stop = whileSelling.orders.find((o) => o.type === 'STOP_LOSS')!
  near(Number(stop.origQty), roundTo(held - 500, 0.1, 'down'), 'the protection covers what the SELL does not')
  near(Number((await venue.balances('limitsell')).ADA.locked), held, 'never more locked than held')
  const canceled = await api('DELETE', `/api/v1/orders/${sell.json.id}`, { token: t.trader })
  assert.is(canceled.status, 200, canceled.text)
  const { orders } = await restsAs(t, ['STOP_LOSS'], (o) => Number(o[0].origQty) === held, 'ADA/USDT')
  near(Number(orders[0].origQty), held, 'the whole position again')
})

test("a stop the price falls through closes the trade at the venue's fill with its fee: one incident, equity and the breakers see it", async () => {
  const t = await liveTenant(server, api, venue, 'stopped', { USDT: 100_000 })
  await priceBoth(server, venue, 'BNB/USDT', '2025-05-04', 500, 500)
  await patch(t, { venue_stop_loss_pct: 4, max_consecutive_losses: 1, capital_usd: 100_000 })
  const buy = await post(t, { pair: 'BNB/USDT', side: 'BUY', type: 'MARKET', quantity: 20 })
  await orderReaches(api, t.trader, buy.json.id, ['FILLED'])
  const { orders } = await restsAs(t, ['STOP_LOSS'], () => true, 'BNB/USDT')
  const usdtBefore = Number((await venue.balances('stopped')).USDT.free)
  const buyCost = (await venue.trades({ account: 'stopped' })).filter((f) => f.isBuyer).reduce((s, f) => s + Number(f.quoteQty), 0)
  await venue.setPrice('BNB/USDT', 470)
  const closed = await eventually('trade closed by the stop', async () => {
    const list = (await api('GET', '/api/v1/trades?status=CLOSED', { token: t.trader })).json as any[]
    return list[0]
  })
  const stopFills = (await venue.trades({ account: 'stopped' })).filter((f) => !f.isBuyer)
  assert.ok(stopFills.length > 0 && stopFills.every((f) => f.orderId === orders[0].orderId), 'sold by the stop alone')
  const sold = stopFills.reduce((s, f) => s + Number(f.qty), 0)
  const price = stopFills.reduce((s, f) => s + Number(f.qty) * Number(f.price), 0) / sold
  const fee = stopFills.reduce((s, f) => s + Number(f.commission), 0)
  assert.is(closed.exit_reason, 'venue_stop')
  near(closed.exit_price, price, "exit at the venue's fill")
  // PnL as the account saw it: the USDT the sale brought in, less what the entry cost.
  const usdtAfter = Number((await venue.balances('stopped')).USDT.free)
  near(usdtAfter - usdtBefore, sold * price - fee, 'the USDT the stop brought in')
  // Realized PnL is what the account gained in USDT over the round trip (the dust written off).
  const realized = closed.quantity * (closed.exit_price - closed.entry_price) - closed.fees_usd - closed.dust_quantity * closed.exit_price
  near(realized, usdtAfter - usdtBefore - buyCost, 'realized PnL = USDT in - USDT out')
  const equity = (await api('GET', '/api/v1/risk/equity', { token: t.trader })).json
  near(equity.realized_pnl_usd, realized, 'equity sees the loss')
  const incidents = await incidentsOf(server, 'stopped', 'VENUE_PROTECTION_FILLED')
  assert.is(incidents.length, 1)
  assert.match(incidents[0].reason, new RegExp(`order ${orders[0].orderId} \\(stop`))
  const breaker = await eventually('breaker tripped', async () => {
    const state = (await api('GET', '/api/v1/risk/profile', { token: t.trader })).json
    return state.trading_paused ? state : undefined
  })
  assert.ok(breaker.trading_paused, 'the loss tripped max_consecutive_losses')
})

test.run()
