// Equity (SPEC 9) against an oracle this test computes from what it did: the trades it made (as GET
// /api/v1/trades reports them) marked at the closes it imported, with fee and slippage on. Then the
// daily history caught up at start by a server whose clock runs a few days ahead
// (test/support/shifted-clock.mjs), and `bulwark risk show` printing the same numbers.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { fileURLToPath } from 'node:url'
import { cli, startServer, tenantFixture, type Res, type Server, type TenantFixture } from '../support/harness.ts'
import { checkedClient, importCloses, near, withDb } from '../trading/market.ts'

const test = suite('risk: equity and its history')
const CLOCK = fileURLToPath(new URL('../support/shifted-clock.mjs', import.meta.url))
const CAPITAL = 10_000
let server: Server
let api: Awaited<ReturnType<typeof checkedClient>>
let desk: TenantFixture
let key: string // risk:read, trades:read: a session would expire on the server whose clock is days ahead
let day = 0
const closes = new Map<string, number>()
/** The oracle's equity after each import: the server evaluates at each one. */
const seen: number[] = []

interface Oracle {
  equity: number
  realized: number
  unrealized: number
  exposure: number
}

async function oracle(): Promise<Oracle> {
  const trades = (await api('GET', '/api/v1/trades?limit=1000', { token: key })).json
  const o = { equity: CAPITAL, realized: 0, unrealized: 0, exposure: 0 }
  for (const t of trades) {
    const open = t.status === 'OPEN'
    const pnl = t.quantity * ((open ? closes.get(t.pair)! : t.exit_price) - t.entry_price) - t.fees_usd - t.slippage_usd
    if (open) {
      o.unrealized += pnl
      o.exposure += t.quantity * closes.get(t.pair)!
    } else {
      o.realized += pnl
    }
  }
  o.equity += o.realized + o.unrealized
  return o
}

async function nextCloses(prices: Record<string, number>): Promise<void> {
  day++
  const date = `2025-05-${String(day).padStart(2, '0')}`
  await importCloses(
    server,
    Object.entries(prices).map(([pair, close]) => [pair, date, close]),
  )
  for (const [pair, close] of Object.entries(prices)) closes.set(pair, close)
  seen.push((await oracle()).equity)
}

function order(body: Record<string, unknown>): Promise<Res> {
  return api('POST', '/api/v1/orders', { token: desk.jwt, body: { type: 'MARKET', ...body } })
}

async function equity(): Promise<any> {
  const res = await api('GET', '/api/v1/risk/equity', { token: key })
  assert.is(res.status, 200, res.text)
  return res.json
}

/** The view against the oracle; the peak only once the oracle's own peak is above capital (the server may have looked before the first fill). */
async function checkEquity(checkPeak: boolean): Promise<any> {
  const view = await equity()
  const o = await oracle()
  near(view.equity_usd, o.equity, 'equity')
  near(view.realized_pnl_usd, o.realized, 'realized')
  near(view.unrealized_pnl_usd, o.unrealized, 'unrealized')
  near(view.exposure_usd, o.exposure, 'exposure')
  assert.is(view.capital_usd, CAPITAL)
  near(view.daily_pnl_usd, view.equity_usd - view.day_start_equity_usd, 'daily pnl')
  if (checkPeak) {
    const peak = Math.max(...seen)
    near(view.peak_equity_usd, peak, 'peak')
    near(view.drawdown_pct, ((peak - o.equity) / peak) * 100, 'drawdown')
  }
  return view
}

test.before(async () => {
  server = await startServer()
  api = await checkedClient(server)
  desk = await tenantFixture(server, 'eqa')
  key = await desk.key(['risk:read', 'trades:read'])
  const res = await api('PATCH', '/api/v1/risk/profile', {
    token: desk.jwt,
    body: { max_open_trades: 50, max_exposure_usd: 1e6, fee_bps: 20, slippage_bps: 10, max_drawdown_pct: 50 },
  })
  assert.is(res.status, 200, res.text)
})
test.after(async () => {
  await server.stop()
})

test('GET /api/v1/risk/equity equals the oracle after buys, sells and imports; peak and drawdown follow', async () => {
  await nextCloses({ 'EQA/USDT': 100, 'EQB/USDT': 50 })
  assert.is((await order({ pair: 'EQA/USDT', side: 'BUY', quantity: 10 })).status, 200)
  assert.is((await order({ pair: 'EQB/USDT', side: 'BUY', notional_usd: 1000 })).status, 200)
  await nextCloses({ 'EQA/USDT': 110, 'EQB/USDT': 52 })
  await checkEquity(false)

  assert.is((await order({ pair: 'EQA/USDT', side: 'SELL', quantity: 4 })).status, 200)
  assert.is((await order({ pair: 'EQA/USDT', side: 'BUY', type: 'LIMIT', quantity: 2, limit_price: 105 })).status, 200)
  await nextCloses({ 'EQA/USDT': 118, 'EQB/USDT': 56 })
  assert.ok(seen[seen.length - 1] > CAPITAL, 'the path rises above capital, so the peak is one the test saw')
  await checkEquity(true)

  assert.is((await order({ pair: 'EQB/USDT', side: 'SELL', notional_usd: 560 })).status, 200)
  await nextCloses({ 'EQA/USDT': 100, 'EQB/USDT': 51 })
  const trades = (await api('GET', '/api/v1/trades?limit=1000', { token: key })).json
  assert.equal(trades.map((t: any) => `${t.pair} ${t.status}`).sort(), [
    'EQA/USDT CLOSED',
    'EQA/USDT OPEN',
    'EQA/USDT OPEN',
    'EQB/USDT CLOSED',
    'EQB/USDT OPEN',
  ])
  const view = await checkEquity(true)
  assert.ok(view.drawdown_pct > 0)
  const breaker = view.breakers.find((b: any) => b.name === 'max_drawdown_pct')
  near(breaker.value, view.drawdown_pct, 'breaker value')
  near(breaker.utilization_pct, (view.drawdown_pct / 50) * 100, 'utilization')
  assert.is(breaker.state, 'OK')
})

