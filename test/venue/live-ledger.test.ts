// What a LIVE ledger must say (SPEC 10), through the real API, executor and ccxt against the test
// venue, each class with its own oracle computed here from the venue's own account and trades:
// money never spent past a limit (checked at the venue's price, a USD-sized BUY sent as a quote
// quantity), entry and exit prices that are the venue's fills with slippage beside them, dust that
// closes a position (a manual sale, FLATTEN, a remainder written off), orders that say who placed
// them, and LIVE models turned back to PAPER when the venue is disconnected.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import { startVenue, type Venue } from '../support/venue/index.ts'
import { checkedClient, near } from '../trading/market.ts'
import { type Api, eventually, liveServer, liveTenant, type LiveTenant, orderReaches, priceBoth } from './fixture-live.ts'

const test = suite('venue: what a LIVE ledger says')
let venue: Venue
let server: Server
let api: Api
const COMMISSION = 0.001

test.before(async () => {
  venue = await startVenue()
  server = await liveServer(venue)
  api = await checkedClient(server)
})
test.after(async () => {
  await server.stop()
  await venue.close()
})

const post = (t: LiveTenant, body: Record<string, unknown>) => api('POST', '/api/v1/orders', { token: t.trader, body: { mode: 'LIVE', ...body } })
const trades = async (t: LiveTenant, query = '') => (await api('GET', `/api/v1/trades?${query}`, { token: t.trader })).json as any[]
const usdt = async (account: string) => Number((await venue.balances(account)).USDT.free)
const patch = (t: LiveTenant, body: Record<string, unknown>) => api('PATCH', '/api/v1/risk/profile', { token: t.trader, body })

