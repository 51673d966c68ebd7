// The loss breakers over scripted price paths (candles imported one day at a time through the real
// CLI): each trips on the candle that crosses its limit and not one candle before, and its incident
// states numbers this test computes itself from the trades it made and the closes it imported.
// Then RESUME: refused while the condition holds, accepted with reset_breakers.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cli, startServer, tenantFixture, type Res, type Server, type TenantFixture } from '../support/harness.ts'
import { checkedClient, importCloses, settled, withDb } from '../trading/market.ts'

const test = suite('risk: circuit breakers')
let server: Server
let api: Awaited<ReturnType<typeof checkedClient>>

/** A tenant trading one pair of its own, without friction so that equity is easy to recompute. */
interface Desk {
  fixture: TenantFixture
  tenantId: string
  pair: string
  day: number
}

async function desk(slug: string, pair: string, limits: Record<string, unknown>): Promise<Desk> {
  const fixture = await tenantFixture(server, slug)
  const res = await api('PATCH', '/api/v1/risk/profile', {
    token: fixture.jwt,
    body: { max_open_trades: 50, max_exposure_usd: 1e6, fee_bps: 0, slippage_bps: 0, ...limits },
  })
  assert.is(res.status, 200, res.text)
  return { fixture, tenantId: res.json.tenant_id, pair, day: 0 }
}

async function close(d: Desk, price: number): Promise<void> {
  d.day++
  await importCloses(server, [[d.pair, `2025-06-${String(d.day).padStart(2, '0')}`, price]])
}

function order(d: Desk, body: Record<string, unknown>): Promise<Res> {
  return api('POST', '/api/v1/orders', { token: d.fixture.jwt, body: { pair: d.pair, type: 'MARKET', ...body } })
}

async function trips(d: Desk): Promise<any[]> {
  const all = (await api('GET', '/api/v1/risk/incidents?limit=100', { token: d.fixture.jwt })).json
  return all.filter((i: any) => i.action === 'CIRCUIT_BREAKER_TRIPPED')
}

async function paused(d: Desk): Promise<boolean> {
  return (await api('GET', '/api/v1/risk/profile', { token: d.fixture.jwt })).json.trading_paused
}

/** Equity by the oracle: capital + each trade's quantity * (exit or mark - entry) - fees - slippage. */
async function oracleEquity(d: Desk, mark: number): Promise<number> {
  const trades = (await api('GET', '/api/v1/trades?limit=100', { token: d.fixture.jwt })).json
  return trades.reduce(
    (sum: number, t: any) => sum + t.quantity * ((t.status === 'OPEN' ? mark : t.exit_price) - t.entry_price) - t.fees_usd - t.slippage_usd,
    10_000,
  )
}

function numbersOf(reason: string, pattern: RegExp): number[] {
  const match = pattern.exec(reason)
  assert.ok(match, `reason ${JSON.stringify(reason)} does not match ${pattern}`)
  return match.slice(1).map(Number)
}

async function eventsFor(d: Desk, type: string): Promise<any[]> {
  const rows = await withDb(server, (db) => db.all('SELECT data FROM events WHERE type = ? AND tenant_id = ? ORDER BY id', [type, d.tenantId]))
  return rows.map((r) => JSON.parse(r.data))
}

test.before(async () => {
  server = await startServer()
  api = await checkedClient(server)
})
test.after(async () => {
  await server.stop()
})

