// When a protection cannot simply rest (SPEC 13), through the real API, executor and ccxt against the
// test venue with markets that differ the way Binance's do: a market without stop-market orders gets
// a stop-limit, and one the price gaps through is replaced by a market sale after 10 s; a market
// without OCO rests the stop alone and Bulwark sells at the take-profit itself; a protection the
// venue refuses (its limit on stop orders per symbol) is an incident, a degraded /health and, with
// unprotected_action FLATTEN, a sale; one canceled by hand on the venue is placed again.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import { CATALOGUE_SYMBOLS, type Venue } from '../support/venue/index.ts'
import { eventsOf, near, withDb } from '../trading/market.ts'
import { type Api, eventually, liveSuite, incidentsOf, liveTenant, type LiveTenant, orderReaches, priceBoth } from './fixture-live.ts'
import { roundTo } from './fixture-protection.ts'

const test = suite('venue: protection that cannot simply rest')
let venue: Venue
let server: Server
let api: Api

const NO_STOP_MARKET = ['LIMIT', 'LIMIT_MAKER', 'MARKET', 'STOP_LOSS_LIMIT', 'TAKE_PROFIT_LIMIT']
const symbols = CATALOGUE_SYMBOLS.map((s) => {
  if (s.base === 'LTC') return { ...s, orderTypes: NO_STOP_MARKET }
  if (s.base === 'DOT') return { ...s, ocoAllowed: false }
  if (s.base === 'LINK') return { ...s, maxNumAlgoOrders: 1 }
  return s
})
liveSuite(test, (s) => ({ venue, server, api } = s), { symbols })

const post = (t: LiveTenant, body: Record<string, unknown>) => api('POST', '/api/v1/orders', { token: t.trader, body: { mode: 'LIVE', ...body } })
const patch = (t: LiveTenant, body: Record<string, unknown>) => api('PATCH', '/api/v1/risk/profile', { token: t.trader, body })
const trades = async (t: LiveTenant, status: string) => (await api('GET', `/api/v1/trades?status=${status}`, { token: t.trader })).json as any[]
const resting = async (account: string, symbol: string) => (await venue.orders({ account, open: true })).filter((o) => o.symbol === symbol) as any[]
const venueHealth = async (): Promise<string | undefined> => (await api('GET', '/api/v1/health')).json.venues.binance
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function entered(t: LiveTenant, pair: string, quantity: number): Promise<void> {
  const buy = await post(t, { pair, side: 'BUY', type: 'MARKET', quantity })
  assert.is(buy.status, 200, buy.text)
  await orderReaches(api, t.trader, buy.json.id, ['FILLED'])
}

test('a market without stop-market orders rests a stop-limit; gapped through, it is replaced by a market sale after 10 s', async () => {
  const t = await liveTenant(server, api, venue, 'gap', { USDT: 100_000 })
  await priceBoth(server, venue, 'LTC/USDT', '2025-06-01', 80, 80)
  await patch(t, { venue_stop_loss_pct: 5, stop_limit_offset_pct: 2 })
  await entered(t, 'LTC/USDT', 10)
  const [stop] = await eventually('stop-limit resting', async () => {
    const orders = await resting('gap', 'LTCUSDT')
    return orders.length === 1 ? orders : undefined
  })
  assert.is(stop.type, 'STOP_LOSS_LIMIT')
  near(Number(stop.stopPrice), 76, 'trigger at 80 x 0.95')
  near(Number(stop.price), roundTo(76 * 0.98, 0.01), 'limit 2% below the trigger')
  // The price gaps through the limit: the stop triggers and rests, unfilled.
  const gappedAt = Date.now()
  await venue.setPrice('LTC/USDT', 70)
  const closed = await eventually('closed by the replacement sale', async () => (await trades(t, 'CLOSED'))[0], 30_000)
  assert.ok(Date.now() - gappedAt >= 10_000, 'not before 10 s')
  assert.is(closed.exit_reason, 'venue_stop')
  near(closed.exit_price, 70, 'sold at the market')
  const orders = (await venue.orders({ account: 'gap' })).filter((o) => o.symbol === 'LTCUSDT' && o.side === 'SELL')
  assert.equal(
    orders.map((o) => [o.type, o.status]),
    [
      ['STOP_LOSS_LIMIT', 'CANCELED'],
      ['MARKET', 'FILLED'],
    ],
  )
  const [replaced] = await incidentsOf(server, 'gap', 'VENUE_PROTECTION_REPLACED')
  assert.match(replaced.reason, new RegExp(`order ${stop.orderId} `))
  assert.equal(await resting('gap', 'LTCUSDT'), [])
})

