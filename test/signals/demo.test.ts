// `serve --demo`: labelled synthetic prices, a demo tenant whose owner's password is printed once
// and works, the history replayed through the real publisher and paper broker (closed trades that
// follow the signals, an equity history, a full feed), today's automated orders within the
// limits, the breakers on with the drawdown past its warning; a restart replays, publishes and sets
// nothing twice, a restart days later replays exactly the gap; the same seed gives the same
// history, signals and trades in another data dir.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { fileURLToPath } from 'node:url'
import { client, login, startServer, type Server } from '../support/harness.ts'
import { addDays, day, eventually, query } from './fixtures.ts'

const test = suite('signals: serve --demo')
const CLOCK = fileURLToPath(new URL('../support/shifted-clock.mjs', import.meta.url))
let server: Server
let password: string
let jwt: string

// Candles each rule reads (docs/signals.md, "Built-in models"): the history is 400 days up to yesterday, so
// a model first publishes the day after its first full window.
const NEEDED: Record<string, number> = { 'mean-reversion': 20, 'breakout-momentum': 21, 'trend-follower': 250 }
const HISTORY_FROM = day(-400)
const FIRST_REPLAYED = addDays(HISTORY_FROM, Math.min(...Object.values(NEEDED)))
const REPLAY = /Demo: +replayed (\d+) days? \(([^)]*)\) in \d+ ms: (\d+) signals, (\d+) closed trades, (\d+) open/

async function startDemo(dataDir?: string, env?: Record<string, string>): Promise<Server> {
  const started = await startServer({ dataDir, args: ['--demo', '--quiet'], env })
  await eventually(() => (/Demo: +published/.test(started.output()) ? true : undefined), 'the demo lines of the banner')
  return started
}

/** What must not depend on the data dir or on when the server started: no ids, no wall-clock times. */
async function history(dataDir: string) {
  return {
    signals: await query(dataDir, 'SELECT model_id, pair, action, entry_price, as_of FROM signals ORDER BY model_id, as_of, pair'),
    runs: await query(dataDir, 'SELECT model_id, date, as_of, signals, missing_pairs FROM publish_runs ORDER BY model_id, date'),
    trades: await query(
      dataDir,
      'SELECT model_id, pair, status, quantity, entry_price, exit_price, fees_usd, slippage_usd, opened_at, closed_at FROM trades ORDER BY opened_at, model_id, pair, status',
    ),
    equity: await query(dataDir, 'SELECT e.date, e.equity_usd, e.pnl_usd, e.drawdown_pct, e.exposure_usd FROM equity_history e ORDER BY e.date'),
  }
}

async function all(path: string): Promise<any[]> {
  const res = await client(server)('GET', `${path}${path.includes('?') ? '&' : '?'}limit=1000`, { token: jwt })
  assert.is(res.status, 200, res.text)
  assert.is(res.headers.get('link'), null, 'one page holds them all')
  return res.json
}

const closeOf = async (dataDir: string, pair: string, date: string) =>
  (await query(dataDir, 'SELECT close FROM prices WHERE pair = ? AND date = ?', pair, date))[0]?.close
const net = (t: any) => t.quantity * (t.mark_price - t.entry_price) - t.fees_usd - t.slippage_usd

test.before(async () => {
  server = await startDemo()
})
test.after(async () => {
  await server?.stop()
})

test('the banner labels the prices synthetic, prints the owner password once and what the replay did', async () => {
  const out = server.output()
  assert.match(out, /Demo: +SYNTHETIC prices \(seeded random walk, seed 42, not market data\) for 12 pairs, up to \d{4}-\d{2}-\d{2}/)
  assert.match(out, /tenant "demo" \(plan EXECUTE, every model active\), owner owner@demo\.localhost/)
  const match = /password \(shown once\): (\S+)/.exec(out)
  assert.ok(match, out)
  password = match![1]
  const replay = REPLAY.exec(out)
  assert.ok(replay, out)
  const days = 400 - Math.min(...Object.values(NEEDED))
  assert.is(Number(replay![1]), days)
  assert.is(replay![2], `${FIRST_REPLAYED} .. ${day(-1)}`)
  // Each model publishes its 5 pairs on every day from the day after its first full window.
  const signals = Object.values(NEEDED).reduce((sum, needed) => sum + 5 * (400 - needed), 0)
  assert.is(Number(replay![3]), signals)
  assert.is((await query(server.dataDir, 'SELECT count(*) AS n FROM signals WHERE as_of < ?', day(-1)))[0].n, signals)
  assert.ok(Number(replay![4]) > 0, 'the replay closed trades')
  assert.match(out, /Demo: +published \d{4}-\d{2}-\d{2} \(as of \d{4}-\d{2}-\d{2}\): 15 new signals/)
  assert.is((await query(server.dataDir, 'SELECT count(*) AS n FROM synthetic_prices'))[0].n, 12)
  assert.not.match(out, /publish warning|demo replay warnings/)
})

