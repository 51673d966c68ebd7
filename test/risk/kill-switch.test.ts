// The kill switch through the real API and CLI: every action, fleet and model scope, what a pause
// lets through (reduce-only orders) and holds back (fills of opening orders), the incident and the
// events of each operation, and who may pull it.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cli, login, startServer, tenantFixture, type Res, type Server, type TenantFixture } from '../support/harness.ts'
import { checkedClient, eventsOf, importCloses, near, settled, withDb } from '../trading/market.ts'

const test = suite('risk: kill switch')
let server: Server
let api: Awaited<ReturnType<typeof checkedClient>>
let acme: TenantFixture
let zeta: TenantFixture
let admin: string // acme key: risk:admin, created by the owner
let trader: string // acme key: orders:write, trades:read, risk:read
let day = 1

async function nextCloses(closes: Record<string, number>): Promise<void> {
  day++
  const date = `2025-04-${String(day).padStart(2, '0')}`
  await importCloses(
    server,
    Object.entries(closes).map(([pair, close]) => [pair, date, close]),
  )
}

function kill(body: Record<string, unknown>, token = admin, headers: Record<string, string> = {}): Promise<Res> {
  return api('POST', '/api/v1/risk/kill-switch', { token, body, headers })
}

async function buy(pair: string, extra: Record<string, unknown> = {}, token = trader): Promise<Res> {
  return api('POST', '/api/v1/orders', { token, body: { pair, side: 'BUY', type: 'MARKET', quantity: 1, ...extra } })
}

async function orderStatus(id: string): Promise<string> {
  return (await api('GET', `/api/v1/orders/${id}`, { token: trader })).json.status
}

async function profile(token = trader): Promise<any> {
  return (await api('GET', '/api/v1/risk/profile', { token })).json
}

async function incident(id: string): Promise<any> {
  const all = (await api('GET', '/api/v1/risk/incidents', { token: trader })).json
  return all.find((i: any) => i.id === id)
}

test.before(async () => {
  server = await startServer()
  api = await checkedClient(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  zeta = await tenantFixture(server, 'zeta', 'EXECUTE')
  admin = await acme.key(['risk:admin'])
  trader = await acme.key(['orders:write', 'trades:read', 'risk:read'])
  const ws = await api('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: ['trend-follower', 'mean-reversion'] } })
  assert.is(ws.status, 200)
  await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 50, max_exposure_usd: 1e6 } })
  await importCloses(server, [
    ['BTC/USDT', '2025-04-01', 100],
    ['ETH/USDT', '2025-04-01', 50],
    ['ADA/USDT', '2025-04-01', 1],
  ])
})
test.after(async () => {
  await server.stop()
})

test("CANCEL_AND_PAUSE: the description's answer plus incident_id, pending orders canceled, incident and events recorded", async () => {
  const opened = await buy('ETH/USDT')
  await nextCloses({ 'ETH/USDT': 50 })
  assert.is(await orderStatus(opened.json.id), 'FILLED')
  const pending = [await buy('BTC/USDT'), await buy('BTC/USDT', { quantity: 2 }), await buy('ETH/USDT', { type: 'LIMIT', limit_price: 10 })]
  const theirs = await buy('BTC/USDT', {}, await zeta.key(['orders:write']))
  assert.is(theirs.status, 200)

  const res = await kill({ action: 'CANCEL_AND_PAUSE', pause: true, reason: 'exchange outage' })
  assert.is(res.status, 200)
  assert.equal(Object.keys(res.json).sort(), ['canceled_orders', 'incident_id', 'model_id', 'status', 'success', 'trading_paused'])
  assert.equal(
    { ...res.json, incident_id: 'x' },
    { status: 'TRIGGERED', trading_paused: true, model_id: 'all', canceled_orders: 3, success: true, incident_id: 'x' },
  )
  for (const p of pending) assert.is(await orderStatus(p.json.id), 'CANCELED')
  assert.is((await api('GET', `/api/v1/orders/${theirs.json.id}`, { token: zeta.jwt })).json.status, 'PENDING', 'another tenant is untouched')
  assert.is((await profile()).trading_paused, true)

  const inc = await incident(res.json.incident_id)
  assert.is(inc.action, 'EMERGENCY_KILL_SWITCH_ENGAGED')
  assert.is(inc.status, 'ENGAGED')
  assert.is(inc.model_id, 'all')
  assert.is(inc.actor, acme.ownerEmail, 'an API key acts for the user who created it')
  assert.is(inc.reason, 'CANCEL_AND_PAUSE, 3 pending orders canceled: exchange outage')
  await settled(server)
  const engaged = (await eventsOf(server, 'risk.kill_switch.engaged')).find((e) => e.incident_id === res.json.incident_id)
  assert.is(engaged.action, 'CANCEL_AND_PAUSE')
  assert.is(engaged.canceled_orders, 3)
  const canceledEvents = (await eventsOf(server, 'order.canceled')).filter((e) => pending.some((p) => p.json.id === e.id))
  assert.is(canceledEvents.length, 3)
  const marked = await withDb(server, (db) => db.get('SELECT count(*) AS n FROM orders WHERE canceled_by = ?', [res.json.incident_id]))
  assert.is(marked.n, 3)
})