test('money is never spent past a limit: a BUY sized in USD is a quote quantity; every limit is checked at the venue price', async () => {
  const t = await liveTenant(server, api, venue, 'overspend', { USDT: 10_000 })
  // Bulwark's last close is far below the venue's price: the old defect bought notional / close.
  await priceBoth(server, venue, 'BTC/USDT', '2025-04-01', 50_000, 84_600)
  assert.is((await patch(t, { max_order_notional_usd: 60 })).status, 200)
  const before = await usdt('overspend')
  const placed = await post(t, { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', notional_usd: 50 })
  assert.is(placed.status, 200, placed.text)
  assert.is(placed.json.reference_price, 84_600, "checked at the venue's price")
  const filled = await orderReaches(api, t.trader, placed.json.id, ['FILLED'])
  const [sent] = await venue.requests({ method: 'POST', path: '/api/v3/order' }).then((r) => r.filter((x) => x.params.newClientOrderId === placed.json.id))
  assert.is(sent.params.quoteOrderQty, '50', 'sent as a quote quantity: the venue spends no more')
  assert.is(sent.params.quantity, undefined)
  const spent = before - (await usdt('overspend'))
  assert.ok(spent <= 50 && spent > 49.9, `spent ${spent} USDT for a 50 USD order`)
  near(filled.filled_quantity * filled.fill_price, spent, 'what the ledger says it bought = what the account paid')

  // Sized in base units: 0.001 BTC is 84.60 at the venue (50.00 at the stale close): refused in the request.
  const refused = await post(t, { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 0.001 })
  assert.is(refused.status, 422, refused.text)
  assert.is(refused.json.code, 'risk_limit_exceeded')
  assert.match(refused.json.detail, /order notional 84\.60 USD exceeds max_order_notional_usd 60/)
  const held = await venue.orders({ account: 'overspend' })
  assert.is(held.length, 1, 'nothing refused reached the venue')
})

test("entry and exit prices are the venue's fills, with the reference prices and the slippage beside them", async () => {
  const t = await liveTenant(server, api, venue, 'prices', { USDT: 100_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-04-02', 59_000, 60_000)
  const start = await usdt('prices')
  const first = await post(t, { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 0.01 })
  await orderReaches(api, t.trader, first.json.id, ['FILLED'])
  // The price moves between the reference (the mark read a moment ago) and the fill.
  await venue.setPrice('BTC/USDT', 60_120)
  const second = await post(t, { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 0.01 })
  assert.is(second.json.reference_price, 60_000, 'a mark at most 60 s old is the venue price')
  const bought = await orderReaches(api, t.trader, second.json.id, ['FILLED'])
  near(bought.fill_price, 60_120, 'fill')
  near(bought.slippage_usd, 0.01 * 120, 'slippage = (fill - reference) x quantity')
  const trade = (await trades(t, 'status=OPEN')).find((x) => x.id === bought.trade_id)
  assert.equal([trade.entry_price, trade.entry_reference_price], [60_120, 60_000])

  // A LIMIT BUY fills at its own limit, below the reference: that is its entry price.
  await priceBoth(server, venue, 'ETH/USDT', '2025-04-02', 3000, 3000)
  const limit = await post(t, { pair: 'ETH/USDT', side: 'BUY', type: 'LIMIT', quantity: 1, limit_price: 2915.82 })
  await orderReaches(api, t.trader, limit.json.id, ['OPEN'])
  await venue.setPrice('ETH/USDT', 2915)
  const eth = await orderReaches(api, t.trader, limit.json.id, ['FILLED'])
  const ethTrade = (await trades(t, 'status=OPEN&pair=ETH/USDT'))[0]
  assert.equal([ethTrade.id, ethTrade.entry_price, ethTrade.entry_reference_price], [eth.trade_id, 2915.82, 3000])

  // Sell both BTC trades: the exit is the venue's fill; PnL = quantity x (exit - entry) - fees, which
  // is what the account's USDT gained over the round trip.
  await venue.setPrice('BTC/USDT', 61_000)
  const open = await trades(t, 'status=OPEN&pair=BTC/USDT')
  const quantity = open.reduce((sum, x) => sum + x.quantity, 0)
  const sell = await post(t, { pair: 'BTC/USDT', side: 'SELL', type: 'MARKET', quantity })
  await orderReaches(api, t.trader, sell.json.id, ['FILLED'])
  const closed = (await trades(t, 'status=CLOSED&pair=BTC/USDT')).filter((x) => open.some((o) => o.id === x.id))
  assert.is(closed.length, 2)
  for (const c of closed) assert.equal([c.exit_price, c.dust_quantity], [61_000, 0])
  const realized = closed.reduce((sum, c) => sum + c.quantity * (c.exit_price - c.entry_price) - c.fees_usd, 0)
  // What the account's USDT gained, less what the ETH it still holds cost (its fee was taken in ETH).
  const gained = (await usdt('prices')) - start + 2915.82
  near(Math.round(realized * 1e6) / 1e6, Math.round(gained * 1e6) / 1e6, 'realized PnL = USDT gained over the round trip')
})

test('dust: a sale that leaves less than one step closes the trade, dust_quantity reported; it holds nothing open', async () => {
  const t = await liveTenant(server, api, venue, 'dusty', { USDT: 10_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-04-03', 60_000, 60_000)
  assert.is((await patch(t, { max_open_trades: 1 })).status, 200)
  const start = await usdt('dusty')
  // 0.0025 BTC bought, 0.0000025 of it taken as the fee: 0.0024975 held, 0.00249 sellable at a 0.00001 step.
  const buy = await post(t, { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 0.0025 })
  await orderReaches(api, t.trader, buy.json.id, ['FILLED'])
  const [position] = await trades(t, 'status=OPEN')
  near(position.quantity, 0.0025 * (1 - COMMISSION), 'held')
  const sell = await post(t, { pair: 'BTC/USDT', side: 'SELL', type: 'MARKET', quantity: position.quantity })
  assert.is(sell.status, 200, sell.text)
  await orderReaches(api, t.trader, sell.json.id, ['FILLED'])
  assert.equal(await trades(t, 'status=OPEN'), [], 'no OPEN remainder')
  const [closed] = await trades(t, 'status=CLOSED')
  near(closed.dust_quantity, 0.0024975 - 0.00249, 'the unsellable remainder')
  near(Number((await venue.balances('dusty')).BTC.free), closed.dust_quantity, 'what the venue still holds is the dust')
  // Realized PnL writes the dust off: it is what the USDT balance gained (a loss of fees and dust here).
  const realized = closed.quantity * (closed.exit_price - closed.entry_price) - closed.fees_usd - closed.dust_quantity * closed.exit_price
  near(Math.round(realized * 1e6) / 1e6, Math.round(((await usdt('dusty')) - start) * 1e6) / 1e6, 'realized = USDT change')
  near(closed.pnl_pct, (realized / (closed.quantity * closed.entry_price)) * 100, 'pnl_pct')
  const equity = (await api('GET', '/api/v1/risk/equity', { token: t.trader })).json
  near(Math.round(equity.realized_pnl_usd * 1e6) / 1e6, Math.round(realized * 1e6) / 1e6, 'equity sees the same')
  // The dust counts against nothing: max_open_trades is 1 and a new position opens.
  const again = await post(t, { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 0.0025 })
  assert.is(again.status, 200, again.text)
  await orderReaches(api, t.trader, again.json.id, ['FILLED'])

  // FLATTEN follows the same rule; its sale is the kill switch's.
  const flatten = await api('POST', '/api/v1/risk/kill-switch', { token: t.trader, body: { action: 'FLATTEN', pause: true } })
  assert.is(flatten.status, 200, flatten.text)
  const flat = await eventually('FLATTEN sold with dust', async () => {
    const open = await trades(t, 'status=OPEN')
    return open.length === 0 ? await trades(t, 'status=CLOSED') : undefined
  })
  assert.ok(flat[0].dust_quantity > 0 && flat[0].dust_quantity < 0.00001, `FLATTEN's dust ${flat[0].dust_quantity}`)
  const orders = (await api('GET', '/api/v1/orders?pair=BTC/USDT', { token: t.trader })).json
  assert.equal(
    orders.map((o: any) => `${o.side} ${o.source}`),
    ['SELL kill_switch', 'BUY api', 'SELL api', 'BUY api'],
  )
})

test('a position that is nothing but dust is written off at start; a disconnected venue turns LIVE models back to PAPER', async () => {
  const t = await liveTenant(server, api, venue, 'crumbs', { USDT: 10_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-04-04', 60_000, 60_000)
  // A LIMIT BUY that fills 0.00002 BTC and is canceled: 0.00001998 held, 1.2 USD, below the 5 USD minimum.
  const limit = await post(t, { pair: 'BTC/USDT', side: 'BUY', type: 'LIMIT', quantity: 0.01, limit_price: 59_000 })
  await orderReaches(api, t.trader, limit.json.id, ['OPEN'])
  await venue.fillOrder({ clientOrderId: limit.json.id, account: 'crumbs' }, '0.00002')
  await orderReaches(api, t.trader, limit.json.id, ['PARTIALLY_FILLED'])
  assert.is((await api('DELETE', `/api/v1/orders/${limit.json.id}`, { token: t.trader })).status, 200)
  await orderReaches(api, t.trader, limit.json.id, ['CANCELED'])
  // Reconciliation (at start, then every minute) writes it off at the venue's price.
  await server.stop()
  server = await liveServer(venue, server.dataDir)
  api = await checkedClient(server)
  const [crumb] = await eventually('the dust written off', async () => {
    const closed = await trades(t, 'status=CLOSED')
    return closed.length ? closed : undefined
  })
  near(crumb.dust_quantity, 0.00002 * (1 - COMMISSION), 'all of it dust')
  assert.is(crumb.exit_price, 60_000)
  near(
    crumb.quantity * (crumb.exit_price - crumb.entry_price) - crumb.fees_usd - crumb.dust_quantity * crumb.exit_price,
    -0.00002 * 59_000,
    'its cost written off',
  )

  const workspace = await api('PUT', '/api/v1/workspace/models', {
    token: t.tenant.jwt,
    body: { model_ids: ['trend-follower'], live_model_ids: ['trend-follower'] },
  })
  assert.is(workspace.status, 200, workspace.text)
  const gone = await api('DELETE', '/api/v1/venue', { token: t.tenant.jwt })
  assert.is(gone.status, 200, gone.text)
  const after = (await api('GET', '/api/v1/workspace', { token: t.tenant.jwt })).json
  assert.equal([after.active_model_ids, after.live_model_ids], [['trend-follower'], []])
})

test.run()