test('max_daily_loss_usd trips on the candle that takes the loss to its limit, warns once at 80%, and cancels what is pending', async () => {
  const d = await desk('daily', 'DLA/USDT', { max_daily_loss_usd: 500 })
  await close(d, 100)
  assert.is((await order(d, { side: 'BUY', quantity: 100 })).status, 200)
  const resting = await order(d, { side: 'BUY', type: 'LIMIT', quantity: 1, limit_price: 1 })
  await close(d, 100) // the BUY fills at 100: equity 10,000, the day's start
  const path = [99, 98, 97, 96, 95.5, 95, 94]
  const tripAt = path.findIndex((c) => 100 * (100 - c) >= 500) // the oracle's own day
  for (const [i, price] of path.entries()) {
    await close(d, price)
    const tripped = await trips(d)
    if (i < tripAt) {
      assert.is(tripped.length, 0, `no trip at close ${price}`)
      assert.is(await paused(d), false)
      continue
    }
    assert.is(tripped.length, 1, `one trip, at close ${path[tripAt]}, then none (the switch is engaged)`)
    if (i > tripAt) continue
    const incident = tripped[0]
    assert.is(incident.actor, 'circuit-breaker@localhost')
    assert.is(incident.status, 'ENGAGED')
    const equity = await oracleEquity(d, price)
    const [loss, limit, seen, dayStart] = numbersOf(incident.reason, /^daily loss ([\d.]+) USD >= ([\d.]+): equity ([\d.]+) at .+ UTC, day start ([\d.]+)/)
    assert.equal([loss, limit, seen, dayStart], [Number((10_000 - equity).toFixed(2)), 500, Number(equity.toFixed(2)), 10_000])
    assert.ok(incident.reason.includes('CANCEL_AND_PAUSE, 1 pending order canceled'), incident.reason)
    assert.is(await paused(d), true)
  }
  await settled(server)
  assert.is((await api('GET', `/api/v1/orders/${resting.json.id}`, { token: d.fixture.jwt })).json.status, 'CANCELED')
  // 80% of 500 is 400, first reached at the close of 96: one warning for the day, though 95.5 is above 80% too.
  const warnings = await eventsFor(d, 'risk.limit.warning')
  assert.is(warnings.length, 1)
  assert.is(warnings[0].breaker, 'max_daily_loss_usd')
  assert.is(Number(warnings[0].value.toFixed(6)), 400)
  const [event] = await eventsFor(d, 'risk.circuit_breaker.tripped')
  assert.is(event.breaker, 'max_daily_loss_usd')
  assert.is(event.incident.id, (await trips(d))[0].id)
  assert.is(event.incident.hash, (await trips(d))[0].hash)
  daily = d
})

let daily: Desk

test('RESUME is refused while the daily loss still holds, and accepted with reset_breakers, which re-bases the equity', async () => {
  const d = daily
  const refused = await api('POST', '/api/v1/risk/kill-switch', { token: d.fixture.jwt, body: { action: 'RESUME', pause: false } })
  assert.is(refused.status, 409)
  assert.is(refused.json.code, 'breaker_engaged')
  assert.match(refused.json.detail, /^daily loss [\d.]+ USD >= 500\.00: .*reset_breakers/)
  assert.is(await paused(d), true, 'nothing changed')
  const before = (await api('GET', '/api/v1/risk/equity', { token: d.fixture.jwt })).json
  assert.equal(
    before.breakers.map((b: any) => [b.name, b.state]),
    [['max_daily_loss_usd', 'TRIPPED']],
  )

  const resumed = await api('POST', '/api/v1/risk/kill-switch', { token: d.fixture.jwt, body: { action: 'RESUME', pause: false, reset_breakers: true } })
  assert.is(resumed.status, 200, resumed.text)
  assert.is(resumed.json.status, 'RESUMED')
  const equity = await oracleEquity(d, 94)
  const incidents = (await api('GET', '/api/v1/risk/incidents?limit=1', { token: d.fixture.jwt })).json
  assert.is(incidents[0].action, 'TRADING_RESUMED')
  assert.ok(incidents[0].reason.includes(`breakers reset: day-start and peak equity re-based to ${equity.toFixed(2)} USD`), incidents[0].reason)
  const after = (await api('GET', '/api/v1/risk/equity', { token: d.fixture.jwt })).json
  assert.is(after.day_start_equity_usd.toFixed(6), equity.toFixed(6))
  assert.is(after.peak_equity_usd.toFixed(6), equity.toFixed(6))
  assert.equal(
    after.breakers.map((b: any) => [b.name, b.state, b.value]),
    [['max_daily_loss_usd', 'OK', 0]],
  )
  assert.is(await paused(d), false)
  // The re-based day start holds: a further fall of 4 x 100 = 400 warns (80%) but does not trip.
  await close(d, 90)
  assert.is((await trips(d)).length, 1)
  assert.is(await paused(d), false)
})

