// The public feed: GET /api/v1/public/signals and the page at /, without a credential; the page in
// real headless Chromium (rows shown, a publish seen by the page's own refresh, the filter, no
// CSP violation, and the rows readable with JavaScript off); --no-public-feed turns both off.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chromium, type Browser } from 'playwright-core'
import { cli, client, startServer, tempDir, type Server } from '../support/harness.ts'
import { ALL_PAIRS, DIRECTION, EXPECTED, day, importSeries } from './fixtures.ts'

const test = suite('signals: the public feed and its page')
let server: Server
let off: Server
let browser: Browser
const FIRST = day(-3) // as_of of the first publish
const SECOND = day(-2) // as_of of the publish the open page must pick up

const MODELS = [
  { id: 'trend-follower', name: 'Trend Follower', schedule: '00:05' },
  { id: 'mean-reversion', name: 'Mean Reversion', schedule: '00:10' },
  { id: 'breakout-momentum', name: 'Breakout Momentum', schedule: '00:15' },
]
const UNIVERSE: Record<string, string[]> = {
  'trend-follower': ['BTC/USDT', 'ETH/USDT', 'SOL/USDT', 'BNB/USDT', 'XRP/USDT'],
  'mean-reversion': ['ADA/USDT', 'DOGE/USDT', 'AVAX/USDT', 'LINK/USDT', 'DOT/USDT'],
  'breakout-momentum': ['BTC/USDT', 'ETH/USDT', 'SOL/USDT', 'LTC/USDT', 'TRX/USDT'],
}

function expectedFeed(asOf: string) {
  return MODELS.flatMap((m) =>
    UNIVERSE[m.id].map((pair) => ({
      pair,
      direction: DIRECTION[EXPECTED[m.id][pair]],
      model: m.name,
      model_version: '1.0.0',
      schedule_utc: m.schedule,
      mode: 'PAPER',
      as_of: asOf,
    })),
  )
}

test.before(async () => {
  const dataDir = tempDir()
  await importSeries(dataDir, ALL_PAIRS, FIRST)
  const published = await cli(['publish', '--date', day(-2)], { dataDir })
  assert.is(published.code, 0, published.stderr)
  server = await startServer({ dataDir, args: ['--quiet'] })
  off = await startServer({ args: ['--quiet', '--no-public-feed'] })
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
})
test.after(async () => {
  await browser?.close()
  await server?.stop()
  await off?.stop()
})

test('GET /api/v1/public/signals: no credential, the current row of every model and pair, exactly these fields', async () => {
  const res = await client(server)('GET', '/api/v1/public/signals')
  assert.is(res.status, 200)
  assert.match(res.headers.get('content-type')!, /^application\/json/)
  assert.equal(res.json, expectedFeed(FIRST))
})

test('the feed is read-only and takes no unknown query parameters', async () => {
  const api = client(server)
  const post = await api('POST', '/api/v1/public/signals', { body: {} })
  assert.is(post.status, 405)
  assert.match(post.headers.get('allow')!, /GET/)
  const odd = await api('GET', '/api/v1/public/signals?tenant=acme')
  assert.is(odd.status, 400)
  assert.is((await api('GET', '/?refresh=0')).status, 400)
  assert.is((await api('HEAD', '/')).status, 200)
})

test('an older date published later does not replace the current rows', async () => {
  const res = await cli(['publish', '--date', day(-10)], { dataDir: server.dataDir })
  assert.is(res.code, 0, res.stderr)
  assert.match(res.stdout, /15|5 signals written/)
  const feed = await client(server)('GET', '/api/v1/public/signals')
  assert.ok(feed.json.every((r: any) => r.as_of === FIRST))
})

test('GET / is a page with the rows already in it, a strict CSP and no synthetic banner', async () => {
  const res = await client(server)('GET', '/')
  assert.is(res.status, 200)
  assert.match(res.headers.get('content-type')!, /^text\/html; charset=utf-8/)
  const csp = res.headers.get('content-security-policy')!
  assert.match(csp, /default-src 'none'/)
  assert.match(csp, /script-src 'sha256-[A-Za-z0-9+/=]+'/)
  assert.not.match(csp, /unsafe-inline/)
  assert.is((res.text.match(/<td class="pair">/g) ?? []).length, 15)
  assert.match(
    res.text,
    /<td class="pair">DOGE\/USDT<\/td><td><span class="dir dir-DE-RISK">DE-RISK<\/span><\/td><td>Mean Reversion<span class="version">v1.0.0<\/span><\/td><td class="num">00:10<\/td><td><span class="mode">PAPER<\/span><\/td><td class="date">/,
  )
  assert.not.match(res.text, /synthetic/i)
  assert.not.match(res.text, /\{\{/)
})

test('in Chromium: the rows are shown, a new publish is picked up by the page on its own, the filter narrows', async () => {
  const page = await browser.newPage()
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(e.message))
  try {
    await page.goto(`${server.url}/?refresh=1`)
    await page.waitForFunction(() => Number(document.body.dataset.refreshes) >= 1)
    const rows = await page.$$eval('#rows tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)))
    assert.is(rows.length, 15)
    assert.equal(rows[0], ['BTC/USDT', 'LONG', 'Trend Followerv1.0.0', '00:05', 'PAPER', FIRST])
    assert.equal(await page.$$eval('thead th', (ths) => ths.map((th) => th.textContent)), ['Pair', 'Direction', 'Model', 'Schedule (UTC)', 'Mode', 'As of'])
    assert.is(await page.textContent('#count'), '15 signals · 3 models')

    // A new day is published while the page is open: its own refresh shows it, no reload.
    const seen = await page.evaluate(() => Number(document.body.dataset.refreshes))
    await importSeries(server.dataDir, ALL_PAIRS, SECOND)
    const res = await cli(['publish', '--date', day(-1)], { dataDir: server.dataDir })
    assert.is(res.code, 0, res.stderr)
    await page.waitForFunction((asOf) => [...document.querySelectorAll('#rows td.date')].every((td) => td.textContent === asOf), SECOND, { timeout: 20_000 })
    assert.ok(await page.evaluate((n) => Number(document.body.dataset.refreshes) > n, seen))
    assert.match((await page.textContent('#updated'))!, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/)

    await page.fill('#filter', 'de-risk')
    const directions = await page.$$eval('#rows .dir', (spans) => spans.map((s) => s.textContent))
    assert.equal(directions, Array(5).fill('DE-RISK'))
    assert.is(await page.textContent('#count'), '5 of 15 signals · 3 models')
    assert.equal(problems, [], 'no script error and no CSP violation')
  } finally {
    await page.close()
  }
})

test('in Chromium with JavaScript off: the rows are still there', async () => {
  const context = await browser.newContext({ javaScriptEnabled: false })
  try {
    const page = await context.newPage()
    await page.goto(`${server.url}/`)
    assert.is(await page.locator('#rows tr').count(), 15)
    assert.is(await page.locator('#filter').isVisible(), false, 'the filter needs JavaScript, so it stays hidden')
  } finally {
    await context.close()
  }
})

test('--no-public-feed: the feed and the page answer 404; the rest of the API is unchanged', async () => {
  const api = client(off)
  for (const path of ['/api/v1/public/signals', '/']) {
    const res = await api('GET', path)
    assert.is(res.status, 404, path)
    assert.is(res.json.code, 'not_found')
    assert.match(res.headers.get('content-type')!, /application\/problem\+json/)
  }
  assert.is((await api('GET', '/api/v1/health')).status, 200)
  assert.not.match(off.output(), /Feed:/)
})

test.run()
