// The overview in real Chromium against `serve --demo`: a tenant made today, whose first UTC day has
// not ended (no history point yet), still has an equity chart, with today's equity as its one point;
// and the demo tenant's own breakers (set by --demo, untouched here) show the drawdown past its
// warning, as the API has them, with nothing tripped and trading not paused.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Page } from 'playwright-core'
import { cli, client, login } from '../support/harness.ts'
import { axeViolations, cells, consoleFixture, fmt, openView, signIn, watchedPage, type ConsoleFixture, type WatchedPage } from './fixture.ts'

const test = suite("console: the overview's point for today, the demo's breakers")
let f: ConsoleFixture
let w: WatchedPage
let page: Page
const FRESH = { email: 'owner@fresh.test', password: 'fresh-password-console-1' }

test.before(async () => {
  f = await consoleFixture()
  w = await watchedPage(f.browser)
  page = w.page
})
test.after(async () => {
  await w?.close()
  await f?.stop()
})

test("a fresh tenant's overview: the chart has today's equity as its one point", async () => {
  const made = await cli(['tenant', 'create', 'fresh', '--plan', 'SIGNAL'], { dataDir: f.server.dataDir })
  assert.is(made.code, 0, made.stderr)
  const user = await cli(['user', 'create', FRESH.email, '--tenant', 'fresh', '--role', 'owner', '--password-stdin'], {
    dataDir: f.server.dataDir,
    input: FRESH.password,
  })
  assert.is(user.code, 0, user.stderr)
  const jwt = await login(f.server, FRESH.email, FRESH.password)
  const api = client(f.server)
  assert.equal((await api('GET', '/api/v1/risk/equity/history', { token: jwt })).json, [], 'no UTC day has ended for it')
  const equity = (await api('GET', '/api/v1/risk/equity', { token: jwt })).json

  const fresh = await watchedPage(f.browser)
  try {
    await signIn(fresh.page, f.server, FRESH.email, FRESH.password)
    await fresh.page.waitForSelector('#equity-chart[data-drawn="true"] canvas')
    assert.is(await fresh.page.getAttribute('#equity-chart', 'data-points'), '1')
    assert.is(
      await fresh.page.textContent('#equity-chart figcaption'),
      `Equity now: ${fmt.money(equity.equity_usd)} USD on ${equity.as_of.slice(0, 10)}, the one point so far; a point is added at the end of each UTC day.`,
    )
    const box = await fresh.page.locator('#equity-chart-plot').boundingBox()
    assert.ok(box && box.height > 100 && box.width > 100, 'the chart takes its place')
    assert.equal(await axeViolations(fresh.page), [], "the fresh tenant's overview")
    assert.equal(fresh.problems, [])
  } finally {
    await fresh.close()
  }
})

test("the demo's breakers: the drawdown past its warning in the overview, as the API has it; nothing tripped", async () => {
  await signIn(page, f.server, f.owner.email, f.owner.password)
  const get = async (path: string) => (await client(f.server)('GET', path, { token: f.owner.jwt })).json
  const equity = await get('/api/v1/risk/equity')
  const profile = await get('/api/v1/risk/profile')
  assert.is(profile.trading_paused, false)
  assert.equal(
    equity.breakers.map((b: any) => [b.name, b.state]),
    [
      ['max_daily_loss_usd', 'OK'],
      ['max_drawdown_pct', 'WARNING'],
      ['max_consecutive_losses', 'OK'],
      ['max_orders_per_minute', 'OK'],
    ],
  )
  const rows = await cells(page, '#breakers')
  assert.equal(
    rows.map((r) => [r[0], r[4]]),
    [
      ['Daily loss', 'OK'],
      ['Drawdown', 'WARNING'],
      ['Losses in a row', 'OK'],
      ['Orders in the last minute', 'OK'],
    ],
  )
  const drawdown = equity.breakers[1]
  assert.equal(rows[1].slice(1, 4), [fmt.money(drawdown.value), fmt.money(drawdown.limit), fmt.pct(drawdown.utilization_pct)])
  assert.ok(drawdown.utilization_pct >= 80 && drawdown.utilization_pct < 100)
  assert.is(await page.locator('#breakers .state-warning').count(), 1)
  assert.ok(await page.locator('#paused').isHidden())
  await openView(page, 'risk')
  assert.is(await page.textContent('#profile [data-field="max_drawdown_pct"] dd'), String(profile.max_drawdown_pct))
  assert.equal(w.problems, [])
})

test.run()