test('max_drawdown_pct measures from the peak, trips with FLATTEN on the crossing candle, and closes the position there', async () => {
  const d = await desk('drawdown', 'DDA/USDT', { max_drawdown_pct: 10, breaker_action: 'FLATTEN' })
  await close(d, 100)
  assert.is((await order(d, { side: 'BUY', quantity: 100 })).status, 200)
  await close(d, 100)
  const path = [105, 110, 104, 100, 98, 97]
  let peak = 10_000
  let tripAt = -1
  for (const [i, price] of path.entries()) {
    await close(d, price)
    const equity = 10_000 + 100 * (price - 100)
    peak = Math.max(peak, equity)
    const drawdown = ((peak - equity) / peak) * 100
    const tripped = await trips(d)
    if (tripAt < 0 && drawdown < 10) {
      assert.is(tripped.length, 0, `no trip at close ${price} (drawdown ${drawdown.toFixed(2)}%)`)
      continue
    }
    if (tripAt < 0) {
      tripAt = i
      assert.is(tripped.length, 1)
      const [seenDrawdown, limit, seen, seenPeak] = numbersOf(tripped[0].reason, /^drawdown ([\d.]+)% >= ([\d.]+)%: equity ([\d.]+) at .+ UTC, peak ([\d.]+)/)
      assert.equal([seenDrawdown, limit, seen, seenPeak], [Number(drawdown.toFixed(2)), 10, Number(equity.toFixed(2)), Number(peak.toFixed(2))])
      assert.ok(tripped[0].reason.includes('FLATTEN, 0 pending orders canceled, 1 open trade closed'), tripped[0].reason)
      const trades = (await api('GET', '/api/v1/trades?limit=10', { token: d.fixture.jwt })).json
      assert.equal(
        trades.map((t: any) => [t.status, t.exit_price]),
        [['CLOSED', price]],
      )
    } else {
      assert.is(tripped.length, 1, 'flat and paused: nothing trips again')
    }
  }
  assert.is(path[tripAt], 98, 'the oracle and the path agree on the day: 10,000 -> 11,000 peak, 9,800 is 10.9% down')
  // The operator's CLI obeys the same rule: flat at 9,800 with a peak of 11,000, the drawdown still holds.
  const refused = await cli(['resume', '--tenant', 'drawdown'], { dataDir: server.dataDir })
  assert.is(refused.code, 1)
  assert.match(refused.stderr, /^error: drawdown: drawdown 10\.91% >= 10\.00%: .*reset_breakers/)
  assert.is(await paused(d), true)
  const reset = await cli(['resume', '--tenant', 'drawdown', '--reset-breakers'], { dataDir: server.dataDir })
  assert.is(reset.code, 0, reset.stderr)
  assert.is(await paused(d), false)
  const equity = (await api('GET', '/api/v1/risk/equity', { token: d.fixture.jwt })).json
  assert.equal([equity.peak_equity_usd, equity.drawdown_pct], [9_800, 0])
})

test('max_consecutive_losses counts closed losing trades in a row: a win in between starts the count again', async () => {
  const d = await desk('losses', 'CLA/USDT', { max_consecutive_losses: 3 })
  await close(d, 100)
  // Each round: BUY, fills at the next close; SELL, fills at the one after. Results: -1, +2, -1, -1, -1.
  const rounds: [number, number][] = [
    [100, 99],
    [99, 101],
    [101, 100],
    [100, 99],
    [99, 98],
  ]
  let losses = 0
  for (const [i, [entry, exit]] of rounds.entries()) {
    assert.is((await order(d, { side: 'BUY', quantity: 1 })).status, 200)
    await close(d, entry)
    assert.is((await order(d, { side: 'SELL', quantity: 1 })).status, 200)
    await close(d, exit)
    losses = exit < entry ? losses + 1 : 0
    const tripped = await trips(d)
    if (losses < 3) {
      assert.is(tripped.length, 0, `no trip after round ${i + 1} (${losses} in a row)`)
      continue
    }
    assert.is(i, 4)
    assert.is(tripped.length, 1)
    const closed = (await api('GET', '/api/v1/trades?status=CLOSED&limit=3', { token: d.fixture.jwt })).json.reverse()
    const nets = closed.map((t: any) => (t.quantity * (t.exit_price - t.entry_price) - t.fees_usd - t.slippage_usd).toFixed(2))
    assert.is(
      tripped[0].reason.split(';')[0],
      `consecutive losses 3 >= 3: trades ${closed.map((t: any) => t.id).join(', ')} closed with net PnL ${nets.join(', ')} USD`,
    )
  }
})

