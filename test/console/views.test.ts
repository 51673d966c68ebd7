// Each view of the console in real Chromium shows what the API returns for the demo tenant: the test
// reads the same routes with the owner's session and formats them with its own lines. Then every
// view at 390x844 (no horizontal scroll) and under axe-core (no serious or critical violation), with
// no script error, no CSP violation and no request leaving 127.0.0.1 along the way.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Page } from 'playwright-core'
import { client } from '../support/harness.ts'
import { axeViolations, cells, consoleFixture, fmt, openView, signIn, VIEWS, watchedPage, type ConsoleFixture, type WatchedPage } from './fixture.ts'

const test = suite('console: the views show what the API returns')
let f: ConsoleFixture
let w: WatchedPage
let page: Page
const get = async (path: string) => {
  const res = await client(f.server)('GET', path, { token: f.owner.jwt })
  assert.is(res.status, 200, res.text)
  return res.json
}

test.before(async () => {
  f = await consoleFixture()
  // Breakers on, far from tripping, so the overview has their utilization to show.
  const limits = { max_daily_loss_usd: 5000, max_drawdown_pct: 95, max_consecutive_losses: 60, max_orders_per_minute: 50 }
  const patched = await client(f.server)('PATCH', '/api/v1/risk/profile', { token: f.owner.jwt, body: limits })
  assert.is(patched.status, 200, patched.text)
  w = await watchedPage(f.browser)
  page = w.page
  await signIn(page, f.server, f.owner.email, f.owner.password)
})
test.after(async () => {
  await w?.close()
  await f?.stop()
})

test('overview: equity, daily PnL, exposure, the curve of the daily history, each breaker, the open positions', async () => {
  await openView(page, 'overview')
  const [equity, history, open] = await Promise.all([get('/api/v1/risk/equity'), get('/api/v1/risk/equity/history'), get('/api/v1/trades?status=OPEN')])
  const figure = (id: string) => page.textContent(`[data-figure="${id}"] dd`)
  assert.is(await figure('equity'), fmt.money(equity.equity_usd))
  assert.is(await figure('daily_pnl'), fmt.signed(equity.daily_pnl_usd))
  assert.is(await figure('exposure'), fmt.money(equity.exposure_usd))
  assert.is(await figure('drawdown'), fmt.pct(equity.drawdown_pct))
  assert.ok(history.length > 300, `${history.length} points of history`)
  await page.waitForSelector('#equity-chart[data-drawn="true"] canvas')
  // The daily points, then today's equity as it stands.
  assert.is(await page.getAttribute('#equity-chart', 'data-points'), String(history.length + 1))
  assert.match(
    (await page.textContent('#equity-chart figcaption'))!,
    `${history.length + 1} points, ${history[0].date} to ${equity.as_of.slice(0, 10)}; now ${fmt.money(equity.equity_usd)} USD.`,
  )
  const breakerLabels: Record<string, string> = {
    max_daily_loss_usd: 'Daily loss',
    max_drawdown_pct: 'Drawdown',
    max_consecutive_losses: 'Losses in a row',
    max_orders_per_minute: 'Orders in the last minute',
  }
  const counts = ['max_consecutive_losses', 'max_orders_per_minute']
  const reading = (name: string, x: number) => (counts.includes(name) ? String(x) : fmt.money(x))
  assert.is(equity.breakers.length, 4)
  assert.equal(
    await cells(page, '#breakers'),
    equity.breakers.map((b: any) => [breakerLabels[b.name], reading(b.name, b.value), reading(b.name, b.limit), fmt.pct(b.utilization_pct), b.state]),
  )
  assert.ok(open.length > 0, 'the demo holds open positions')
  assert.equal(
    await cells(page, '#open-positions'),
    open.map((t: any) => [
      t.pair,
      t.model,
      t.mode,
      fmt.amount(t.quantity),
      fmt.amount(t.entry_price),
      fmt.amount(t.mark_price),
      fmt.pct(t.pnl_pct, true),
      fmt.when(t.opened_at),
      fmt.protection(t.protection),
    ]),
  )
})