test('bulwark risk show prints the equity, the breaker and the limits; an unknown tenant is exit 1, no --tenant exit 2', async () => {
  const o = await oracle()
  const peak = Math.max(...seen)
  const drawdown = ((peak - o.equity) / peak) * 100
  const res = await cli(['risk', 'show', '--tenant', 'eqa'], { dataDir: server.dataDir })
  assert.is(res.code, 0, res.stderr)
  assert.ok(res.stdout.includes(`equity      ${o.equity.toFixed(2)} USD = capital ${CAPITAL.toFixed(2)}`), res.stdout)
  assert.ok(res.stdout.includes(`exposure    ${o.exposure.toFixed(2)} USD`), res.stdout)
  assert.ok(res.stdout.includes(`peak        ${peak.toFixed(2)} USD, drawdown ${drawdown.toFixed(2)}%`), res.stdout)
  assert.match(res.stdout, new RegExp(`max_drawdown_pct +${drawdown.toFixed(2)} / 50\\.00 +${((drawdown / 50) * 100).toFixed(1)}% +OK\n`))
  assert.match(res.stdout, /trading +active\n/)
  assert.match(res.stdout, /max_order_notional_usd +off\n/)
  assert.match(res.stdout, /max_open_trades +50\n/)

  const unknown = await cli(['risk', 'show', '--tenant', 'nope'], { dataDir: server.dataDir })
  assert.is(unknown.code, 1)
  assert.is(unknown.stderr, 'error: no tenant nope\n')
  const usage = await cli(['risk', 'show'], { dataDir: server.dataDir })
  assert.is(usage.code, 2)
  assert.match(usage.stderr, /^error: --tenant SLUG is required\nusage: bulwark risk show/)
})

/** Restarts the server on the same data dir with its clock at noon of `today` (no UTC midnight passes while the test looks). */
async function restartAt(today: string): Promise<void> {
  await server.stop()
  const options = [process.env.NODE_OPTIONS, `--import=${CLOCK}`].filter(Boolean).join(' ')
  // The preload needs the server from source, also when BULWARK_BIN points the suites at the executable.
  const bin = process.env.BULWARK_BIN
  delete process.env.BULWARK_BIN
  try {
    server = await startServer({ dataDir: server.dataDir, env: { NODE_OPTIONS: options, BULWARK_TEST_NOW: `${today}T12:00:00.000Z` } })
  } finally {
    if (bin !== undefined) process.env.BULWARK_BIN = bin
  }
  api = await checkedClient(server)
}

/** The history once the first minute tick (1 s after start) has written `count` points. */
async function history(count: number): Promise<any[]> {
  let points: any[] = []
  for (let i = 0; i < 600 && points.length < count; i++) {
    points = (await api('GET', '/api/v1/risk/equity/history', { token: key })).json
    if (points.length < count) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return points
}

/** Every point against the oracle: the candles are all in the past, so each day's end marks at the newest close, today's equity. */
function checkPoints(points: any[], dates: string[], o: Oracle): void {
  assert.equal(
    points.map((p) => p.date),
    dates,
  )
  const peak = Math.max(CAPITAL, o.equity) // the highest of capital and the points so far
  for (const [i, p] of points.entries()) {
    near(p.equity_usd, o.equity, `${p.date} equity`)
    near(p.exposure_usd, o.exposure, `${p.date} exposure`)
    near(p.pnl_usd, i === 0 ? o.equity - CAPITAL : 0, `${p.date} pnl`)
    near(p.drawdown_pct, ((peak - o.equity) / peak) * 100, `${p.date} drawdown`)
  }
}

let created = ''
let days: string[] = []

test('the history is caught up at start: one point per UTC day from the creation day to yesterday, each the oracle', async () => {
  const o = await oracle()
  assert.ok(o.equity < CAPITAL, 'below capital: every point has a drawdown')
  created = (await withDb(server, (db) => db.get('SELECT created_at FROM tenants WHERE slug = ?', ['eqa']))).created_at.slice(0, 10)
  days = [0, 1, 2, 3, 4].map((n) => addDays(created, n))
  await restartAt(days[3])
  checkPoints(await history(3), days.slice(0, 3), o)
  // The tick that wrote them was the new day's first look: its equity is the day start.
  const view = await equity()
  near(view.day_start_equity_usd, o.equity, 'day start')
  near(view.daily_pnl_usd, 0, 'daily pnl')
  assert.is(view.as_of.slice(0, 10), days[3])

  const range = async (query: string) => (await api('GET', `/api/v1/risk/equity/history?${query}`, { token: key })).json.map((p: any) => p.date)
  assert.equal(await range(`from=${days[1]}&to=${days[1]}`), [days[1]])
  assert.equal(await range(`from=${days[1]}`), days.slice(1, 3))
  assert.equal(await range(`to=${days[0]}`), [days[0]])
  const backwards = await api('GET', `/api/v1/risk/equity/history?from=${days[2]}&to=${days[0]}`, { token: key })
  assert.is(backwards.status, 400)
  assert.ok(
    backwards.json.errors.some((e: any) => e.field === 'from'),
    backwards.text,
  )
})

test('a later catch-up continues the same history: pnl from the last point, drawdown from the same peak', async () => {
  const o = await oracle()
  await restartAt(addDays(days[4], 1))
  checkPoints(await history(5), days, o)
})

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
}

test.run()