test('the owner sees closed trades that follow the signals, filled at the next close, with their PnL', async () => {
  jwt = await login(server, 'owner@demo.localhost', password)
  const trades = await all('/api/v1/trades')
  const replay = REPLAY.exec(server.output())!
  const closed = trades.filter((t) => t.status === 'CLOSED')
  assert.is(closed.length, Number(replay[4]))
  assert.ok(
    closed.every((t) => t.exit_reason === 'signal'),
    'every demo trade was closed by the automation',
  )
  assert.is(trades.length - closed.length, Number(replay[5]))
  assert.ok(trades.length - closed.length <= 5, 'max_open_trades 5')
  const action = async (t: any, asOf: string) =>
    (await query(server.dataDir, 'SELECT action FROM signals WHERE model_id = ? AND pair = ? AND as_of = ?', t.model_id, t.pair, asOf))[0]?.action
  for (const t of trades) {
    // Filled when the candle of D arrived (at the next midnight), D being the day after the signal's candle.
    const opened = t.opened_at.slice(0, 10)
    assert.is(t.opened_at.slice(10), 'T00:00:00.000Z')
    assert.is(t.entry_price, await closeOf(server.dataDir, t.pair, addDays(opened, -1)))
    assert.is(await action(t, addDays(opened, -2)), 'ENTER_LONG', `${t.model_id} ${t.pair} entered ${opened}`)
    if (t.status === 'OPEN') continue
    const closedOn = t.closed_at.slice(0, 10)
    assert.is(t.exit_price, await closeOf(server.dataDir, t.pair, addDays(closedOn, -1)))
    assert.is(await action(t, addDays(closedOn, -2)), 'EXIT_LONG', `${t.model_id} ${t.pair} exited ${closedOn}`)
    const pnl = (net(t) / (t.quantity * t.entry_price)) * 100
    assert.ok(Math.abs(t.pnl_pct - pnl) < 1e-9, `${t.pnl_pct} vs ${pnl}`)
    assert.ok(t.fees_usd > 0 && t.slippage_usd > 0)
  }
  assert.ok(closed.some((t) => t.pnl_pct > 0) && closed.some((t) => t.pnl_pct < 0), 'wins and losses')
})

test('the equity history runs from the first replayed day to yesterday, and ends where the trades say', async () => {
  const points = await eventually(async () => {
    const res = await client(server)('GET', '/api/v1/risk/equity/history', { token: jwt })
    return res.json.at(-1)?.date === day(-1) ? res.json : undefined
  }, 'the history up to yesterday')
  assert.is(points.length, 400 - Math.min(...Object.values(NEEDED)))
  assert.is(points[0].date, FIRST_REPLAYED)
  let previous = 10000
  points.forEach((p: any, i: number) => {
    assert.is(p.date, addDays(FIRST_REPLAYED, i))
    assert.ok(Math.abs(p.pnl_usd - (p.equity_usd - previous)) < 1e-6)
    previous = p.equity_usd
  })
  assert.ok(new Set(points.map((p: any) => p.equity_usd.toFixed(2))).size > 100, 'the curve moves')
  // Yesterday's end: the trades opened by then, marked at their exit or at yesterday's close.
  const trades = await all('/api/v1/trades')
  const end = `${day(-1)}T23:59:59.999Z`
  const expected = 10000 + trades.filter((t) => t.opened_at <= end).reduce((sum, t) => sum + net(t), 0)
  assert.ok(Math.abs(points.at(-1).equity_usd - expected) < 1e-6, `${points.at(-1).equity_usd} vs ${expected}`)
  const now = await client(server)('GET', '/api/v1/risk/equity', { token: jwt })
  assert.ok(Math.abs(now.json.equity_usd - (10000 + trades.reduce((sum, t) => sum + net(t), 0))) < 1e-6)
})

test('the breakers are on, set from the replayed numbers: the drawdown past its warning, nothing tripped, not paused', async () => {
  const api = client(server)
  const { json: equity } = await api('GET', '/api/v1/risk/equity', { token: jwt })
  const names = ['max_daily_loss_usd', 'max_drawdown_pct', 'max_consecutive_losses', 'max_orders_per_minute']
  assert.equal(equity.breakers.map((b: any) => b.name).sort(), [...names].sort())
  const drawdown = equity.breakers.find((b: any) => b.name === 'max_drawdown_pct')
  assert.is(drawdown.state, 'WARNING')
  assert.ok(drawdown.utilization_pct >= 80 && drawdown.utilization_pct < 100, String(drawdown.utilization_pct))
  assert.ok(Math.abs(drawdown.value - equity.drawdown_pct) < 1e-9)
  assert.equal(
    equity.breakers.filter((b: any) => b.state !== 'OK').map((b: any) => b.name),
    ['max_drawdown_pct'],
  )
  const profile = (await api('GET', '/api/v1/risk/profile', { token: jwt })).json
  assert.is(profile.trading_paused, false)
  assert.is(profile.max_drawdown_pct, Math.floor(equity.drawdown_pct * 1.24 * 100) / 100)
  const line = `Demo:    breakers on: ${names.map((n) => `${n} ${profile[n]}`).join(', ')}; max_drawdown_pct is past its warning (80%)`
  assert.ok(server.output().includes(line), server.output())
  const trail = (await api('GET', '/api/v1/risk/incidents', { token: jwt })).json
  assert.equal(
    trail.map((i: any) => [i.action, i.actor]),
    [['RISK_PROFILE_UPDATED', 'demo@localhost']],
  )
})