test('signals: the newest page, then "Show older" follows the Link header to the next', async () => {
  await openView(page, 'signals')
  const row = (s: any) => [s.as_of, s.model_id, s.pair, s.action, s.direction, fmt.amount(s.entry_price), fmt.hash(s.hash)]
  const first = await client(f.server)('GET', '/api/v1/signals?limit=50', { token: f.owner.jwt })
  assert.equal(await cells(page, '#signals-table'), first.json.map(row))
  const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link')!)![1]
  await page.getByRole('button', { name: 'Show older' }).click()
  await page.waitForSelector('#signals-table[data-rows="100"]')
  assert.equal(await cells(page, '#signals-table'), [...first.json, ...(await get(next))].map(row))
})

test('orders and trades: each with its fees and slippage; trades with gross and net PnL', async () => {
  await openView(page, 'orders')
  const [orders, trades] = await Promise.all([get('/api/v1/orders?limit=50'), get('/api/v1/trades?limit=50')])
  assert.ok(orders.length > 0 && trades.length > 0)
  assert.ok(
    trades.some((t: any) => t.fees_usd > 0),
    'some friction to show',
  )
  assert.equal(
    await cells(page, '#orders-table'),
    orders.map((o: any) => [
      fmt.when(o.created_at),
      o.pair,
      o.side,
      o.type,
      fmt.amount(o.quantity),
      o.status,
      fmt.amount(o.fill_price),
      fmt.money(o.fees_usd),
      fmt.money(o.slippage_usd),
      o.mode,
    ]),
  )
  assert.equal(
    await cells(page, '#trades-table'),
    trades.map((t: any) => [
      fmt.when(t.opened_at),
      t.model,
      t.pair,
      fmt.amount(t.quantity),
      fmt.amount(t.entry_price),
      fmt.amount(t.exit_price ?? t.mark_price),
      fmt.pct(t.gross_pnl_pct, true),
      fmt.money(t.fees_usd),
      fmt.money(t.slippage_usd),
      fmt.pct(t.pnl_pct, true),
      t.status,
      fmt.protection(t.protection),
      fmt.exitReason(t.exit_reason),
    ]),
  )
})

test('risk: every limit of the profile as the API has it ("off" for null)', async () => {
  await openView(page, 'risk')
  const profile = await get('/api/v1/risk/profile')
  const money = ['capital_usd', 'max_exposure_usd', 'max_daily_loss_usd', 'max_order_notional_usd']
  for (const [field, value] of Object.entries(profile)) {
    if (field === 'tenant_id' || field === 'trading_paused' || field === 'paused_model_ids') continue
    const shown = await page.textContent(`#profile [data-field="${field}"] dd`)
    assert.is(shown, value === null ? 'off' : money.includes(field) ? fmt.money(value as number) : String(value), field)
  }
  assert.is(await page.textContent('#profile [data-field="trading"] dd'), 'active')
})

test('incidents: the trail as the API has it', async () => {
  await openView(page, 'incidents')
  const trail = await get('/api/v1/risk/incidents?limit=50')
  assert.ok(trail.length > 0, 'the profile change above is an incident')
  assert.equal(
    await cells(page, '#incidents-table'),
    trail.map((i: any) => [i.timestamp, i.action, i.status, i.model_id, i.actor, i.reason ?? '', fmt.hash(i.hash)]),
  )
  assert.equal(w.problems, [])
})

test('every view at 390x844: no horizontal scroll, no serious or critical axe-core violation, no CSP violation, nothing off 127.0.0.1', async () => {
  const phone = await watchedPage(f.browser, { viewport: { width: 390, height: 844 } })
  try {
    await signIn(phone.page, f.server, f.owner.email, f.owner.password)
    for (const id of VIEWS) {
      await openView(phone.page, id)
      if (id === 'overview') await phone.page.waitForSelector('#equity-chart[data-drawn="true"]')
      const width = await phone.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }))
      assert.ok(width.scroll <= width.client, `${id}: scrollWidth ${width.scroll} > ${width.client}`)
      assert.equal(await axeViolations(phone.page), [], id)
    }
    await phone.page.getByRole('button', { name: 'Sign out' }).click()
    await phone.page.waitForSelector('main[data-ready="sign-in"]')
    assert.equal(await axeViolations(phone.page), [], 'sign-in')
    assert.equal(phone.problems, [])
  } finally {
    await phone.close()
  }
})

test.run()
