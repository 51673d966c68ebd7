// LIVE orders when the process dies or the venue goes away (SPEC 10): a `serve` SIGKILLed right after
// the order's answer, or between the venue's acceptance and Bulwark's record of it, places the order
// exactly once after a restart on the same data dir; reconciliation at start records a foreign order
// once and cancels it while the fleet is paused; a BUY queued while the venue is down waits for the
// venue and, once the fleet is paused, for RESUME. The oracle is the venue's own book: how many
// orders it holds under the Bulwark order id.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Venue } from '../support/venue/index.ts'
import { eventsOf, near } from '../trading/market.ts'
import { type Api, crashSuite, eventually, incidentsOf, liveTenant, orderReaches, outboxOf, priceBoth } from './fixture-live.ts'

const test = suite('venue: LIVE orders across crashes and reconciliation')
const COMMISSION = 0.001
/** A resend waits out the venue's receive window after a send that may have landed: give it room. */
const SETTLE = 40_000
const crashes = crashSuite(test)
let venue: Venue
test.before(() => {
  venue = crashes.venue()
})
const serve = crashes.serve

const buy = (api: Api, token: string) =>
  api('POST', '/api/v1/orders', { token, body: { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 0.01, mode: 'LIVE' } })
const killSwitch = (api: Api, token: string, action: 'PAUSE' | 'RESUME') =>
  api('POST', '/api/v1/risk/kill-switch', { token, body: { action, pause: action === 'PAUSE' } })
const venueOrders = (account: string, clientOrderId: string) => venue.orders({ account, clientOrderId })
const venueHealth = async (api: Api): Promise<string | undefined> => (await api('GET', '/api/v1/health')).json.venues.binance
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

test('SIGKILL right after a LIVE order is answered: placed once after the restart', async () => {
  const first = await serve()
  const alpha = await liveTenant(first.server, first.api, venue, 'alpha', { USDT: 100_000 })
  await priceBoth(first.server, venue, 'BTC/USDT', '2025-03-01', 64_000, 65_000)
  const placed = await buy(first.api, alpha.trader)
  await first.server.stop('SIGKILL')
  assert.is(placed.status, 200, placed.text)
  assert.is(placed.json.status, 'PENDING')

  const second = await serve(first.server.dataDir)
  await orderReaches(second.api, alpha.trader, placed.json.id, ['FILLED'], SETTLE)
  assert.is((await venueOrders('alpha', placed.json.id)).length, 1, 'exactly one order on the venue under the Bulwark id')
})

test('SIGKILL after the venue took the order and before Bulwark recorded it: found by its id, not placed again', async () => {
  const first = await serve()
  const bravo = await liveTenant(first.server, first.api, venue, 'bravo', { USDT: 100_000 })
  await priceBoth(first.server, venue, 'BTC/USDT', '2025-03-01', 64_000, 65_000)
  await venue.fault({ kind: 'hang', match: { method: 'POST', path: '/api/v3/order' }, execute: true, times: 1 })
  const placed = await buy(first.api, bravo.trader)
  assert.is(placed.status, 200, placed.text)
  await eventually('the venue holds the order', async () => ((await venueOrders('bravo', placed.json.id)).length === 1 ? true : undefined))
  assert.is((await outboxOf(first.server, placed.json.id))?.state, 'SENT', 'Bulwark has no answer from the venue yet')
  await first.server.stop('SIGKILL')
  await venue.clearFaults()

  const second = await serve(first.server.dataDir)
  const filled = await orderReaches(second.api, bravo.trader, placed.json.id, ['FILLED'], SETTLE)
  assert.is((await venueOrders('bravo', placed.json.id)).length, 1, 'exactly one order on the venue under the Bulwark id')
  near(filled.filled_quantity, 0.01, 'filled')
  const trade = (await second.api('GET', '/api/v1/trades?status=OPEN&pair=BTC/USDT', { token: bravo.trader })).json.find((t: any) => t.id === filled.trade_id)
  assert.is(trade.mode, 'LIVE')
  // The venue took 0.1% of the BTC bought, in BTC: the trade holds the rest.
  near(trade.quantity, 0.01 * (1 - COMMISSION), 'the trade holds what the account holds')
})