test("today's publish placed the automated orders within the limits", async () => {
  const signals = await all(`/api/v1/signals?since=${day(0)}T00:00:00Z`)
  assert.is(signals.length, 15)
  assert.ok(signals.every((s: any) => s.as_of === day(-1)))
  const pending = await all('/api/v1/orders?status=PENDING')
  const open = (await all('/api/v1/trades?status=OPEN')).length
  // An ENTER_LONG buys 10000 / 5 USD while fewer than 5 positions are open or pending.
  const buys = pending.filter((o: any) => o.side === 'BUY')
  assert.ok(buys.every((o: any) => o.notional_usd === 2000 && o.created_at.slice(0, 10) === day(0)))
  assert.ok(open + buys.length <= 5)
  const entries = signals.filter((s: any) => s.action === 'ENTER_LONG').length
  assert.ok(buys.length <= entries)
  const trading = await client(server)('GET', '/api/v1/risk/profile', { token: jwt })
  assert.is(trading.json.trading_paused, false)
})

test('the public feed is full, and the page says the prices are synthetic', async () => {
  const api = client(server)
  const feed = await api('GET', '/api/v1/public/signals')
  assert.is(feed.json.length, 15)
  assert.ok(feed.json.every((r: any) => r.as_of === day(-1)))
  const page = await api('GET', '/')
  assert.match(page.text, /Demo data: the prices behind these signals are synthetic \(a seeded random walk, seed 42, for 12 pairs\), not market data\./)
})

test('a restart with --demo keeps the tenant, prints no password, replays and publishes nothing twice', async () => {
  const before = await history(server.dataDir)
  assert.is(await server.stop(), 0)
  server = await startDemo(server.dataDir)
  const out = server.output()
  assert.match(out, /tenant "demo" already exists/)
  assert.not.match(out, /password \(shown once\)/)
  assert.match(out, /Demo: +replayed 0 days \(the history was up to date\) in \d+ ms: 0 signals/)
  assert.match(out, /: 0 new signals/)
  assert.not.match(out, /breakers on/, 'the breakers are set once')
  assert.is((await query(server.dataDir, "SELECT count(*) AS n FROM incidents WHERE action = 'RISK_PROFILE_UPDATED'"))[0].n, 1)
  assert.equal(await history(server.dataDir), before)
})

test('a restart three days later replays exactly the three days missed, and fills what was pending', async () => {
  const clock = [process.env.NODE_OPTIONS, `--import=${CLOCK}`].filter(Boolean).join(' ')
  const earlier = await startDemo(undefined, { NODE_OPTIONS: clock, BULWARK_TEST_NOW: `${day(-3)}T12:00:00.000Z` })
  const dataDir = earlier.dataDir
  assert.is(await earlier.stop(), 0)
  const pendingThen = (await query(dataDir, "SELECT id FROM orders WHERE status = 'PENDING'")).map((o) => o.id)
  const later = await startDemo(dataDir)
  try {
    const replay = REPLAY.exec(later.output())
    assert.ok(replay, later.output())
    assert.is(replay![1], '3')
    assert.is(replay![2], `${day(-3)} .. ${day(-1)}`)
    assert.is(Number(replay![3]), 2 * 15, 'the day published before the stop is not published again')
    for (const id of pendingThen) assert.is.not((await query(dataDir, 'SELECT status FROM orders WHERE id = ?', id))[0].status, 'PENDING', id)
    // One run per model and day, with no gap from its first day to today.
    for (const [model, needed] of Object.entries(NEEDED)) {
      const runs = (await query(dataDir, 'SELECT date FROM publish_runs WHERE model_id = ? ORDER BY date', model)).map((r) => r.date)
      const first = addDays(day(-403), needed)
      assert.equal(
        runs,
        Array.from({ length: 403 - needed + 1 }, (_, i) => addDays(first, i)),
        model,
      )
    }
  } finally {
    await later.stop()
  }
})

test('the same seed gives the same prices, signals, trades and equity history in a fresh data dir', async () => {
  const other = await startDemo()
  try {
    const sql = "SELECT pair, date, open, high, low, close, volume FROM prices WHERE pair IN ('BTC/USDT', 'DOT/USDT') ORDER BY pair, date"
    const a = await query(server.dataDir, sql)
    const b = await query(other.dataDir, sql)
    assert.is(a.length, 800)
    assert.equal(a, b)
    assert.ok(a.every((c: any) => c.low <= Math.min(c.open, c.close) && c.high >= Math.max(c.open, c.close) && c.low > 0))
    await eventually(
      async () => ((await query(other.dataDir, 'SELECT max(date) AS d FROM equity_history'))[0].d === day(-1) ? true : undefined),
      'the equity history of the other data dir',
    )
    const mine = await history(server.dataDir)
    const theirs = await history(other.dataDir)
    assert.ok(mine.trades.length > 0)
    assert.equal(theirs, mine)
  } finally {
    await other.stop()
  }
})

test.run()
