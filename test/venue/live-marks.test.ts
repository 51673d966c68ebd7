// Venue marks and their age (SPEC 10, "Marks"), through the real server, executor, ccxt and the test
// venue: an OPEN LIVE trade is marked at the venue's last price with mark_age_seconds (a PAPER one
// at the last close, without), and its pnl is computed at that mark. A mark read hours ago (written
// back in the database file while the server runs, as if the venue had not answered since) is never
// shown as fresh: equity lists it in stale_marks, /health shows the venue degraded, and a breaker
// that trips on it says so in its incident. A restart reads the venue again and all is fresh.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import { startVenue, type Venue } from '../support/venue/index.ts'
import { checkedClient, importCloses, near, withDb } from '../trading/market.ts'
import { type Api, eventually, incidentsOf, liveServer, liveTenant, type LiveTenant, orderReaches, priceBoth } from './fixture-live.ts'

const test = suite('venue: LIVE marks and their age')
const HOURS_AGO = 2 * 3600
let venue: Venue
let server: Server
let api: Api
let mike: LiveTenant

test.before(async () => {
  venue = await startVenue()
  server = await liveServer(venue)
  api = await checkedClient(server)
  mike = await liveTenant(server, api, venue, 'mike', { USDT: 100_000 })
})
test.after(async () => {
  await server.stop()
  await venue.close()
})

const trades = async (): Promise<any[]> => (await api('GET', '/api/v1/trades?status=OPEN', { token: mike.trader })).json
const equity = async (): Promise<any> => (await api('GET', '/api/v1/risk/equity', { token: mike.trader })).json
const venueHealth = async (): Promise<string | undefined> => (await api('GET', '/api/v1/health')).json.venues.binance
const restart = async () => {
  await server.stop()
  server = await liveServer(venue, server.dataDir)
  api = await checkedClient(server)
}

/** pnl_pct and gross_pnl_pct of an open trade at `mark`, from the trade's own fields. */
function assertMarkedAt(trade: any, mark: number): void {
  near(trade.mark_price, mark, `${trade.mode} mark_price`)
  near(trade.gross_pnl_pct, (mark / trade.entry_price - 1) * 100, 'gross_pnl_pct at the mark')
  const net = (trade.quantity * (mark - trade.entry_price) - trade.fees_usd - trade.slippage_usd) / (trade.quantity * trade.entry_price)
  near(trade.pnl_pct, net * 100, 'pnl_pct at the mark')
}

test('an open LIVE trade is marked at the venue last price with its age; a PAPER one at the last close, without', async () => {
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-01', 64_000, 65_000)
  const placed = await api('POST', '/api/v1/orders', {
    token: mike.trader,
    body: { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 0.01, mode: 'LIVE' },
  })
  assert.is(placed.status, 200, placed.text)
  await orderReaches(api, mike.trader, placed.json.id, ['FILLED'])
  await importCloses(server, [['ETH/USDT', '2025-03-01', 3000]])
  const paper = await api('POST', '/api/v1/orders', { token: mike.trader, body: { pair: 'ETH/USDT', side: 'BUY', type: 'MARKET', quantity: 1 } })
  assert.is(paper.status, 200, paper.text)
  await importCloses(server, [['ETH/USDT', '2025-03-02', 3050]]) // fills it
  await importCloses(server, [['ETH/USDT', '2025-03-03', 3100]])
  // Reconciliation reads the marks at start (then every minute): the venue has moved on since.
  await venue.setPrice('BTC/USDT', 70_000)
  await restart()
  const live = await eventually('the LIVE trade at the venue mark', async () => {
    const found = (await trades()).find((t) => t.mode === 'LIVE')
    return found?.mark_age_seconds !== null && found?.mark_price === 70_000 ? found : undefined
  })
  assertMarkedAt(live, 70_000)
  assert.ok(live.mark_age_seconds >= 0 && live.mark_age_seconds <= 30, `fresh: ${live.mark_age_seconds} s`)
  assert.is(live.pair, 'BTC/USDT')
  const onPaper = (await trades()).find((t) => t.mode === 'PAPER')
  assert.is(onPaper.pair, 'ETH/USDT')
  assertMarkedAt(onPaper, 3100)
  assert.is(onPaper.mark_age_seconds, null, 'a PAPER trade has no venue mark')
  assert.equal((await equity()).stale_marks, [])
  assert.is(await eventually('a pass reported', () => venueHealth()), 'ok')
})

