// Orders through the real API and fills through the real `prices import`: pre-trade checks, the paper
// broker's prices and friction, partial closes, cancellation, and who may do what.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cli, login, startServer, tempDir, tenantFixture, type Res, type Server, type TenantFixture } from '../support/harness.ts'
import { checkedClient, eventsOf, importCloses, near } from './market.ts'

const test = suite('trading: orders and the paper broker')
let server: Server
let api: Awaited<ReturnType<typeof checkedClient>>
let acme: TenantFixture
let zeta: TenantFixture
let orders: string // acme key with orders:write
let reader: string // acme key with trades:read

const FEE = 10 / 10_000
const SLIP = 5 / 10_000

function order(body: Record<string, unknown>, token = orders, headers: Record<string, string> = {}): Promise<Res> {
  return api('POST', '/api/v1/orders', { token, body, headers })
}

test.before(async () => {
  server = await startServer()
  api = await checkedClient(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  zeta = await tenantFixture(server, 'zeta', 'EXECUTE')
  orders = await acme.key(['orders:write', 'trades:read'])
  reader = await acme.key(['trades:read'])
  await importCloses(server, [
    ['BTC/USDT', '2025-03-01', 100],
    ['ETH/USDT', '2025-03-01', 50],
    ['SOL/USDT', '2025-03-01', 20],
  ])
})
test.after(async () => {
  await server.stop()
})

test('prices import: bad rows are named by line and nothing of the file is applied', async () => {
  const file = join(tempDir('csv'), 'bad.csv')
  writeFileSync(
    file,
    [
      'pair,date,open,high,low,close,volume',
      'NEW/USDT,2025-03-01,10,11,9,10,5',
      'NEW/USDT,2025-03-02,10,11,9,-10,5',
      'NEW/USDT,2025-03-03,10,11,9,10,5',
      'NEW/USDT,2025-02-30,10,11,9,10,5',
    ].join('\n'),
  )
  const res = await cli(['prices', 'import', file], { dataDir: server.dataDir })
  assert.is(res.code, 1)
  assert.match(res.stderr, /line 3:/)
  assert.match(res.stderr, /line 5:/)
  assert.not.match(res.stderr, /line [24]:/)
  const refused = await order({ pair: 'NEW/USDT', side: 'BUY', type: 'MARKET', quantity: 1 })
  assert.is(refused.status, 422)
  assert.is(refused.json.code, 'no_price', 'line 2 was good, yet nothing was imported')
})

test('a MARKET BUY is PENDING, then fills at the next close with slippage and fees, opening a trade', async () => {
  const placed = await order({ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 2 })
  assert.is(placed.status, 200)
  assert.equal(
    { ...placed.json, id: 'x', created_at: 'x', client_order_id: 'x' },
    {
      id: 'x',
      pair: 'BTC/USDT',
      side: 'BUY',
      type: 'MARKET',
      quantity: 2,
      notional_usd: null,
      limit_price: null,
      model_id: null,
      status: 'PENDING',
      reduce_only: false,
      created_at: 'x',
      filled_at: null,
      canceled_at: null,
      fill_price: null,
      fees_usd: null,
      slippage_usd: null,
      trade_id: null,
      mode: 'PAPER',
      client_order_id: 'x',
      filled_quantity: 0,
      reject_reason: null,
      reference_price: 100,
      source: 'api',
      gateway_key_id: null,
      alert_hook_id: null,
      bot_client_order_id: null,
      stop_price: null,
      stop_trigger: null,
    },
  )
  assert.match(placed.json.id, /^ord_[0-9A-Z]{26}$/)
  assert.is(placed.json.client_order_id, placed.json.id)

  // The candle the order was priced against, imported again (even revised), is not a next price.
  await importCloses(server, [['BTC/USDT', '2025-03-01', 100]])
  await importCloses(server, [['BTC/USDT', '2025-03-01', 101]])
  assert.is((await api('GET', `/api/v1/orders/${placed.json.id}`, { token: reader })).json.status, 'PENDING')

  await importCloses(server, [['BTC/USDT', '2025-03-02', 110]])
  const filled = (await api('GET', `/api/v1/orders/${placed.json.id}`, { token: reader })).json
  assert.is(filled.status, 'FILLED')
  near(filled.fill_price, 110 * (1 + SLIP), 'fill price')
  near(filled.fees_usd, 2 * 110 * (1 + SLIP) * FEE, 'fees')
  near(filled.slippage_usd, 2 * 110 * SLIP, 'slippage')
  assert.match(filled.trade_id, /^trd_/)

  const trades = (await api('GET', '/api/v1/trades', { token: reader })).json
  const trade = trades.find((t: any) => t.id === filled.trade_id)
  assert.is(trade.status, 'OPEN')
  assert.is(trade.mode, 'PAPER')
  assert.is(trade.direction, 'LONG')
  assert.is(trade.entry_price, 110, 'trades keep the market price; friction is in fees_usd and slippage_usd')
  assert.is(trade.quantity, 2)
  near(trade.fees_usd, filled.fees_usd)
  near(trade.slippage_usd, filled.slippage_usd)
  assert.is(trade.exit_price, null)
  // Open: marked to the last close, unrealized, net of the friction paid so far.
  assert.is(trade.model, 'Manual', 'an order without model_id opens a manual trade')
  assert.is(trade.mark_price, 110)
  assert.is(trade.gross_pnl_pct, 0)
  near(trade.pnl_pct, (-(trade.fees_usd + trade.slippage_usd) / (2 * 110)) * 100, 'unrealized pnl at the fill')

  assert.ok((await eventsOf(server, 'order.created')).some((e) => e.id === placed.json.id))
  assert.ok((await eventsOf(server, 'order.filled')).some((e) => e.id === placed.json.id && e.status === 'FILLED'))
  assert.ok((await eventsOf(server, 'trade.opened')).some((e) => e.id === filled.trade_id))
})

test('a SELL is reduce-only: a partial one splits the trade, pnl is recomputable from the trade alone', async () => {
  const open = (await api('GET', '/api/v1/trades?status=OPEN&pair=BTC/USDT', { token: reader })).json[0]
  const sell = await order({ pair: 'BTC/USDT', side: 'SELL', type: 'MARKET', quantity: 0.5 })
  assert.is(sell.status, 200)
  assert.is(sell.json.reduce_only, true)
  await importCloses(server, [['BTC/USDT', '2025-03-03', 121]])
  const filled = (await api('GET', `/api/v1/orders/${sell.json.id}`, { token: reader })).json
  assert.is(filled.status, 'FILLED')
  near(filled.fill_price, 121 * (1 - SLIP))

  const trades = (await api('GET', '/api/v1/trades?pair=BTC/USDT', { token: reader })).json
  const rest = trades.find((t: any) => t.id === open.id)
  const part = trades.find((t: any) => t.id === filled.trade_id)
  assert.is(rest.status, 'OPEN')
  near(rest.quantity, 1.5)
  assert.is(rest.mark_price, 121, 'an open trade is marked to the newest close')
  near(rest.gross_pnl_pct, 10)
  near(rest.pnl_pct, ((1.5 * (121 - 110) - rest.fees_usd - rest.slippage_usd) / (1.5 * 110)) * 100, 'unrealized, net')
  near(rest.fees_usd, open.fees_usd * 0.75, 'the open rest keeps its share of the entry fee')
  assert.is(part.status, 'CLOSED')
  assert.is(part.exit_reason, 'manual', 'an order by hand')
  assert.is(rest.exit_reason, null)
  assert.is(part.opened_at, open.opened_at)
  assert.is(part.quantity, 0.5)
  assert.is(part.exit_price, 121)
  near(part.gross_pnl_pct, 10, 'gross: 110 -> 121')
  near(part.fees_usd, open.fees_usd * 0.25 + 0.5 * 121 * (1 - SLIP) * FEE)
  near(part.slippage_usd, open.slippage_usd * 0.25 + 0.5 * 121 * SLIP)
  near(part.pnl_pct, ((0.5 * (121 - 110) - part.fees_usd - part.slippage_usd) / (0.5 * 110)) * 100, 'net')
  assert.ok(part.pnl_pct < part.gross_pnl_pct)
  assert.ok((await eventsOf(server, 'trade.closed')).some((e) => e.id === part.id))

  // The rest, sold by notional: capped at what is open.
  const all = await order({ pair: 'BTC/USDT', side: 'SELL', type: 'MARKET', notional_usd: 1e6 })
  assert.is(all.status, 200)
  near(all.json.quantity, 1.5)
  await importCloses(server, [['BTC/USDT', '2025-03-04', 99]])
  const closed = (await api('GET', '/api/v1/trades?pair=BTC/USDT&status=OPEN', { token: reader })).json
  assert.equal(closed, [])
  const whole = (await api('GET', '/api/v1/trades?pair=BTC/USDT', { token: reader })).json.find((t: any) => t.id === open.id)
  assert.is(whole.status, 'CLOSED')
  near(whole.gross_pnl_pct, (99 / 110 - 1) * 100)
})

test('a BUY sized in USD gets its quantity at the fill', async () => {
  const placed = await order({ pair: 'ETH/USDT', side: 'BUY', type: 'MARKET', notional_usd: 500 })
  assert.is(placed.json.quantity, null)
  assert.is(placed.json.notional_usd, 500)
  await importCloses(server, [['ETH/USDT', '2025-03-02', 40]])
  const filled = (await api('GET', `/api/v1/orders/${placed.json.id}`, { token: reader })).json
  near(filled.quantity, 500 / (40 * (1 + SLIP)))
  near(filled.quantity * filled.fill_price, 500, 'spends the notional')
})

test('a LIMIT BUY waits until a close crosses its limit and never pays more than the limit', async () => {
  const placed = await order({ pair: 'SOL/USDT', side: 'BUY', type: 'LIMIT', quantity: 3, limit_price: 18 })
  assert.is(placed.json.limit_price, 18)
  await importCloses(server, [['SOL/USDT', '2025-03-02', 19]])
  assert.is((await api('GET', `/api/v1/orders/${placed.json.id}`, { token: reader })).json.status, 'PENDING')
  await importCloses(server, [['SOL/USDT', '2025-03-03', 17.995]])
  const filled = (await api('GET', `/api/v1/orders/${placed.json.id}`, { token: reader })).json
  assert.is(filled.status, 'FILLED')
  assert.is(filled.fill_price, 18, 'slippage would have made it 18.004, the limit caps it')
})

test('bad orders are 400 with the field named; unknown prices 422 no_price', async () => {
  const cases: [Record<string, unknown>, string, string][] = [
    [{ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 1, notional_usd: 5 }, 'validation_failed', 'notional_usd'],
    [{ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET' }, 'validation_failed', 'quantity'],
    [{ pair: 'BTC/USDT', side: 'BUY', type: 'LIMIT', quantity: 1 }, 'validation_failed', 'limit_price'],
    [{ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 1, limit_price: 3 }, 'validation_failed', 'limit_price'],
    [{ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: -1 }, 'validation_failed', 'quantity'],
    [{ pair: 'btc-usdt', side: 'BUY', type: 'MARKET', quantity: 1 }, 'validation_failed', 'pair'],
    [{ pair: 'BTC/USDT', side: 'HOLD', type: 'MARKET', quantity: 1 }, 'validation_failed', 'side'],
    [{ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 1, model_id: 'no-such-model' }, 'validation_failed', 'model_id'],
    [{ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 1, model_id: 'trend-follower' }, 'validation_failed', 'model_id'],
    [{ pair: 'BTC/USDT', side: 'SELL', type: 'MARKET', quantity: 1 }, 'validation_failed', 'side'],
    [{ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 1, leverage: 10 }, 'unknown_field', 'leverage'],
  ]
  for (const [body, code, field] of cases) {
    const res = await order(body)
    assert.is(res.status, 400, JSON.stringify(body))
    assert.is(res.json.code, code, JSON.stringify(body))
    assert.ok(
      res.json.errors.some((e: any) => e.field === field),
      `${JSON.stringify(body)}: ${res.text}`,
    )
  }
  const sellTooMuch = await order({ pair: 'ETH/USDT', side: 'SELL', type: 'MARKET', quantity: 1000 })
  assert.is(sellTooMuch.status, 400)
  assert.is(sellTooMuch.json.errors[0].field, 'quantity')
  const noPrice = await order({ pair: 'ZZZ/USDT', side: 'BUY', type: 'MARKET', quantity: 1 })
  assert.is(noPrice.status, 422)
  assert.is(noPrice.json.code, 'no_price')
})

test('orders need the EXECUTE plan', async () => {
  const small = await tenantFixture(server, 'small', 'SIGNAL')
  const res = await order({ pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 1 }, small.jwt)
  assert.is(res.status, 403)
  assert.is(res.json.code, 'plan_forbids')
})

test('max_open_trades and max_exposure_usd: 422 risk_limit_exceeded, and the breach is in the trail even with Idempotency-Key', async () => {
  const made = await cli(['tenant', 'create', 'tight', '--plan', 'EXECUTE', '--max-open-trades', '2', '--max-exposure-usd', '1000'], {
    dataDir: server.dataDir,
  })
  assert.is(made.code, 0, made.stderr)
  await cli(['user', 'create', 'owner@tight.test', '--tenant', 'tight', '--role', 'owner', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'tight-password-123',
  })
  const jwt = await login(server, 'owner@tight.test', 'tight-password-123')
  const buy = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    order({ pair: 'ETH/USDT', side: 'BUY', type: 'MARKET', ...body }, jwt, headers)

  const first = await buy({ quantity: 5 }) // 5 x 40 = 200 USD at the last close
  assert.is(first.status, 200)
  assert.is((await buy({ notional_usd: 300 })).status, 200)
  const third = await buy({ quantity: 1 })
  assert.is(third.status, 422)
  assert.is(third.json.code, 'risk_limit_exceeded')
  assert.match(third.json.detail, /max_open_trades 2/)

  // A canceled order frees its slot; exposure then counts the open book at the last price.
  assert.is((await api('DELETE', `/api/v1/orders/${first.json.id}`, { token: jwt })).status, 200)
  const tooBig = await buy({ notional_usd: 701 }, { 'idempotency-key': 'too-big-1' })
  assert.is(tooBig.status, 422)
  assert.match(tooBig.json.detail, /max_exposure_usd 1000/)
  // Retried with its key, the refusal is replayed: the breach is recorded once.
  const again = await buy({ notional_usd: 701 }, { 'idempotency-key': 'too-big-1' })
  assert.is(again.status, 422)
  assert.is(again.headers.get('idempotent-replayed'), 'true')
  assert.is(again.headers.get('content-type'), 'application/problem+json')
  assert.equal({ code: again.json.code, detail: again.json.detail }, { code: tooBig.json.code, detail: tooBig.json.detail })
  assert.is.not(again.json.request_id, tooBig.json.request_id)
  assert.is((await buy({ notional_usd: 700 })).status, 200, 'exactly at the limit is allowed')

  const incidents = (await api('GET', '/api/v1/risk/incidents', { token: jwt })).json
  const breaches = incidents.filter((i: any) => i.action === 'RISK_LIMIT_BREACHED')
  assert.is(breaches.length, 2)
  for (const b of breaches) {
    assert.is(b.status, 'RECORDED')
    assert.is(b.actor, 'owner@tight.test')
    assert.match(b.reason, /order refused/)
  }
  const events = (await eventsOf(server, 'risk.limit.breached')).filter((e) => breaches.some((b: any) => b.id === e.incident_id))
  assert.equal(events.map((e) => e.limit).sort(), ['max_exposure_usd', 'max_open_trades'])
  assert.is((await api('GET', '/api/v1/risk/incidents/verify', { token: jwt })).json.valid, true)
})

test('DELETE cancels a pending order once; a filled one cannot be canceled', async () => {
  const placed = await order({ pair: 'ETH/USDT', side: 'BUY', type: 'LIMIT', quantity: 1, limit_price: 1 })
  const canceled = await api('DELETE', `/api/v1/orders/${placed.json.id}`, { token: orders })
  assert.is(canceled.status, 200)
  assert.is(canceled.json.status, 'CANCELED')
  assert.ok(canceled.json.canceled_at)
  const again = await api('DELETE', `/api/v1/orders/${placed.json.id}`, { token: orders })
  assert.is(again.status, 200)
  assert.equal(again.json, canceled.json)
  assert.is((await eventsOf(server, 'order.canceled')).filter((e) => e.id === placed.json.id).length, 1)

  const filled = (await api('GET', '/api/v1/orders?status=FILLED', { token: reader })).json[0]
  const refused = await api('DELETE', `/api/v1/orders/${filled.id}`, { token: orders })
  assert.is(refused.status, 400)
  assert.match(refused.json.detail, /FILLED/)
})

test('Idempotency-Key: a retried order is placed once', async () => {
  const body = { pair: 'ETH/USDT', side: 'BUY', type: 'LIMIT', quantity: 1, limit_price: 2 }
  const first = await order(body, orders, { 'idempotency-key': 'ord-retry-1' })
  const second = await order(body, orders, { 'idempotency-key': 'ord-retry-1' })
  assert.is(second.status, 200)
  assert.is(second.json.id, first.json.id)
  assert.is(second.headers.get('idempotent-replayed'), 'true')
  assert.is((await eventsOf(server, 'order.created')).filter((e) => e.id === first.json.id).length, 1)
})

test('GET /api/v1/orders: newest first, filters, cursor pages', async () => {
  const all = (await api('GET', '/api/v1/orders', { token: reader })).json
  assert.ok(all.length >= 7)
  const ids = all.map((o: any) => o.id)
  assert.equal(ids, [...ids].sort().reverse())
  const pending = (await api('GET', '/api/v1/orders?status=PENDING&pair=ETH/USDT', { token: reader })).json
  assert.ok(pending.length >= 1 && pending.every((o: any) => o.status === 'PENDING' && o.pair === 'ETH/USDT'))
  const seen: string[] = []
  let path: string | null = '/api/v1/orders?limit=3'
  while (path) {
    const res = await api('GET', path, { token: reader })
    seen.push(...res.json.map((o: any) => o.id))
    const link = res.headers.get('link')
    path = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : null
  }
  assert.equal(seen, ids)
})

test('security: other tenants see 404, scopes and roles are enforced, revoked keys are 401', async () => {
  const mine = (await api('GET', '/api/v1/orders', { token: reader })).json[0]
  const theirs = await zeta.key(['orders:write', 'trades:read'])
  assert.is((await api('GET', `/api/v1/orders/${mine.id}`, { token: theirs })).status, 404)
  assert.is((await api('DELETE', `/api/v1/orders/${mine.id}`, { token: theirs })).status, 404)
  assert.equal((await api('GET', '/api/v1/orders', { token: theirs })).json, [])

  const readOnly = await api('POST', '/api/v1/orders', { token: reader, body: { pair: 'ETH/USDT', side: 'BUY', type: 'MARKET', quantity: 1 } })
  assert.is(readOnly.status, 403)
  assert.is(readOnly.json.code, 'insufficient_scope')
  const writeOnly = await acme.key(['orders:write'])
  assert.is((await api('GET', '/api/v1/orders', { token: writeOnly })).json.code, 'insufficient_scope')
  assert.is((await api('DELETE', `/api/v1/orders/${mine.id}`, { token: reader })).json.code, 'insufficient_scope')

  await cli(['user', 'create', 'viewer@acme.test', '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'viewer-password-123',
  })
  const viewer = await login(server, 'viewer@acme.test', 'viewer-password-123')
  assert.is((await api('GET', '/api/v1/orders', { token: viewer })).status, 200)
  const denied = await api('POST', '/api/v1/orders', { token: viewer, body: { pair: 'ETH/USDT', side: 'BUY', type: 'MARKET', quantity: 1 } })
  assert.is(denied.status, 403)
  assert.is(denied.json.code, 'forbidden_role')
  assert.is((await api('DELETE', `/api/v1/orders/${mine.id}`, { token: viewer })).json.code, 'forbidden_role')

  const created = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'soon-revoked', scopes: ['orders:write'] } })
  await api('DELETE', `/api/v1/auth/api-tokens/${created.json.id}`, { token: acme.jwt })
  const revoked = await api('POST', '/api/v1/orders', { token: created.json.token, body: { pair: 'ETH/USDT', side: 'BUY', type: 'MARKET', quantity: 1 } })
  assert.is(revoked.status, 401)
  assert.is((await api('GET', '/api/v1/orders')).status, 401)
})

test.run()
