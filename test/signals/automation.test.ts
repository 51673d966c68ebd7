// Automation on today's run, through the real CLI, API and paper broker: ENTER_LONG opens within
// the risk limits, EXIT_LONG closes (and cancels the model's pending BUY), HOLD and a position the
// model already holds change nothing, a paused tenant (fleet or model) and a SIGNAL tenant get no
// orders, the rerun places nothing twice, and the next candle fills what automation placed.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cli, client, startServer, tempDir, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { day, importSeries, query } from './fixtures.ts'

const test = suite('signals: automation after a publish')
let server: Server
let api: ReturnType<typeof client>
const T: Record<string, TenantFixture> = {}
const keys: Record<string, string> = {}
const MODEL = 'trend-follower'
const YESTERDAY = day(-1)

const ordersOf = (slug: string) =>
  query(
    server.dataDir,
    `SELECT o.pair, o.side, o.status, o.notional_usd, o.quantity, o.model_id FROM orders o
  JOIN tenants t ON t.id = o.tenant_id WHERE t.slug = ? ORDER BY o.id`,
    slug,
  )

async function order(slug: string, body: Record<string, unknown>): Promise<any> {
  const res = await api('POST', '/api/v1/orders', { token: keys[slug], body: { side: 'BUY', type: 'MARKET', ...body } })
  assert.is(res.status, 200, res.text)
  return res.json
}

test.before(async () => {
  server = await startServer({ args: ['--quiet'] })
  api = client(server)
  for (const [slug, plan] of [
    ['exec', 'EXECUTE'],
    ['fresh', 'EXECUTE'],
    ['halted', 'EXECUTE'],
    ['modelhalted', 'EXECUTE'],
    ['watcher', 'SIGNAL'],
  ] as const) {
    T[slug] = await tenantFixture(server, slug, plan)
    const res = await api('PUT', '/api/v1/workspace/models', { token: T[slug].jwt, body: { model_ids: [MODEL] } })
    assert.is(res.status, 200, res.text)
    if (plan === 'EXECUTE') keys[slug] = await T[slug].key(['orders:write', 'trades:read'])
  }
  const res = await api('PATCH', '/api/v1/risk/profile', { token: T.exec.jwt, body: { max_open_trades: 3 } })
  assert.is(res.status, 200, res.text)
  for (const [slug, extra] of [
    ['halted', []],
    ['modelhalted', ['--model', MODEL]],
  ] as const) {
    const halted = await cli(['kill-switch', '--tenant', slug, ...extra], { dataDir: server.dataDir })
    assert.is(halted.code, 0, halted.stderr)
  }
  // Up to yesterday for the universe, ETH/USDT one day short so that a BUY can fill on its last candle.
  await importSeries(server.dataDir, ['BTC/USDT', 'SOL/USDT', 'BNB/USDT', 'XRP/USDT'], YESTERDAY)
  await importSeries(server.dataDir, ['ETH/USDT'], YESTERDAY, 1)
})
test.after(async () => {
  await server.stop()
})

test("exec holds an open ETH trade and pending BUYs on BTC (the model's) and SOL (no model); fresh a pending XRP BUY", async () => {
  await order('exec', { pair: 'ETH/USDT', notional_usd: 1000, model_id: MODEL })
  await importSeries(server.dataDir, ['ETH/USDT'], YESTERDAY)
  await order('exec', { pair: 'BTC/USDT', notional_usd: 1000, model_id: MODEL })
  await order('fresh', { pair: 'XRP/USDT', notional_usd: 1000, model_id: MODEL })
  await order('exec', { pair: 'SOL/USDT', notional_usd: 500 })
  const trades = await api('GET', '/api/v1/trades?status=OPEN', { token: keys.exec })
  assert.equal(
    trades.json.map((t: any) => `${t.pair} ${t.model_id}`),
    [`ETH/USDT ${MODEL}`],
  )
})

