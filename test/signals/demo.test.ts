// `serve --demo`: labelled synthetic prices, a demo tenant whose owner's password is printed once
// and works, a full feed at once, automated orders within the limits; a restart prints no password
// and publishes nothing twice; the same seed gives the same history in another data dir.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { client, login, startServer, type Server } from '../support/harness.ts'
import { day, eventually, query } from './fixtures.ts'

const test = suite('signals: serve --demo')
let server: Server
let password: string

async function startDemo(dataDir?: string): Promise<Server> {
  const started = await startServer({ dataDir, args: ['--demo', '--quiet'] })
  await eventually(() => (/Demo: +published/.test(started.output()) ? true : undefined), 'the demo lines of the banner')
  return started
}

test.before(async () => {
  server = await startDemo()
})
test.after(async () => {
  await server?.stop()
})

test('the banner labels the prices synthetic and prints the owner password once', () => {
  const out = server.output()
  assert.match(out, /Demo: +SYNTHETIC prices \(seeded random walk, seed 42, not market data\) for 12 pairs, up to \d{4}-\d{2}-\d{2}/)
  assert.match(out, /tenant "demo" \(plan EXECUTE, every model active\), owner owner@demo\.localhost/)
  const match = /password \(shown once\): (\S+)/.exec(out)
  assert.ok(match, out)
  password = match![1]
  assert.match(out, /Demo: +published \d{4}-\d{2}-\d{2} \(as of \d{4}-\d{2}-\d{2}\): 15 new signals/)
  assert.is(query(server.dataDir, 'SELECT count(*) AS n FROM synthetic_prices')[0].n, 12)
})

test('the owner logs in and sees the workspace, the signals and the automated orders', async () => {
  const jwt = await login(server, 'owner@demo.localhost', password)
  const api = client(server)
  const ws = await api('GET', '/api/v1/workspace', { token: jwt })
  assert.equal(ws.json.active_model_ids, ['breakout-momentum', 'mean-reversion', 'trend-follower'])
  const signals = await api('GET', '/api/v1/signals', { token: jwt })
  assert.is(signals.json.length, 15)
  assert.ok(signals.json.every((s: any) => s.as_of === day(-1)))
  // Each ENTER_LONG gets a BUY of 10000 / 5 USD until the five positions are taken.
  const enters = signals.json.filter((s: any) => s.action === 'ENTER_LONG').length
  const orders = await api('GET', '/api/v1/orders', { token: jwt })
  assert.is(orders.json.length, Math.min(enters, 5))
  assert.ok(orders.json.every((o: any) => o.side === 'BUY' && o.notional_usd === 2000 && o.status === 'PENDING'))
})

test('the public feed is full, and the page says the prices are synthetic', async () => {
  const api = client(server)
  const feed = await api('GET', '/api/v1/public/signals')
  assert.is(feed.json.length, 15)
  const page = await api('GET', '/')
  assert.match(page.text, /Demo data: the prices behind these signals are synthetic \(a seeded random walk, seed 42, for 12 pairs\), not market data\./)
})

test('a restart with --demo keeps the tenant, prints no password and publishes nothing twice', async () => {
  const feed = (await client(server)('GET', '/api/v1/public/signals')).json
  assert.is(await server.stop(), 0)
  const dataDir = server.dataDir
  server = await startDemo(dataDir)
  const out = server.output()
  assert.match(out, /tenant "demo" already exists/)
  assert.not.match(out, /password \(shown once\)/)
  assert.match(out, /: 0 new signals/)
  assert.equal((await client(server)('GET', '/api/v1/public/signals')).json, feed)
})

test('the same seed gives the same history in a fresh data dir', async () => {
  const other = await startDemo()
  try {
    const sql = "SELECT pair, date, open, high, low, close, volume FROM prices WHERE pair IN ('BTC/USDT', 'DOT/USDT') ORDER BY pair, date"
    const a = query(server.dataDir, sql)
    const b = query(other.dataDir, sql)
    assert.is(a.length, 800)
    assert.equal(a, b)
    assert.ok(a.every((c: any) => c.low <= Math.min(c.open, c.close) && c.high >= Math.max(c.open, c.close) && c.low > 0))
  } finally {
    await other.stop()
  }
})

test.run()
