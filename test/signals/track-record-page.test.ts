// The public page's track record, in real headless Chromium against `serve --demo`: per model the
// return, Sharpe and max drawdown of GET /api/v1/models/{id}/performance as the page formats them
// (this file formats them again with its own lines), an SVG chart with one point per point of the
// API's equity curve, the chain head of GET /api/v1/public/models, the last closed positions, the
// synthetic label; no console error or CSP violation; the same with JavaScript off.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chromium, type Browser, type Page } from 'playwright-core'
import { client, login, startServer, type Server } from '../support/harness.ts'
import { eventually } from './fixtures.ts'

const test = suite('signals: the track record on the public page')
let server: Server
let browser: Browser
let jwt: string

const pct = (x: number | null) => (x === null ? '\u2014' : `${x > 0 ? '+' : ''}${(x * 100).toFixed(2)}%`)
const two = (x: number | null) => (x === null ? '\u2014' : x.toFixed(2))

test.before(async () => {
  server = await startServer({ args: ['--demo', '--quiet'] })
  await eventually(() => (/Demo: +published/.test(server.output()) ? true : undefined), 'the demo lines of the banner')
  jwt = await login(server, 'owner@demo.localhost', /password \(shown once\): (\S+)/.exec(server.output())![1])
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
})
test.after(async () => {
  await browser?.close()
  await server?.stop()
})

/** What the page shows for one model, read from the DOM (no named function inside: tsx would wrap it in a helper the page lacks). */
async function readRecord(page: Page, id: string) {
  const card = page.locator(`article.record[data-model="${id}"]`)
  const text = (selector: string) => card.locator(selector).first().textContent()
  const attribute = (selector: string, name: string) => card.locator(selector).first().getAttribute(name)
  const points = async (cls: string) => ((await attribute(`svg.chart polyline.${cls}`, 'points')) ?? '').trim().split(/\s+/).filter(Boolean)
  const equity = await points('equity')
  const rows = await card.locator('table.closed tr').all()
  return {
    name: await text('h3'),
    since: await text('.since time'),
    total_return: await text('[data-metric="total_return"]'),
    sharpe: await text('[data-metric="sharpe"]'),
    max_drawdown: await text('[data-metric="max_drawdown"]'),
    equityPoints: equity.length,
    benchmarkPoints: (await points('benchmark')).length,
    finite: equity.every((p) => /^-?\d+(\.\d+)?,-?\d+(\.\d+)?$/.test(p)),
    hashTitle: await attribute('code.hash', 'title'),
    hashText: await text('code.hash'),
    count: await attribute('[data-count]', 'data-count'),
    closed: await Promise.all(rows.map((tr) => tr.locator('td').allTextContents())),
  }
}

async function checkPage(page: Page): Promise<number> {
  const api = client(server)
  const models = (await api('GET', '/api/v1/public/models')).json
  assert.is(models.length, 3)
  assert.match((await page.textContent('#track-title'))!, /^Track record$/)
  assert.match((await page.textContent('#track-synthetic'))!, /synthetic demo prices/)
  let checked = 0
  for (const model of models) {
    const perf = (await api('GET', `/api/v1/models/${model.id}/performance`, { token: jwt })).json
    const shown = await readRecord(page, model.id)
    assert.is(shown.name, `${model.name}v${model.version}`)
    assert.is(shown.since, perf.from)
    assert.ok(perf.metrics.total_return !== null && perf.metrics.sharpe !== null && perf.metrics.max_drawdown !== null, model.id)
    assert.is(shown.total_return, pct(perf.metrics.total_return))
    assert.is(shown.sharpe, two(perf.metrics.sharpe))
    assert.is(shown.max_drawdown, pct(perf.metrics.max_drawdown))
    assert.ok(perf.equity.length > 100, `${model.id}: ${perf.equity.length} points`)
    assert.is(shown.equityPoints, perf.equity.length)
    assert.is(shown.benchmarkPoints, perf.equity.length)
    assert.ok(shown.finite)
    assert.is(shown.hashTitle, model.signal_chain.head_hash)
    assert.is(shown.hashText, `${model.signal_chain.head_hash.slice(0, 12)}\u2026`)
    assert.is(Number(shown.count), model.signal_chain.count)
    const closed = perf.positions.filter((p: any) => p.exit_date !== null)
    assert.ok(closed.length > 0, `${model.id} closed positions`)
    assert.equal(
      shown.closed,
      closed
        .slice(-5)
        .reverse()
        .map((p: any) => [p.pair, `${p.entry_date} \u2192 ${p.exit_date}`, pct(p.return)]),
    )
    checked++
  }
  return checked
}

test('in Chromium: every model shows its return, Sharpe, drawdown, chart, chain head and closed positions, as the API has them', async () => {
  const page = await browser.newPage()
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(e.message))
  try {
    await page.goto(`${server.url}/`)
    await page.waitForFunction(() => Number(document.body.dataset.refreshes) >= 1)
    assert.is(await checkPage(page), 3)
    assert.is(await page.locator('svg.chart').count(), 3)
    assert.equal(problems, [], 'no script error and no CSP violation')
  } finally {
    await page.close()
  }
})

test('in Chromium with JavaScript off: the track record is all there', async () => {
  const context = await browser.newContext({ javaScriptEnabled: false })
  try {
    const page = await context.newPage()
    await page.goto(`${server.url}/`)
    assert.is(await checkPage(page), 3)
  } finally {
    await context.close()
  }
})

test.run()