test('without OCO only the stop rests, and Bulwark sells at the take-profit itself', async () => {
  const t = await liveTenant(server, api, venue, 'nooco', { USDT: 100_000 })
  await priceBoth(server, venue, 'DOT/USDT', '2025-06-02', 6, 6)
  await patch(t, { venue_stop_loss_pct: 10, venue_take_profit_pct: 5 })
  await entered(t, 'DOT/USDT', 100)
  const [stop] = await eventually('stop resting', async () => {
    const orders = await resting('nooco', 'DOTUSDT')
    return orders.length === 1 ? orders : undefined
  })
  assert.equal([stop.type, stop.orderListId], ['STOP_LOSS', -1])
  const [open] = await trades(t, 'OPEN')
  assert.equal([open.protection.stop_price, open.protection.take_profit_price], [5.4, 6.3])
  await venue.setPrice('DOT/USDT', 6.35)
  const closed = await eventually('sold at the take-profit', async () => (await trades(t, 'CLOSED'))[0], 20_000)
  assert.is(closed.exit_reason, 'venue_take_profit')
  near(closed.exit_price, 6.35, 'at the market')
  assert.equal(await resting('nooco', 'DOTUSDT'), [], 'the stop canceled first')
})

test('a protection the venue refuses: VENUE_PROTECTION_FAILED, its event, /health degraded; FLATTEN sells that pair alone', async () => {
  const t = await liveTenant(server, api, venue, 'refused', { USDT: 100_000, LINK: 10 })
  await priceBoth(server, venue, 'LINK/USDT', '2025-06-03', 15, 15)
  // The account's one stop order on LINKUSDT (MAX_NUM_ALGO_ORDERS 1), placed elsewhere.
  await venue.injectOrder({ account: 'refused', symbol: 'LINKUSDT', side: 'SELL', type: 'STOP_LOSS', quantity: 10, stopPrice: 10 })
  await patch(t, { venue_stop_loss_pct: 5 })
  await entered(t, 'LINK/USDT', 20)
  const [failed] = await eventually('refused', async () => {
    const found = await incidentsOf(server, 'refused', 'VENUE_PROTECTION_FAILED')
    return found.length ? found : undefined
  })
  assert.match(failed.reason, /MAX_NUM_ALGO_ORDERS/)
  const event = (await eventsOf(server, 'venue.protection_failed')).find((e) => e.incident_id === failed.id)
  assert.is(event?.pair, 'LINK/USDT')
  assert.is((await trades(t, 'OPEN'))[0].protection.status, 'FAILED')
  assert.is(await venueHealth(), 'degraded')
  await sleep(2500)
  assert.is((await incidentsOf(server, 'refused', 'VENUE_PROTECTION_FAILED')).length, 1, 'one incident, however often it is tried')

  // With FLATTEN the unprotected pair is sold; trading is not paused.
  const flatten = await patch(t, { unprotected_action: 'FLATTEN', venue_stop_loss_pct: 6 })
  assert.is(flatten.status, 200)
  const closed = await eventually('flattened', async () => (await trades(t, 'CLOSED'))[0], 20_000)
  assert.is(closed.exit_reason, 'flatten')
  assert.is((await api('GET', '/api/v1/risk/profile', { token: t.trader })).json.trading_paused, false)
  await eventually('healthy once flat', async () => ((await venueHealth()) === 'ok' ? true : undefined))
})