test('while paused: orders that open are 409 trading_paused, a reduce-only SELL is accepted and fills', async () => {
  const refused = await buy('BTC/USDT')
  assert.is(refused.status, 409)
  assert.is(refused.json.code, 'trading_paused')
  // The pause is checked before the price (SPEC 5's order): a pair without prices is still 409.
  const unpriced = await buy('NOPRICE/USDT')
  assert.is(unpriced.status, 409, unpriced.text)
  assert.is(unpriced.json.code, 'trading_paused')
  const sell = await api('POST', '/api/v1/orders', { token: trader, body: { pair: 'ETH/USDT', side: 'SELL', type: 'MARKET', quantity: 1 } })
  assert.is(sell.status, 200)
  assert.is(sell.json.reduce_only, true)
  await nextCloses({ 'ETH/USDT': 55 })
  assert.is(await orderStatus(sell.json.id), 'FILLED')
})

test('engaging an engaged switch is no error: another incident; RESUME answers RESUMED and reopens trading', async () => {
  const again = await kill({ action: 'CANCEL_AND_PAUSE', pause: true })
  assert.is(again.status, 200)
  assert.is(again.json.canceled_orders, 0)
  assert.is((await incident(again.json.incident_id)).reason, 'CANCEL_AND_PAUSE, 0 pending orders canceled')

  const resumed = await kill({ action: 'RESUME', pause: false, reason: 'venue back' })
  assert.equal(
    { ...resumed.json, incident_id: 'x' },
    { status: 'RESUMED', trading_paused: false, model_id: 'all', canceled_orders: 0, success: true, incident_id: 'x' },
  )
  const inc = await incident(resumed.json.incident_id)
  assert.is(inc.action, 'TRADING_RESUMED')
  assert.is(inc.status, 'RESOLVED')
  assert.ok((await eventsOf(server, 'risk.trading.resumed')).some((e) => e.incident_id === resumed.json.incident_id))
  assert.is((await profile()).trading_paused, false)
  assert.is((await buy('BTC/USDT')).status, 200)
})

test('PAUSE keeps pending orders but halts their fills until RESUME; pause may be left out', async () => {
  const pending = (await api('GET', '/api/v1/orders?status=PENDING', { token: trader })).json
  assert.is(pending.length, 1)
  const paused = await kill({ action: 'PAUSE', pause: true })
  assert.is(paused.json.canceled_orders, 0)
  assert.is(paused.json.trading_paused, true)
  await nextCloses({ 'BTC/USDT': 101 })
  assert.is(await orderStatus(pending[0].id), 'PENDING', 'no execution while paused')
  await kill({ action: 'RESUME', pause: false })
  await nextCloses({ 'BTC/USDT': 102 })
  assert.is(await orderStatus(pending[0].id), 'FILLED')
})

