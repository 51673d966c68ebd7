// The per-order limits of SPEC 9 through the real API: the fat-finger limits refuse (422, an incident
// and an event, nothing placed), the runaway limit trips the breaker (409, the kill switch pulled,
// pending orders canceled, a fleet RESUME lifts it), the profile's new fields validate, and the
// equity routes keep to their scopes and their tenant. Each case trades a pair of its own.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer, tenantFixture, type Res, type Server, type TenantFixture } from '../support/harness.ts'
import { checkedClient, eventsOf, importCloses, settled, withDb } from '../trading/market.ts'

const test = suite('risk: order limits and the runaway breaker')
let server: Server
let api: Awaited<ReturnType<typeof checkedClient>>

interface Desk {
  fixture: TenantFixture
  pair: string
  day: number
}

const SPEC9_FIELDS = [
  'max_daily_loss_usd',
  'max_drawdown_pct',
  'max_consecutive_losses',
  'max_order_notional_usd',
  'price_band_pct',
  'max_trades_per_day',
  'max_orders_per_minute',
]

async function desk(slug: string, pair: string, close: number, limits: Record<string, unknown>): Promise<Desk> {
  const fixture = await tenantFixture(server, slug)
  const res = await api('PATCH', '/api/v1/risk/profile', { token: fixture.jwt, body: { max_open_trades: 50, max_exposure_usd: 1e6, ...limits } })
  assert.is(res.status, 200, res.text)
  const d = { fixture, pair, day: 0 }
  await nextClose(d, close)
  return d
}

async function nextClose(d: Desk, close: number): Promise<void> {
  d.day++
  await importCloses(server, [[d.pair, `2025-05-${String(d.day).padStart(2, '0')}`, close]])
}

function order(d: Desk, body: Record<string, unknown>): Promise<Res> {
  return api('POST', '/api/v1/orders', { token: d.fixture.jwt, body: { pair: d.pair, type: 'MARKET', ...body } })
}

async function ordersPlaced(d: Desk): Promise<number> {
  const row = await withDb(server, (db) => db.get('SELECT count(*) AS n FROM orders o JOIN tenants t ON t.id = o.tenant_id WHERE t.slug = ?', [d.fixture.slug]))
  return row.n
}

async function incidents(d: Desk): Promise<any[]> {
  return (await api('GET', '/api/v1/risk/incidents?limit=1000', { token: d.fixture.jwt })).json
}

/** A fat-finger refusal: 422 with `detail`, its incident saying the same, its event, and no order written. */
async function refused(d: Desk, body: Record<string, unknown>, limit: string, detail: string): Promise<void> {
  const before = await ordersPlaced(d)
  const res = await order(d, body)
  assert.is(res.status, 422, res.text)
  assert.is(res.json.code, 'risk_limit_exceeded')
  const match = /^(.*); incident (inc_\w+) recorded$/.exec(res.json.detail)
  assert.ok(match, res.json.detail)
  assert.is(match[1], detail)
  const incident = (await incidents(d)).find((i) => i.id === match[2])
  assert.is(incident.action, 'RISK_LIMIT_BREACHED')
  assert.is(incident.status, 'RECORDED')
  assert.is(incident.reason, `order refused: ${body.side} ${d.pair}: ${detail}`)
  const event = (await eventsOf(server, 'risk.limit.breached')).find((e) => e.incident_id === match[2])
  assert.is(event.limit, limit)
  assert.is(event.detail, detail)
  assert.is(await ordersPlaced(d), before, 'nothing placed')
}

test.before(async () => {
  server = await startServer()
  api = await checkedClient(server)
})
test.after(async () => {
  await server.stop()
})