test('publishing today places the orders of each EXECUTE tenant that is not paused', async () => {
  const res = await cli(['publish', '--model', MODEL], { dataDir: server.dataDir })
  assert.is(res.code, 0, res.stderr)
  assert.match(res.stdout, new RegExp(`${MODEL} ${day(0)} \\(as of ${YESTERDAY}\\): 5 signals written \\(ENTER_LONG 2, HOLD 1, EXIT_LONG 2\\)`))
  assert.match(res.stdout, /automation: 3 orders for 2 tenants, 1 pending BUY canceled, 1 order skipped at the risk limits or the venue.s minimum/)

  // exec: ETH EXIT sells the open quantity, BTC ENTER is already held (the model's pending BUY),
  // BNB ENTER would be a 4th position over max_open_trades 3: skipped quietly. XRP: nothing held.
  const ethTrade = (await query(server.dataDir, "SELECT quantity FROM trades WHERE pair = 'ETH/USDT' AND status = 'OPEN'"))[0]
  assert.equal(
    (await ordersOf('exec')).map((o) => `${o.pair} ${o.side} ${o.status} ${o.model_id}`),
    [`ETH/USDT BUY FILLED ${MODEL}`, `BTC/USDT BUY PENDING ${MODEL}`, 'SOL/USDT BUY PENDING null', `ETH/USDT SELL PENDING ${MODEL}`],
  )
  assert.is((await ordersOf('exec'))[3].quantity, ethTrade.quantity)
  const breaches = (await query(server.dataDir, "SELECT count(*) AS n FROM incidents WHERE action = 'RISK_LIMIT_BREACHED'"))[0].n
  assert.is(breaches, 0, 'a skipped entry records no breach')

  // fresh: XRP EXIT cancels the model's pending BUY; both ENTER_LONG pairs get a BUY of
  // max_exposure_usd / max_open_trades = 10000 / 5 USD.
  assert.equal(
    (await ordersOf('fresh')).map((o) => `${o.pair} ${o.side} ${o.status} ${o.notional_usd} ${o.model_id}`),
    [`XRP/USDT BUY CANCELED 1000 ${MODEL}`, `BTC/USDT BUY PENDING 2000 ${MODEL}`, `BNB/USDT BUY PENDING 2000 ${MODEL}`],
  )
  for (const slug of ['halted', 'modelhalted', 'watcher']) assert.equal(await ordersOf(slug), [], `${slug} gets no order`)
})

test('every tenant with the model active got its signal.published event, paused or not', async () => {
  const slugs = (
    await query(
      server.dataDir,
      `SELECT t.slug FROM events e JOIN tenants t ON t.id = e.tenant_id
    WHERE e.type = 'signal.published' ORDER BY t.slug`,
    )
  ).map((r) => r.slug)
  assert.equal(slugs, ['exec', 'fresh', 'halted', 'modelhalted', 'watcher'])
})

test('the same run again places nothing', async () => {
  const before = (await query(server.dataDir, 'SELECT count(*) AS n FROM orders'))[0].n
  const res = await cli(['publish', '--model', MODEL], { dataDir: server.dataDir })
  assert.is(res.code, 0, res.stderr)
  assert.match(res.stdout, /already published, nothing to do/)
  assert.is((await query(server.dataDir, 'SELECT count(*) AS n FROM orders'))[0].n, before)
})

test('the next candle fills them: the ENTERs open trades, the EXIT closes the ETH trade', async () => {
  const today = day(0)
  // Today's candle closes at midnight UTC and is refused before: import it as the CLI would tomorrow,
  // its clock a day ahead (test/support/shifted-clock.mjs).
  const file = join(tempDir('candles'), 'candles.csv')
  writeFileSync(
    file,
    `${[
      'pair,date,open,high,low,close,volume',
      `BTC/USDT,${today},360,361,359,360,1000`,
      `BNB/USDT,${today},360,361,359,360,1000`,
      `ETH/USDT,${today},140,141,139,140,1000`,
    ].join('\n')}\n`,
  )
  // The preload needs the CLI from source, also when BULWARK_BIN points the suite at the executable.
  const clock = fileURLToPath(new URL('../support/shifted-clock.mjs', import.meta.url))
  const bin = process.env.BULWARK_BIN
  delete process.env.BULWARK_BIN
  const pending = cli(['prices', 'import', file], {
    dataDir: server.dataDir,
    env: {
      NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${clock}`].filter(Boolean).join(' '),
      BULWARK_TEST_NOW: new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000 + 60_000).toISOString(),
    },
  })
  if (bin !== undefined) process.env.BULWARK_BIN = bin
  const imported = await pending
  assert.is(imported.code, 0, imported.stderr)
  let res = await api('GET', '/api/v1/trades', { token: keys.fresh })
  assert.equal(res.json.map((t: any) => `${t.pair} ${t.status} ${t.entry_price} ${t.model_id}`).sort(), [
    `BNB/USDT OPEN 360 ${MODEL}`,
    `BTC/USDT OPEN 360 ${MODEL}`,
  ])
  res = await api('GET', '/api/v1/trades?pair=ETH/USDT', { token: keys.exec })
  assert.equal(
    res.json.map((t: any) => `${t.status} ${t.exit_price}`),
    ['CLOSED 140'],
  )
  assert.equal(
    (await ordersOf('exec')).map((o) => o.status),
    ['FILLED', 'FILLED', 'PENDING', 'FILLED'],
  )
})

test('a backfill of a past date places no orders', async () => {
  const before = (await query(server.dataDir, 'SELECT count(*) AS n FROM orders'))[0].n
  // Two days back is never the newest due run, whatever the time of day.
  const res = await cli(['publish', '--model', MODEL, '--date', day(-2)], { dataDir: server.dataDir })
  assert.is(res.code, 0, res.stderr)
  assert.match(res.stdout, /5 signals written \(ENTER_LONG 2, HOLD 1, EXIT_LONG 2\); a past date: no orders placed/)
  assert.not.match(res.stdout, /automation/)
  assert.is((await query(server.dataDir, 'SELECT count(*) AS n FROM orders'))[0].n, before)
})

test.run()