test('a foreign order on the venue: one incident and event at start, however often restarted; canceled once paused', async () => {
  let { server, api } = await serve()
  const charlie = await liveTenant(server, api, venue, 'charlie', { USDT: 100_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-01', 64_000, 65_000)
  const foreign = await venue.injectOrder({ account: 'charlie', symbol: 'BTC/USDT', side: 'BUY', type: 'LIMIT', quantity: '0.01', price: '50000' })
  const venueId = String(foreign.orderId)
  const restart = async () => {
    await server.stop()
    ;({ server, api } = await serve(server.dataDir))
  }
  const mismatches = async () => (await incidentsOf(server, 'charlie', 'VENUE_RECONCILIATION_MISMATCH')).filter((i) => i.reason.includes(venueId))

  await restart()
  const [incident] = await eventually('the mismatch incident', async () => {
    const found = await mismatches()
    return found.length ? found : undefined
  })
  assert.match(incident.reason, /unknown to the ledger/)
  assert.is(incident.actor, 'reconciliation@localhost')
  assert.ok((await eventsOf(server, 'venue.mismatch')).some((e) => e.venue_order_id === venueId && e.incident_id === incident.id))

  await restart()
  // The first pass after a start reconciles before it reports on the venue in /health.
  await eventually('a reconciled pass', () => venueHealth(api))
  assert.equal(
    (await mismatches()).map((i) => i.id),
    [incident.id],
    'the same order is not recorded again',
  )
  assert.is((await venue.orders({ account: 'charlie', open: true })).length, 1, 'not canceled while trading runs')

  const paused = await killSwitch(api, charlie.trader, 'PAUSE')
  assert.is(paused.status, 200, paused.text)
  await restart()
  const [canceled] = await eventually('the foreign order canceled', async () => {
    const found = await venueOrders('charlie', String(foreign.clientOrderId))
    return found[0]?.status === 'CANCELED' ? found : undefined
  })
  assert.is(String(canceled.orderId), venueId)
  assert.is((await mismatches()).length, 1)
})

test('a LIVE BUY while the venue is down, the fleet paused before it is back: nothing sent until RESUME, then once', async () => {
  const { server, api } = await serve()
  const delta = await liveTenant(server, api, venue, 'delta', { USDT: 100_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-01', 64_000, 65_000)
  // The executor's first pass opened the venue (and loaded its markets) before it goes down, and a
  // first order read the venue's price: the next one within 60 s is checked at that mark.
  assert.is(await eventually('the first pass', () => venueHealth(api)), 'ok')
  const first = await buy(api, delta.trader)
  await orderReaches(api, delta.trader, first.json.id, ['FILLED'])
  await venue.down()
  try {
    const placed = await buy(api, delta.trader)
    assert.is(placed.status, 200, placed.text)
    assert.is(placed.json.status, 'PENDING')
    await eventually('a send tried', async () => ((await outboxOf(server, placed.json.id))?.state === 'SENT' ? true : undefined))
    await eventually('health degraded', async () => ((await venueHealth(api)) === 'degraded' ? true : undefined))

    const paused = await killSwitch(api, delta.trader, 'PAUSE')
    assert.is(paused.status, 200, paused.text)
    // Passes that call nothing (the BUY held back, the retry not yet due) say nothing about the venue.
    await sleep(2500)
    assert.is(await venueHealth(api), 'degraded', 'still degraded: nothing has answered since')
    await venue.up()
    await sleep(4000) // proves an absence: a paused fleet sends no BUY
    assert.is((await venueOrders('delta', placed.json.id)).length, 0, 'nothing placed while paused')
    assert.is((await api('GET', `/api/v1/orders/${placed.json.id}`, { token: delta.trader })).json.status, 'PENDING')

    const resumed = await killSwitch(api, delta.trader, 'RESUME')
    assert.is(resumed.status, 200, resumed.text)
    await orderReaches(api, delta.trader, placed.json.id, ['FILLED'], SETTLE)
    assert.is((await venueOrders('delta', placed.json.id)).length, 1, 'placed once after RESUME')
  } finally {
    await venue.up()
  }
})

test('a LIVE trade is marked at the venue last price at start, and a loss breaker trips on that mark', async () => {
  const first = await serve()
  const echo = await liveTenant(first.server, first.api, venue, 'echo', { USDT: 100_000 })
  await priceBoth(first.server, venue, 'BTC/USDT', '2025-03-05', 64_000, 65_000)
  const placed = await buy(first.api, echo.trader)
  await orderReaches(first.api, echo.trader, placed.json.id, ['FILLED'])
  const profile = await first.api('PATCH', '/api/v1/risk/profile', { token: echo.trader, body: { max_daily_loss_usd: 100 } })
  assert.is(profile.status, 200, profile.text)
  const before = (await first.api('GET', '/api/v1/risk/equity', { token: echo.trader })).json
  await first.server.stop()
  await venue.setPrice('BTC/USDT', 50_000)

  const second = await serve(first.server.dataDir)
  // The oracle: 0.01 BTC bought at 65000 (650 USDT), 0.1% of it taken as fee: 0.00999 BTC at 50000.
  const held = 0.01 * (1 - COMMISSION)
  const equity = await eventually('equity at the venue mark', async () => {
    const now = (await second.api('GET', '/api/v1/risk/equity', { token: echo.trader })).json
    return Math.abs(now.unrealized_pnl_usd - (held * 50_000 - 650)) < 1e-6 ? now : undefined
  })
  near(equity.unrealized_pnl_usd, held * 50_000 - 650, 'unrealized at the venue mark')
  const tripped = await incidentsOf(second.server, 'echo', 'CIRCUIT_BREAKER_TRIPPED')
  assert.is(tripped.length, 1, 'the daily loss breaker tripped on the mark')
  assert.match(tripped[0].reason, /daily loss/)
  assert.ok(before.day_start_equity_usd - equity.equity_usd >= 100)
})

test.run()