test('max_order_notional_usd refuses a BUY by quantity at the last close, a BUY by notional_usd and a SELL', async () => {
  const d = await desk('ola', 'OLA/USDT', 100, { max_order_notional_usd: 1500 })
  const notional = (quantity: number, close: number) => `order notional ${(quantity * close).toFixed(2)} USD exceeds max_order_notional_usd 1500`
  await refused(d, { side: 'BUY', quantity: 16 }, 'max_order_notional_usd', notional(16, 100))
  await refused(d, { side: 'BUY', notional_usd: 1500.5 }, 'max_order_notional_usd', 'order notional 1500.50 USD exceeds max_order_notional_usd 1500')
  await refused(d, { side: 'BUY', type: 'LIMIT', quantity: 20, limit_price: 90 }, 'max_order_notional_usd', notional(20, 90))
  assert.is((await order(d, { side: 'BUY', quantity: 15 })).status, 200, 'at the limit is within it')
  await nextClose(d, 100)
  await nextClose(d, 120) // the position is now worth 1,800: selling it whole is over the limit too
  await refused(d, { side: 'SELL', quantity: 15 }, 'max_order_notional_usd', notional(15, 120))
  assert.is((await order(d, { side: 'SELL', quantity: 10 })).status, 200)
})

test('price_band_pct refuses a LIMIT price beyond the band from the last close, on either side; MARKET is not concerned', async () => {
  const d = await desk('olb', 'OLB/USDT', 200, { price_band_pct: 10 })
  const band = (price: number, pct: number, date: string) =>
    `LIMIT price ${price} is ${pct.toFixed(2)}% from the last price 200 (OLB/USDT close of ${date}), beyond price_band_pct 10`
  await refused(d, { side: 'BUY', type: 'LIMIT', quantity: 1, limit_price: 179 }, 'price_band_pct', band(179, 10.5, '2025-05-01'))
  await refused(d, { side: 'BUY', type: 'LIMIT', quantity: 1, limit_price: 221 }, 'price_band_pct', band(221, 10.5, '2025-05-01'))
  for (const limit_price of [181, 180, 220]) {
    const res = await order(d, { side: 'BUY', type: 'LIMIT', quantity: 1, limit_price })
    assert.is(res.status, 200, `${limit_price}: ${res.text}`)
  }
  assert.is((await order(d, { side: 'BUY', quantity: 1 })).status, 200)
  await nextClose(d, 200)
  await refused(d, { side: 'SELL', type: 'LIMIT', quantity: 1, limit_price: 250 }, 'price_band_pct', band(250, 25, '2025-05-02'))
})

test('max_trades_per_day refuses the (N+1)th opening order of the UTC day; a SELL still goes through', async () => {
  const d = await desk('olc', 'OLC/USDT', 10, { max_trades_per_day: 3 })
  assert.is((await order(d, { side: 'BUY', quantity: 1 })).status, 200)
  assert.is((await order(d, { side: 'BUY', quantity: 2 })).status, 200)
  assert.is((await order(d, { side: 'BUY', type: 'LIMIT', quantity: 1, limit_price: 9.5 })).status, 200)
  await nextClose(d, 10)
  await refused(d, { side: 'BUY', quantity: 1 }, 'max_trades_per_day', 'opening orders today (3) + 1 would exceed max_trades_per_day 3')
  const sell = await order(d, { side: 'SELL', quantity: 3 })
  assert.is(sell.status, 200, sell.text)
})

