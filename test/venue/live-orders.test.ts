// LIVE orders through the real API, the real executor, the real ccxt and the test venue: placed
// after commit under their own id, filled with the venue's fees (a BUY's fee taken in the asset
// bought), partially filled and canceled, refused below the venue's minimum, and what DELETE
// /api/v1/venue does while orders are open. The oracle is the venue's own account: a round trip's
// net PnL in the ledger equals what the venue's USDT balance gained.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import { startVenue, type Venue } from '../support/venue/index.ts'
import { checkedClient, eventsOf, near } from '../trading/market.ts'
import { type Api, eventually, incidentsOf, liveServer, liveTenant, type LiveTenant, orderReaches, outboxOf, priceBoth } from './fixture-live.ts'

const test = suite('venue: LIVE orders')
let venue: Venue
let server: Server
let api: Api
let acme: LiveTenant
const COMMISSION = 0.001

test.before(async () => {
  venue = await startVenue()
  server = await liveServer(venue)
  api = await checkedClient(server)
  acme = await liveTenant(server, api, venue, 'acme', { USDT: 100_000 })
})
test.after(async () => {
  await server.stop()
  await venue.close()
})

const post = (body: Record<string, unknown>, token = acme.trader) => api('POST', '/api/v1/orders', { token, body })

test('a LIVE MARKET BUY and SELL: placed once under its id, fees from the venue, net PnL equal to the venue balance change', async () => {
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-01', 64_000, 65_000)
  const placed = await post({ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 0.01, mode: 'LIVE' })
  assert.is(placed.status, 200, placed.text)
  assert.is(placed.json.status, 'PENDING')
  assert.is(placed.json.mode, 'LIVE')
  assert.is(placed.json.client_order_id, placed.json.id)
  const bought = await orderReaches(api, acme.trader, placed.json.id, ['FILLED'])
  const onVenue = await venue.orders({ account: 'acme', clientOrderId: placed.json.id })
  assert.is(onVenue.length, 1, 'exactly one order on the venue under the Bulwark id')
  // The oracle: the venue charged 0.1% of the BTC bought, in BTC; the ledger holds what is left.
  const held = 0.01 * (1 - COMMISSION)
  near(bought.filled_quantity, 0.01, 'filled')
  near(bought.fill_price, 65_000, 'fill price')
  near(bought.fees_usd, 0.01 * COMMISSION * 65_000, 'fee in USD at the fill price')
  assert.is(bought.reference_price, 65_000, "checked at the venue's price, not Bulwark's last close (64,000)")
  assert.is(bought.source, 'api')
  near(bought.slippage_usd, 0, 'filled at the price it was checked at')
  const trade = (await api('GET', `/api/v1/trades?status=OPEN&pair=BTC/USDT`, { token: acme.trader })).json[0]
  assert.is(trade.mode, 'LIVE')
  near(trade.quantity, held, 'the trade holds what the account holds')
  near(Number((await venue.balances('acme')).BTC.free), held, 'venue balance')
  assert.ok((await eventsOf(server, 'trade.opened')).some((e) => e.id === trade.id))

  await priceBoth(server, venue, 'BTC/USDT', '2025-03-02', 65_500, 66_000)
  const usdtBefore = 100_000 - 0.01 * 65_000
  const sell = await post({ pair: 'BTC/USDT', side: 'SELL', type: 'MARKET', quantity: trade.quantity, mode: 'LIVE' })
  assert.is(sell.status, 200, sell.text)
  const sold = await orderReaches(api, acme.trader, sell.json.id, ['FILLED'])
  near(sold.fees_usd, held * 66_000 * COMMISSION, 'a SELL pays its fee in USDT')
  const closed = (await api('GET', '/api/v1/trades?status=CLOSED&pair=BTC/USDT', { token: acme.trader })).json.find((t: any) => t.id === sold.trade_id)
  assert.is(closed.status, 'CLOSED')
  // A LIVE trade's prices are its fills: PnL is quantity x (exit - entry) less the fees, nothing else.
  assert.is(closed.entry_price, 65_000)
  assert.is(closed.exit_price, 66_000)
  const realized = closed.quantity * (closed.exit_price - closed.entry_price) - closed.fees_usd
  const usdtAfter = Number((await venue.balances('acme')).USDT.free)
  near(usdtAfter, usdtBefore + held * 66_000 * (1 - COMMISSION), 'venue USDT')
  near(realized, usdtAfter - 100_000, 'net PnL in the ledger = what the venue account gained')
  assert.ok((await eventsOf(server, 'order.filled')).some((e) => e.id === sell.json.id && e.mode === 'LIVE'))
})

test('a LIVE LIMIT order: OPEN, PARTIALLY_FILLED, then canceled with its filled quantity; DELETE /venue waits for it', async () => {
  await venue.setPrice('ETH/USDT', 3000)
  await priceBoth(server, venue, 'ETH/USDT', '2025-03-02', 3000, 3000)
  const placed = await post({ pair: 'ETH/USDT', side: 'BUY', type: 'LIMIT', quantity: 1, limit_price: 2900, mode: 'LIVE' })
  assert.is(placed.status, 200, placed.text)
  const open = await orderReaches(api, acme.trader, placed.json.id, ['OPEN'])
  assert.is(open.filled_quantity, 0)
  const refused = await api('DELETE', '/api/v1/venue', { token: acme.tenant.jwt })
  assert.is(refused.status, 409)
  assert.is(refused.json.code, 'live_orders_open')
  assert.match(refused.json.detail, /1 LIVE order is still open/)

  await venue.fillOrder({ clientOrderId: placed.json.id, account: 'acme' }, '0.4')
  const partial = await orderReaches(api, acme.trader, placed.json.id, ['PARTIALLY_FILLED'])
  near(partial.filled_quantity, 0.4, 'filled so far')
  const canceled = await api('DELETE', `/api/v1/orders/${placed.json.id}`, { token: acme.trader })
  assert.is(canceled.status, 200, canceled.text)
  const ended = await orderReaches(api, acme.trader, placed.json.id, ['CANCELED'])
  near(ended.filled_quantity, 0.4, 'a canceled order keeps what it filled')
  const [onVenue] = await venue.orders({ account: 'acme', clientOrderId: placed.json.id })
  assert.is(onVenue.status, 'CANCELED')
  const trade = (await api('GET', '/api/v1/trades?pair=ETH/USDT', { token: acme.trader })).json.find((t: any) => t.id === ended.trade_id)
  near(trade.quantity, 0.4 * (1 - COMMISSION), 'the trade holds the part bought, less the fee')
  assert.is((await outboxOf(server, placed.json.id))?.state, 'DONE')
})