test('one model: only its orders canceled and only its orders refused; a fleet RESUME lifts model pauses', async () => {
  const trend = await buy('BTC/USDT', { model_id: 'trend-follower' })
  const reversion = await buy('ADA/USDT', { model_id: 'mean-reversion', quantity: 10 })
  const manual = await buy('ETH/USDT')
  const res = await kill({ action: 'CANCEL_AND_PAUSE', pause: true, model_id: 'trend-follower' })
  assert.equal(
    { ...res.json, incident_id: 'x' },
    { status: 'TRIGGERED', trading_paused: true, model_id: 'trend-follower', canceled_orders: 1, success: true, incident_id: 'x' },
  )
  assert.is((await incident(res.json.incident_id)).model_id, 'trend-follower')
  assert.is(await orderStatus(trend.json.id), 'CANCELED')
  assert.is(await orderStatus(reversion.json.id), 'PENDING')
  assert.is(await orderStatus(manual.json.id), 'PENDING')
  const p = await profile()
  assert.is(p.trading_paused, false)
  assert.equal(p.paused_model_ids, ['trend-follower'])

  assert.is((await buy('BTC/USDT', { model_id: 'trend-follower' })).json.code, 'trading_paused')
  assert.is((await buy('BTC/USDT', { model_id: 'mean-reversion' })).status, 200)
  assert.is((await buy('BTC/USDT')).status, 200)

  const one = await kill({ action: 'RESUME', pause: false, model_id: 'trend-follower' })
  assert.is(one.json.model_id, 'trend-follower')
  assert.is(one.json.trading_paused, false)
  assert.equal((await profile()).paused_model_ids, [])
  await kill({ action: 'PAUSE', pause: true, model_id: 'mean-reversion' })
  await kill({ action: 'PAUSE', pause: true, model_id: 'trend-follower' })
  assert.equal((await profile()).paused_model_ids, ['mean-reversion', 'trend-follower'])
  const fleet = await kill({ action: 'RESUME', pause: false, model_id: 'all' })
  assert.is(fleet.json.model_id, 'all')
  assert.equal((await profile()).paused_model_ids, [])
})

test('CANCEL_ORDERS cancels and leaves the pause state as it is', async () => {
  const pendingBefore = (await api('GET', '/api/v1/orders?status=PENDING', { token: trader })).json.length
  assert.ok(pendingBefore > 0)
  const open = await kill({ action: 'CANCEL_ORDERS', pause: false })
  assert.equal(
    { ...open.json, incident_id: 'x' },
    { status: 'TRIGGERED', trading_paused: false, model_id: 'all', canceled_orders: pendingBefore, success: true, incident_id: 'x' },
  )
  const inc = await incident(open.json.incident_id)
  assert.is(inc.action, 'PENDING_ORDERS_CANCELED')
  assert.is(inc.status, 'RECORDED')
  assert.equal((await api('GET', '/api/v1/orders?status=PENDING', { token: trader })).json, [])

  await kill({ action: 'PAUSE', pause: true })
  const whilePaused = await kill({ action: 'CANCEL_ORDERS', pause: false })
  assert.is(whilePaused.json.trading_paused, true)
  await kill({ action: 'RESUME', pause: false })
})

test('a pause that contradicts the action, an unknown action or model: 400, nothing recorded', async () => {
  const before = (await api('GET', '/api/v1/risk/incidents/verify', { token: trader })).json.count
  const cases: [Record<string, unknown>, string][] = [
    [{ action: 'CANCEL_AND_PAUSE', pause: false }, 'pause'],
    [{ action: 'PAUSE', pause: false }, 'pause'],
    [{ action: 'FLATTEN', pause: false }, 'pause'],
    [{ action: 'CANCEL_ORDERS', pause: true }, 'pause'],
    [{ action: 'RESUME', pause: true }, 'pause'],
    [{ action: 'SELF_DESTRUCT', pause: true }, 'action'],
    [{ pause: true }, 'action'],
    [{ action: 'PAUSE', pause: true, model_id: 'no-such-model' }, 'model_id'],
    [{ action: 'PAUSE', pause: 'yes' }, 'pause'],
    [{ action: 'PAUSE' }, 'pause'], // the body names both, as the description does
  ]
  for (const [body, field] of cases) {
    const res = await kill(body)
    assert.is(res.status, 400, JSON.stringify(body))
    assert.is(res.json.code, 'validation_failed')
    assert.ok(
      res.json.errors.some((e: any) => e.field === field),
      res.text,
    )
  }
  assert.is((await kill({ action: 'PAUSE', pause: true, scope: 'all' })).json.code, 'unknown_field')
  assert.is((await api('GET', '/api/v1/risk/incidents/verify', { token: trader })).json.count, before)
  assert.is((await profile()).trading_paused, false)
})