test('max_orders_per_minute: the runaway bot is stopped by the breaker, and a fleet RESUME lifts it', async () => {
  const d = await desk('old', 'OLD/USDT', 100, { max_orders_per_minute: 5 })
  const placed: string[] = []
  let sixth: Res | undefined
  for (let i = 0; i < 6; i++) {
    const res = await order(d, { side: 'BUY', type: 'LIMIT', quantity: 1, limit_price: 50 })
    if (res.status !== 200) {
      sixth = res
      break
    }
    placed.push(res.json.id)
  }
  assert.is(placed.length, 5, sixth?.text)
  assert.is(sixth?.status, 409, sixth?.text)
  assert.is(sixth!.json.code, 'trading_paused')
  assert.match(sixth!.json.detail, /the circuit breaker max_orders_per_minute tripped \(CANCEL_AND_PAUSE, incident inc_\w+\) and this order was not placed$/)
  assert.is(await ordersPlaced(d), 5)

  const trip = (await incidents(d)).filter((i) => i.action === 'CIRCUIT_BREAKER_TRIPPED')
  assert.is(trip.length, 1)
  assert.ok(sixth!.json.detail.includes(trip[0].id))
  assert.is(trip[0].status, 'ENGAGED')
  assert.is(trip[0].actor, 'circuit-breaker@localhost')
  assert.match(
    trip[0].reason,
    /^orders per minute 6 > 5: 5 orders placed in the 60 s up to \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC and one more asked; CANCEL_AND_PAUSE, 5 pending orders canceled$/,
  )
  assert.is((await api('GET', '/api/v1/risk/profile', { token: d.fixture.jwt })).json.trading_paused, true)
  await settled(server)
  for (const id of placed) assert.is((await api('GET', `/api/v1/orders/${id}`, { token: d.fixture.jwt })).json.status, 'CANCELED')
  const event = (await eventsOf(server, 'risk.circuit_breaker.tripped')).find((e) => e.incident.id === trip[0].id)
  assert.equal([event.breaker, event.limit, event.value, event.canceled_orders], ['max_orders_per_minute', 5, 6, 5])

  const breaker = async () =>
    (await api('GET', '/api/v1/risk/equity', { token: d.fixture.jwt })).json.breakers.find((b: any) => b.name === 'max_orders_per_minute')
  assert.equal(
    { ...(await breaker()), value: 0, utilization_pct: 0 },
    { name: 'max_orders_per_minute', limit: 5, value: 0, utilization_pct: 0, state: 'TRIPPED' },
  )
  assert.is((await order(d, { side: 'BUY', quantity: 1 })).json.detail.startsWith('trading is paused for the whole fleet'), true, 'paused: no second trip')

  // Not a loss breaker: nothing holds, so a plain RESUME is accepted and clears the latch.
  const resumed = await api('POST', '/api/v1/risk/kill-switch', { token: d.fixture.jwt, body: { action: 'RESUME', pause: false } })
  assert.is(resumed.status, 200, resumed.text)
  assert.is(resumed.json.status, 'RESUMED')
  assert.is.not((await breaker()).state, 'TRIPPED')
  assert.is((await api('GET', '/api/v1/risk/profile', { token: d.fixture.jwt })).json.trading_paused, false)
})

test('risk profile: the new fields default to off, bad values are 400 naming the field and change nothing, null turns a limit off', async () => {
  const d = await desk('ole', 'OLE/USDT', 1, {})
  const profile = async () => (await api('GET', '/api/v1/risk/profile', { token: d.fixture.jwt })).json
  const before = await profile()
  for (const field of SPEC9_FIELDS) assert.is(before[field], null, field)
  assert.is(before.capital_usd, 10_000)
  assert.is(before.breaker_action, 'CANCEL_AND_PAUSE')
  const updates = async () => (await incidents(d)).filter((i) => i.action === 'RISK_PROFILE_UPDATED').length
  const updated = await updates()
  const cases: [Record<string, unknown>, string, string][] = [
    [{ max_drawdown_pct: 0 }, 'max_drawdown_pct', 'validation_failed'],
    [{ max_drawdown_pct: 101 }, 'max_drawdown_pct', 'validation_failed'],
    [{ max_consecutive_losses: 1.5 }, 'max_consecutive_losses', 'validation_failed'],
    [{ breaker_action: 'PAUSE' }, 'breaker_action', 'validation_failed'],
    [{ capital_usd: -1 }, 'capital_usd', 'validation_failed'],
    [{ capital_usd: null }, 'capital_usd', 'validation_failed'],
    [{ max_daily_loss_usd: 100, max_daily_loss: 100 }, 'max_daily_loss', 'unknown_field'],
  ]
  for (const [body, field, code] of cases) {
    const res = await api('PATCH', '/api/v1/risk/profile', { token: d.fixture.jwt, body })
    assert.is(res.status, 400, JSON.stringify(body))
    assert.is(res.json.code, code, res.text)
    assert.ok(
      res.json.errors.some((e: any) => e.field === field),
      res.text,
    )
  }
  assert.equal(await profile(), before)
  assert.is(await updates(), updated, 'no RISK_PROFILE_UPDATED for a refused change')

  const on = { max_drawdown_pct: 100, max_consecutive_losses: 3, capital_usd: 25_000, breaker_action: 'FLATTEN', max_trades_per_day: 7 }
  const set = await api('PATCH', '/api/v1/risk/profile', { token: d.fixture.jwt, body: on })
  assert.is(set.status, 200, set.text)
  assert.equal({ ...set.json, ...on }, set.json)
  const off = await api('PATCH', '/api/v1/risk/profile', { token: d.fixture.jwt, body: { max_drawdown_pct: null, max_trades_per_day: null } })
  assert.equal({ ...off.json, max_drawdown_pct: 100, max_trades_per_day: 7 }, set.json)
  assert.is(off.json.max_drawdown_pct, null)
  assert.is(await updates(), updated + 2)
})