test('a mark read hours ago is stale: the trade shows its age, equity lists it, /health degrades the venue, a breaker trip says so', async () => {
  const marked = new Date(Date.now() - HOURS_AGO * 1000).toISOString()
  // As if the venue had last answered two hours ago, at a much lower price.
  const changed = (await withDb(server, (db) => db.run("UPDATE venue_marks SET price = 40000, marked_at = ? WHERE pair = 'BTC/USDT'", [marked]), false)).changes
  assert.is(changed, 1)

  const live = (await trades()).find((t) => t.mode === 'LIVE')
  assertMarkedAt(live, 40_000)
  assert.ok(live.mark_age_seconds >= HOURS_AGO && live.mark_age_seconds < HOURS_AGO + 60, `age ${live.mark_age_seconds} s`)
  const now = await equity()
  assert.is(now.stale_marks.length, 1, JSON.stringify(now.stale_marks))
  assert.is(now.stale_marks[0].pair, 'BTC/USDT')
  assert.is(now.stale_marks[0].marked_at, marked)
  assert.ok(now.stale_marks[0].age_seconds >= HOURS_AGO && now.stale_marks[0].age_seconds < HOURS_AGO + 60)
  near(now.exposure_usd, live.quantity * 40_000 + 3100, 'equity values the LIVE position at the stale mark it names (and ETH at its close)')
  const health = (await api('GET', '/api/v1/health')).json
  assert.equal(health.venues, { binance: 'degraded' })
  assert.is(health.status, 'HEALTHY', "a venue's trouble is reported, not Bulwark's")

  // A loss limit set below the loss at that mark trips in the profile change's own transaction.
  const profile = await api('PATCH', '/api/v1/risk/profile', { token: mike.trader, body: { max_daily_loss_usd: 100 } })
  assert.is(profile.status, 200, profile.text)
  const [trip] = await incidentsOf(server, 'mike', 'CIRCUIT_BREAKER_TRIPPED')
  assert.ok(trip, 'the daily loss breaker tripped')
  const stale = /^daily loss [\d.]+ USD >= 100\.00: .*; on stale venue marks \(older than 180 s\): BTC\/USDT read (\d+) s ago at ([\d-]+ [\d:]+) UTC/.exec(
    trip.reason,
  )
  assert.ok(stale, trip.reason)
  assert.ok(Number(stale[1]) >= HOURS_AGO, trip.reason)
  assert.is(stale[2], marked.slice(0, 19).replace('T', ' '))
  // RESUME while the loss holds at that mark is refused, and the refusal names the stale mark too.
  const resume = await api('POST', '/api/v1/risk/kill-switch', { token: mike.trader, body: { action: 'RESUME', pause: false } })
  assert.is(resume.status, 409, resume.text)
  assert.match(resume.json.detail, /^daily loss .*; on stale venue marks \(older than 180 s\): BTC\/USDT read \d+ s ago at .* UTC; the condition still holds/)
})

test('a restart reads the venue again: the mark is fresh, nothing is listed stale, the venue is ok', async () => {
  await restart()
  const live = await eventually('a fresh mark', async () => {
    const found = (await trades()).find((t) => t.mode === 'LIVE')
    return found.mark_age_seconds !== null && found.mark_age_seconds < 180 ? found : undefined
  })
  assertMarkedAt(live, 70_000)
  assert.equal((await equity()).stale_marks, [])
  assert.is(await eventually('a pass reported', () => venueHealth()), 'ok')
})

test.run()