test('FLATTEN cancels, pauses and closes every open trade at the last price with friction', async () => {
  await buy('ADA/USDT', { quantity: 100 })
  await nextCloses({ 'ADA/USDT': 1.2, 'BTC/USDT': 103 })
  const pending = await buy('BTC/USDT', { type: 'LIMIT', limit_price: 1 })
  const open = (await api('GET', '/api/v1/trades?status=OPEN', { token: trader })).json
  assert.ok(open.length >= 2)
  const res = await kill({ action: 'FLATTEN', pause: true, reason: 'end of test' })
  assert.equal(
    { ...res.json, incident_id: 'x' },
    { status: 'TRIGGERED', trading_paused: true, model_id: 'all', canceled_orders: 1, success: true, incident_id: 'x' },
  )
  assert.is(await orderStatus(pending.json.id), 'CANCELED')
  assert.is((await incident(res.json.incident_id)).reason, `FLATTEN, 1 pending order canceled, ${open.length} open trades closed: end of test`)
  assert.equal((await api('GET', '/api/v1/trades?status=OPEN', { token: trader })).json, [])
  const closes: Record<string, number> = { 'ADA/USDT': 1.2, 'BTC/USDT': 103, 'ETH/USDT': 55 }
  const trades = (await api('GET', '/api/v1/trades?status=CLOSED', { token: trader })).json
  for (const before of open) {
    const t = trades.find((x: any) => x.id === before.id)
    assert.is(t.exit_price, closes[t.pair])
    assert.is(t.exit_reason, 'flatten')
    near(t.fees_usd, before.fees_usd + t.quantity * closes[t.pair] * (1 - 5e-4) * 1e-3, `${t.pair} fees`)
    near(t.pnl_pct, ((t.quantity * (t.exit_price - t.entry_price) - t.fees_usd - t.slippage_usd) / (t.quantity * t.entry_price)) * 100)
  }
  const sells = (await api('GET', '/api/v1/orders?status=FILLED', { token: trader })).json.filter(
    (o: any) => o.side === 'SELL' && open.some((t: any) => t.id === o.trade_id),
  )
  assert.is(sells.length, open.length, 'each close is a filled reduce-only SELL')
  assert.is((await eventsOf(server, 'risk.kill_switch.engaged')).find((e) => e.incident_id === res.json.incident_id).closed_trades, open.length)
  await kill({ action: 'RESUME', pause: false })
})

test('Idempotency-Key: a retried kill switch is one operation with one incident', async () => {
  const first = await kill({ action: 'PAUSE', pause: true, reason: 'retry' }, admin, { 'idempotency-key': 'ks-1' })
  const second = await kill({ action: 'PAUSE', pause: true, reason: 'retry' }, admin, { 'idempotency-key': 'ks-1' })
  assert.is(second.json.incident_id, first.json.incident_id)
  assert.is(second.headers.get('idempotent-replayed'), 'true')
  await kill({ action: 'RESUME', pause: false })
})