test('a limit set below the loss already made trips at once: the PATCH is an evaluation too', async () => {
  const d = await desk('late', 'LTA/USDT', {})
  await close(d, 100)
  assert.is((await order(d, { side: 'BUY', quantity: 10 })).status, 200)
  await close(d, 100)
  await close(d, 70) // equity 9,700: a loss of 300 today
  const res = await api('PATCH', '/api/v1/risk/profile', { token: d.fixture.jwt, body: { max_daily_loss_usd: 250 } })
  assert.is(res.status, 200)
  assert.is(res.json.trading_paused, true)
  const [trip] = await trips(d)
  assert.match(trip.reason, /^daily loss 300\.00 USD >= 250\.00: equity 9700\.00 at /)
  const refused = await order(d, { side: 'BUY', quantity: 1 })
  assert.is(refused.status, 409)
  assert.is(refused.json.code, 'trading_paused')
})

test('a change of capital moves day start and peak with it: less capital is no loss, and trips nothing', async () => {
  const d = await desk('capital', 'CPA/USDT', { max_drawdown_pct: 10, max_daily_loss_usd: 100 })
  await close(d, 100)
  assert.is((await order(d, { side: 'BUY', quantity: 10 })).status, 200)
  await close(d, 100)
  await close(d, 99) // equity 9,990: 10 below the day start
  const res = await api('PATCH', '/api/v1/risk/profile', { token: d.fixture.jwt, body: { capital_usd: 5_000 } })
  assert.is(res.status, 200)
  assert.is(res.json.trading_paused, false)
  assert.is((await trips(d)).length, 0)
  const equity = (await api('GET', '/api/v1/risk/equity', { token: d.fixture.jwt })).json
  assert.equal([equity.equity_usd, equity.day_start_equity_usd, equity.peak_equity_usd, equity.daily_pnl_usd], [4_990, 5_000, 5_000, -10])
})

test('an order that trips the runaway breaker is refused when it opens, and placed when it only reduces', async () => {
  const d = await desk('runaway', 'RWA/USDT', { max_orders_per_minute: 3 })
  await close(d, 100)
  assert.is((await order(d, { side: 'BUY', quantity: 2 })).status, 200)
  await close(d, 100) // filled: 1 order in the minute
  const resting = [
    await order(d, { side: 'BUY', type: 'LIMIT', quantity: 1, limit_price: 1 }),
    await order(d, { side: 'BUY', type: 'LIMIT', quantity: 1, limit_price: 1 }),
  ]
  for (const r of resting) assert.is(r.status, 200)
  // The fourth order in 60 s: a SELL, which a pause always lets through.
  const sell = await order(d, { side: 'SELL', quantity: 2 })
  assert.is(sell.status, 200, sell.text)
  assert.is(sell.json.status, 'PENDING')
  const [trip] = await trips(d)
  assert.match(
    trip.reason,
    /^orders per minute 4 > 3: 3 orders placed in the 60 s up to .+ UTC and one more asked; CANCEL_AND_PAUSE, 2 pending orders canceled/,
  )
  assert.is(await paused(d), true)
  await settled(server)
  for (const r of resting) assert.is((await api('GET', `/api/v1/orders/${r.json.id}`, { token: d.fixture.jwt })).json.status, 'CANCELED')
  assert.is((await api('GET', `/api/v1/orders/${sell.json.id}`, { token: d.fixture.jwt })).json.status, 'PENDING', 'written after the fence')
  await close(d, 101)
  assert.is((await api('GET', `/api/v1/orders/${sell.json.id}`, { token: d.fixture.jwt })).json.status, 'FILLED')
})

test.run()