test('a protection canceled by hand on the venue is placed again, recorded as a mismatch', async () => {
  const t = await liveTenant(server, api, venue, 'byhand', { USDT: 100_000 })
  await priceBoth(server, venue, 'AVAX/USDT', '2025-06-04', 30, 30)
  await patch(t, { venue_stop_loss_pct: 5, venue_take_profit_pct: 5 })
  await entered(t, 'AVAX/USDT', 10)
  const first = await eventually('resting', async () => {
    const orders = await resting('byhand', 'AVAXUSDT')
    return orders.length === 2 ? orders : undefined
  })
  await venue.cancelOrderList({ symbol: 'AVAXUSDT', orderListId: first[0].orderListId })
  const again = await eventually('placed again', async () => {
    const orders = await resting('byhand', 'AVAXUSDT')
    return orders.length === 2 && orders[0].orderListId !== first[0].orderListId ? orders : undefined
  })
  assert.equal(again.map((o) => o.type).sort(), ['LIMIT_MAKER', 'STOP_LOSS'])
  const mismatches = await incidentsOf(server, 'byhand', 'VENUE_RECONCILIATION_MISMATCH')
  assert.is(mismatches.length, 1)
  assert.match(mismatches[0].reason, /canceled there by hand; placed again/)
})

test('a placement whose answer was lost is found by its client order ids after it, never placed twice', async () => {
  const t = await liveTenant(server, api, venue, 'lost', { USDT: 100_000 })
  await priceBoth(server, venue, 'XRP/USDT', '2025-06-05', 0.55, 0.55)
  await patch(t, { venue_stop_loss_pct: 10, venue_take_profit_pct: 10 })
  // The venue places the list, then the connection drops before any answer.
  await venue.fault({ kind: 'drop', match: { method: 'POST', path: '/api/v3/orderList/oco' }, times: 1 })
  await entered(t, 'XRP/USDT', 1000)
  const [open] = await eventually(
    'resting after the lookup',
    async () => {
      const list = await trades(t, 'OPEN')
      return list[0]?.protection.status === 'RESTING' ? list : undefined
    },
    30_000,
  )
  const lists = (await venue.orders({ account: 'lost' })).filter((o) => o.symbol === 'XRPUSDT' && o.orderListId !== -1)
  assert.is(new Set(lists.map((o) => o.orderListId)).size, 1, 'one list on the venue')
  assert.equal(open.protection.venue_order_ids.sort(), lists.map((o) => String(o.orderId)).sort())
  const sent = await venue.requests({ method: 'POST', path: '/api/v3/orderList/oco' })
  assert.is(sent.filter((r) => r.params.symbol === 'XRPUSDT').length, 1, 'sent once')
})

test('a tenant that wants no protection: a fill leaves its row NONE and not due, written by the fill alone; a FAILED one turns NONE once none is wanted', async () => {
  const bare = await liveTenant(server, api, venue, 'bare', { USDT: 100_000 })
  await priceBoth(server, venue, 'LINK/USDT', '2025-06-03', 15, 15)
  await entered(bare, 'LINK/USDT', 20)
  await sleep(300)
  // Nothing to tend: no pass is woken for it, so the fill's own transaction is the row's last write.
  const row = await withDb(server, (db) =>
    db.get<{ status: string; phase: string; due_at: number; updated_at: string; filled_at: string }>(
      `SELECT p.status, p.phase, p.due_at, p.updated_at, o.filled_at FROM venue_protections p
         JOIN tenants t ON t.id = p.tenant_id JOIN orders o ON o.tenant_id = t.id
       WHERE t.slug = 'bare' AND p.pair = 'LINK/USDT' AND o.pair = 'LINK/USDT'`,
    ),
  )
  assert.equal([row?.status, row?.phase, Number(row?.due_at)], ['NONE', 'IDLE', Number.MAX_SAFE_INTEGER])
  assert.is(row?.updated_at, row?.filled_at)

  const t = await liveTenant(server, api, venue, 'refused-none', { USDT: 100_000, LINK: 10 })
  await venue.injectOrder({ account: 'refused-none', symbol: 'LINKUSDT', side: 'SELL', type: 'STOP_LOSS', quantity: 10, stopPrice: 10 })
  await patch(t, { venue_stop_loss_pct: 5 })
  await entered(t, 'LINK/USDT', 20)
  await eventually('refused', async () => ((await trades(t, 'OPEN'))[0]?.protection.status === 'FAILED' ? true : undefined))
  assert.is((await patch(t, { venue_stop_loss_pct: null })).status, 200)
  const none = await eventually('none wanted', async () => {
    const trade = (await trades(t, 'OPEN'))[0]
    return trade?.protection.status === 'NONE' ? trade : undefined
  })
  assert.equal(none.protection, { status: 'NONE', stop_price: null, take_profit_price: null, venue_order_ids: [] })
})

test.run()