test('kill switch: reset_breakers with an action other than RESUME is 400 naming reset_breakers', async () => {
  const d = await desk('olf', 'OLF/USDT', 1, {})
  for (const body of [
    { action: 'PAUSE', pause: true, reset_breakers: true },
    { action: 'CANCEL_AND_PAUSE', pause: true, reset_breakers: false },
  ]) {
    const res = await api('POST', '/api/v1/risk/kill-switch', { token: d.fixture.jwt, body })
    assert.is(res.status, 400, res.text)
    assert.ok(
      res.json.errors.some((e: any) => e.field === 'reset_breakers'),
      res.text,
    )
  }
  assert.is((await api('GET', '/api/v1/risk/profile', { token: d.fixture.jwt })).json.trading_paused, false)
})

test("equity routes: 401 without a valid key, 403 without a risk scope, one tenant's equity only; PATCH needs risk:admin", async () => {
  const d = await desk('olg', 'OLG/USDT', 100, {})
  assert.is((await order(d, { side: 'BUY', quantity: 10 })).status, 200)
  await nextClose(d, 80)
  const other = await tenantFixture(server, 'olh')
  assert.is((await api('PATCH', '/api/v1/risk/profile', { token: other.jwt, body: { capital_usd: 5000 } })).status, 200)
  const read = await d.fixture.key(['risk:read'])
  const trades = await d.fixture.key(['trades:read'])
  const revoked = await api('POST', '/api/v1/auth/api-tokens', { token: d.fixture.jwt, body: { name: 'to-revoke', scopes: ['risk:read'] } })
  assert.is((await api('DELETE', `/api/v1/auth/api-tokens/${revoked.json.id}`, { token: d.fixture.jwt })).status, 200)
  for (const path of ['/api/v1/risk/equity', '/api/v1/risk/equity/history']) {
    assert.is((await api('GET', path)).status, 401, path)
    const wrong = await api('GET', path, { token: trades })
    assert.is(wrong.status, 403, path)
    assert.is(wrong.json.code, 'insufficient_scope')
    assert.is((await api('GET', path, { token: revoked.json.token })).status, 401, path)
    assert.is((await api('GET', path, { token: read })).status, 200, path)
    assert.is((await api('GET', path, { token: await d.fixture.key(['risk:admin']) })).status, 200, path)
  }
  const mine = (await api('GET', '/api/v1/risk/equity', { token: read })).json
  assert.is(mine.exposure_usd, 800)
  const theirs = (await api('GET', '/api/v1/risk/equity', { token: await other.key(['risk:read']) })).json
  assert.equal([theirs.equity_usd, theirs.capital_usd, theirs.realized_pnl_usd, theirs.unrealized_pnl_usd, theirs.exposure_usd], [5000, 5000, 0, 0, 0])
  assert.equal(theirs.breakers, [])

  const patch = await api('PATCH', '/api/v1/risk/profile', { token: read, body: { max_daily_loss_usd: 100 } })
  assert.is(patch.status, 403)
  assert.is(patch.json.code, 'insufficient_scope')
  assert.is((await api('GET', '/api/v1/risk/profile', { token: read })).json.max_daily_loss_usd, null)
})

test.run()