test('security: risk:admin or an owner/admin session; never a viewer; a tenant switches only itself', async () => {
  for (const scopes of [['risk:read'], ['orders:write'], ['signals:read', 'trades:read']]) {
    const res = await kill({ action: 'PAUSE', pause: true }, await acme.key(scopes))
    assert.is(res.status, 403)
    assert.is(res.json.code, 'insufficient_scope')
  }
  await cli(['user', 'create', 'viewer@acme.test', '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'viewer-password-123',
  })
  const viewer = await login(server, 'viewer@acme.test', 'viewer-password-123')
  assert.is((await kill({ action: 'PAUSE', pause: true }, viewer)).json.code, 'forbidden_role')
  assert.is((await kill({ action: 'PAUSE', pause: true }, '')).status, 401)
  assert.is((await kill({ action: 'PAUSE', pause: true }, `sk_live_${'A'.repeat(38)}`)).status, 401)
  assert.is((await profile()).trading_paused, false)

  const theirs = await kill({ action: 'PAUSE', pause: true }, zeta.jwt)
  assert.is(theirs.status, 200)
  assert.is(await incident(theirs.json.incident_id), undefined, "zeta's incident is not in acme's trail")
  assert.is((await profile()).trading_paused, false)
  assert.is((await profile(zeta.jwt)).trading_paused, true)
  await kill({ action: 'RESUME', pause: false }, zeta.jwt)
})

test('CLI: kill-switch and resume for one tenant or --all, a line per tenant, the actor recorded', async () => {
  const pending = await buy('BTC/USDT', { type: 'LIMIT', limit_price: 1 })
  const one = await cli(['kill-switch', '--tenant', 'acme', '--actor', 'oncall@example.com', '--reason', 'drill'], { dataDir: server.dataDir })
  assert.is(one.code, 0, one.stderr)
  const match = /^acme: TRIGGERED trading_paused=true model_id=all canceled_orders=1 incident_id=(inc_\w+)\n$/.exec(one.stdout)
  assert.ok(match, one.stdout)
  assert.is(await orderStatus(pending.json.id), 'CANCELED')
  const inc = await incident(match![1])
  assert.is(inc.actor, 'oncall@example.com')
  assert.is(inc.reason, 'CANCEL_AND_PAUSE, 1 pending order canceled: drill')
  assert.is((await profile()).trading_paused, true, 'the running server sees the CLI change')

  const all = await cli(['resume', '--all'], { dataDir: server.dataDir })
  assert.is(all.code, 0, all.stderr)
  const lines = all.stdout.trim().split('\n')
  assert.equal(lines.map((l) => l.split(':')[0]).sort(), ['acme', 'zeta'])
  assert.ok(
    lines.every((l) => / RESUMED trading_paused=false model_id=all canceled_orders=0 incident_id=inc_/.test(l)),
    all.stdout,
  )
  const resumed = (await api('GET', '/api/v1/risk/incidents', { token: trader })).json[0]
  assert.is(resumed.action, 'TRADING_RESUMED')
  assert.is(resumed.actor, 'operator@localhost')

  const model = await cli(['kill-switch', '--all', '--model', 'trend-follower'], { dataDir: server.dataDir })
  assert.is(model.code, 0, model.stderr)
  assert.match(model.stdout, /acme: TRIGGERED trading_paused=true model_id=trend-follower/)
  assert.equal((await profile()).paused_model_ids, ['trend-follower'])
  assert.is((await cli(['resume', '--tenant', 'acme', '--model', 'trend-follower'], { dataDir: server.dataDir })).code, 0)
  assert.equal((await profile()).paused_model_ids, [])

  for (const args of [
    ['kill-switch'],
    ['kill-switch', '--tenant', 'acme', '--all'],
    ['resume', '--tenant'],
    ['kill-switch', '--all', '--actor', 'not-an-email'],
    ['kill-switch', '--all', '--bogus'],
  ]) {
    const res = await cli(args, { dataDir: server.dataDir })
    assert.is(res.code, 2, `${args.join(' ')}: ${res.stderr}`)
    assert.match(res.stderr, /usage: bulwark (kill-switch|resume)/)
  }
  assert.is((await cli(['kill-switch', '--tenant', 'nobody'], { dataDir: server.dataDir })).code, 1)
  assert.is((await cli(['kill-switch', '--all', '--model', 'no-such-model'], { dataDir: server.dataDir })).code, 1)
  assert.is((await profile()).trading_paused, false, 'refused commands changed nothing')

  const verify = await cli(['incidents', 'verify'], { dataDir: server.dataDir })
  assert.is(verify.code, 0, verify.stdout + verify.stderr)
  assert.match(verify.stdout, /^acme: intact, \d+ incidents, head [0-9a-f]{64}$/m)
})

test.run()