test('refused before it leaves: below the venue minimum (422 venue_rejected), no venue (409), a LIVE SELL of nothing held (400)', async () => {
  const tiny = await post({ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', notional_usd: 1, mode: 'LIVE' })
  assert.is(tiny.status, 422, tiny.text)
  assert.is(tiny.json.code, 'venue_rejected')
  assert.match(tiny.json.detail, /below the minimum 5 of BTC\/USDT/)
  await priceBoth(server, venue, 'SOL/USDT', '2025-03-02', 150, 150)
  const none = await post({ pair: 'SOL/USDT', side: 'SELL', type: 'MARKET', quantity: 1, mode: 'LIVE' })
  assert.is(none.status, 400, none.text)
  assert.match(none.json.detail, /LIVE SOL\/USDT/)
  const zeta = await liveTenantWithoutVenue()
  const noVenue = await post({ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 0.01, mode: 'LIVE' }, zeta)
  assert.is(noVenue.status, 409)
  assert.is(noVenue.json.code, 'venue_not_connected')
  assert.is((await venue.orders({ account: 'acme', open: true })).length, 0)
})

const killSwitch = (body: Record<string, unknown>, token = acme.trader) => api('POST', '/api/v1/risk/kill-switch', { token, body })

test('the kill switch with open LIVE orders leaves none open on the venue; a fill that beat the cancel stays FILLED with VENUE_CANCEL_INCOMPLETE', async () => {
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-03', 65_000, 65_000)
  const ids: string[] = []
  for (const price of [60_000, 61_000, 62_000]) {
    const res = await post({ pair: 'BTC/USDT', side: 'BUY', type: 'LIMIT', quantity: 0.01, limit_price: price, mode: 'LIVE' })
    assert.is(res.status, 200, res.text)
    ids.push(res.json.id)
  }
  for (const id of ids) await orderReaches(api, acme.trader, id, ['OPEN'])
  // The venue fills the first one while Bulwark cannot see it (its reads fail), then the switch is pulled.
  await venue.fault({ kind: 'status', status: 503, match: { method: 'GET', path: '/api/v3/openOrders' } })
  await venue.fillOrder({ clientOrderId: ids[0], account: 'acme' })
  const pulled = await killSwitch({ action: 'CANCEL_AND_PAUSE', pause: true, reason: 'LIVE test' })
  assert.is(pulled.status, 200, pulled.text)
  assert.is(pulled.json.canceled_orders, 3)
  const ended = await Promise.all(ids.map((id) => orderReaches(api, acme.trader, id, ['FILLED', 'CANCELED'])))
  await venue.clearFaults()
  assert.equal(
    ended.map((o) => o.status),
    ['FILLED', 'CANCELED', 'CANCELED'],
  )
  assert.is(ended[1].canceled_at !== null, true)
  assert.is((await venue.orders({ account: 'acme', open: true })).length, 0, 'nothing left open on the venue')
  const incomplete = await incidentsOf(server, 'acme', 'VENUE_CANCEL_INCOMPLETE')
  assert.is(incomplete.length, 1)
  assert.match(incomplete[0].reason, new RegExp(`order ${ids[0]} .*filled 0.01 before the cancel of incident ${pulled.json.incident_id}`))
  // Paused: an opening LIVE order is refused before anything is written; a SELL (reduce-only) still goes out.
  const refused = await post({ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 0.01, mode: 'LIVE' })
  assert.is(refused.status, 409)
  assert.is(refused.json.code, 'trading_paused')
})

test('FLATTEN sells every LIVE position at market on the venue, reduce-only, while paused', async () => {
  const held = Number((await venue.balances('acme')).BTC.free)
  assert.ok(held > 0)
  const pulled = await killSwitch({ action: 'FLATTEN', pause: true })
  assert.is(pulled.status, 200, pulled.text)
  await eventually('no open LIVE trade', async () => {
    const open = (await api('GET', '/api/v1/trades?status=OPEN', { token: acme.trader })).json
    return open.filter((t: any) => t.mode === 'LIVE').length === 0 ? true : undefined
  })
  // What the venue holds now is what was bought outside the ledger's trades: nothing.
  near(Number((await venue.balances('acme')).BTC.free), 0, 'BTC left on the venue')
  const incident = (await incidentsOf(server, 'acme', 'EMERGENCY_KILL_SWITCH_ENGAGED')).at(-1)!
  assert.match(incident.reason, /LIVE trades? sold at market on the venue/)
  assert.is((await killSwitch({ action: 'RESUME', pause: false })).status, 200)
})

async function liveTenantWithoutVenue(): Promise<string> {
  const { tenantFixture } = await import('../support/harness.ts')
  const zeta = await tenantFixture(server, 'zeta')
  return zeta.key(['orders:write', 'trades:read'])
}

test.run()
