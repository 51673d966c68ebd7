// "Track records & backtests" and "API keys" in real Chromium against `serve --demo`: each active
// model's forward figures, chart and chain head as the API has them (the chain head from the
// export when the public feed is off); a backtest run by clicking, its status followed to its
// result, listed and opened again; the API's refusals shown; a viewer runs one too but has no API
// keys view; a key created by clicking shown once, working with its scope, gone after a reload,
// refused after it is revoked. Phone size and axe-core on both views.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Page } from 'playwright-core'
import { client, login, startServer } from '../support/harness.ts'
import { eventually } from '../signals/fixtures.ts'
import { axeViolations, cells, consoleFixture, fmt, openView, signIn, VIEWER, watchedPage, type ConsoleFixture, type WatchedPage } from './fixture.ts'

const test = suite('console: track records, backtests and API keys')
let f: ConsoleFixture
let w: WatchedPage
let page: Page
const get = async (path: string, token = f.owner.jwt) => {
  const res = await client(f.server)('GET', path, { token })
  assert.is(res.status, 200, res.text)
  return res.json
}

// The oracle's formatting: fractions as percentages, ratios with two decimals.
const pct = (x: number | null, sign = false) => (x === null ? '\u2014' : `${sign && x > 0 ? '+' : ''}${(x * 100).toFixed(2)}%`)
const ratio = (x: number | null) => (x === null ? '\u2014' : x.toFixed(2))
const figureTexts = (m: any) => [
  pct(m.total_return, true),
  pct(m.cagr, true),
  ratio(m.sharpe),
  ratio(m.sortino),
  pct(m.max_drawdown),
  pct(m.win_rate),
  String(m.trades),
  pct(m.exposure),
  pct(m.benchmark.total_return, true),
]
const shownFigures = (p: Page, id: string) => p.locator(`#${id} .figure dd`).allTextContents()

test.before(async () => {
  f = await consoleFixture()
  w = await watchedPage(f.browser, { permissions: ['clipboard-read', 'clipboard-write'] })
  page = w.page
  await signIn(page, f.server, f.owner.email, f.owner.password)
})
test.after(async () => {
  await w?.close()
  await f?.stop()
})

test('track records: each active model with its performance figures, equity against buy-and-hold, and chain head', async () => {
  await openView(page, 'models')
  const [workspace, heads] = await Promise.all([get('/api/v1/workspace'), get('/api/v1/public/models')])
  assert.is(workspace.active_model_ids.length, 3)
  for (const id of workspace.active_model_ids) {
    const perf = await get(`/api/v1/models/${id}/performance`)
    assert.ok(perf.equity.length > 100, `${id}: ${perf.equity.length} days`)
    assert.equal(await shownFigures(page, `figures-${id}`), figureTexts(perf.metrics), id)
    await page.waitForSelector(`#equity-${id}[data-drawn="true"] canvas`)
    assert.is(await page.getAttribute(`#equity-${id}`, 'data-points'), String(perf.equity.length))
    const last = perf.equity.at(-1)
    assert.match((await page.textContent(`#equity-${id} figcaption`))!, `; last ${last.equity.toFixed(4)} against ${last.benchmark.toFixed(4)}.`)
    const head = heads.find((m: any) => m.id === id).signal_chain
    assert.is(await page.getAttribute(`#chain-${id}`, 'data-head'), head.head_hash)
    assert.is(
      await page.textContent(`#chain-${id}`),
      `Signal chain: ${head.count} signals, head ${fmt.hash(head.head_hash)} as of ${head.as_of} (from GET /api/v1/public/models).`,
    )
  }
})

test('a backtest by clicking: parameters prefilled, QUEUED then followed to SUCCEEDED, the result as the API has it', async () => {
  await openView(page, 'models')
  const models = await get('/api/v1/models')
  const profile = await get('/api/v1/risk/profile')
  await page.getByLabel('Model', { exact: true }).selectOption('trend-follower')
  const trend = models.find((m: any) => m.id === 'trend-follower')
  for (const [name, value] of Object.entries(trend.parameters)) assert.is(await page.inputValue(`#bt-param-${name}`), String(value), name)
  assert.is(await page.inputValue('#bt-fee'), String(profile.fee_bps))
  await page.getByLabel('Model', { exact: true }).selectOption('mean-reversion')
  const reversion = models.find((m: any) => m.id === 'mean-reversion')
  assert.equal(
    await page.locator('#bt-parameters input').evaluateAll((inputs) => inputs.map((i: any) => i.id)),
    Object.keys(reversion.parameters).map((n) => `bt-param-${n}`),
  )
  await page.getByLabel('entry_z').fill('-1')
  await page.getByLabel('Fee (bps)').fill('20')
  // Every status the panel draws, in order, from the click on.
  await page.evaluate(() => {
    const seen: string[] = []
    ;(window as any).seenStatuses = seen
    const status = document.getElementById('backtest-status')!
    new MutationObserver(() => {
      if (seen.at(-1) !== status.dataset.status) seen.push(status.dataset.status!)
    }).observe(status, { attributes: true, attributeFilter: ['data-status'] })
  })
  await page.getByRole('button', { name: 'Run backtest' }).click()
  await page.waitForSelector('#backtest-status[data-status="SUCCEEDED"]')
  const seen: string[] = await page.evaluate(() => (window as any).seenStatuses)
  assert.is(seen[0], 'QUEUED', seen.join(' '))
  assert.is(seen.at(-1), 'SUCCEEDED')
  const id = (await page.getAttribute('#backtest-result', 'data-id'))!
  const b = await get(`/api/v1/backtests/${id}`)
  assert.is(b.model_id, 'mean-reversion')
  assert.equal(b.parameters, { ...reversion.parameters, entry_z: -1 })
  assert.is(b.fee_bps, 20)
  assert.is(b.slippage_bps, profile.slippage_bps)
  assert.is(await page.textContent('#backtest-status'), `Backtest ${id} SUCCEEDED at ${fmt.when(b.finished_at)}.`)
  assert.equal(await shownFigures(page, 'backtest-figures'), figureTexts(b.metrics))
  assert.ok(b.trades.length > 0, 'some trades to show')
  assert.equal(
    await cells(page, '#backtest-trades'),
    b.trades.map((t: any) => [t.pair, t.entry_date, fmt.amount(t.entry_price), t.exit_date ?? 'open', fmt.amount(t.exit_price), pct(t.return, true)]),
  )
  assert.is(await page.textContent('#result-hash'), b.result_hash)
  await page.waitForSelector('#backtest-equity[data-drawn="true"] canvas')
  await page.waitForSelector('#backtest-drawdown[data-drawn="true"] canvas')
  assert.is(await page.getAttribute('#backtest-drawdown', 'data-points'), String(b.equity.length))
  const deepest = Math.min(0, ...b.equity.map((p: any) => p.drawdown))
  assert.match((await page.textContent('#backtest-drawdown figcaption'))!, `deepest ${pct(deepest)}.`)

  // The list of earlier backtests, then an earlier one opened from it.
  await page.waitForSelector('#backtests-table tbody tr:first-child td:nth-child(8):text-is("SUCCEEDED")')
  const list = await get('/api/v1/backtests?limit=20')
  assert.is(list[0].id, id)
  assert.equal(
    (await cells(page, '#backtests-table')).map((row) => row.slice(0, 8)),
    list.map((x: any) => [fmt.when(x.created_at), x.id, x.model_id, x.from, x.to, String(x.fee_bps), String(x.slippage_bps), x.status]),
  )
  await page.getByLabel('Fee (bps)').fill('0')
  await page.getByRole('button', { name: 'Run backtest' }).click()
  await page.waitForSelector('#backtests-table[data-rows="2"]')
  await page.waitForSelector('#backtest-status[data-status="SUCCEEDED"]')
  assert.is.not(await page.getAttribute('#backtest-result', 'data-id'), id)
  await page.getByRole('button', { name: `Open ${id}` }).click()
  await page.waitForSelector(`#backtest-result[data-id="${id}"]`)
  assert.is(await page.textContent('#result-hash'), b.result_hash)
  assert.equal(w.problems, [])
})

test("the API's refusals are shown with their detail: parameters the strategy refuses, a day not closed yet", async () => {
  await openView(page, 'models')
  const api = (body: unknown) => client(f.server)('POST', '/api/v1/backtests', { token: f.owner.jwt, body })
  await page.getByLabel('Model', { exact: true }).selectOption('trend-follower')
  await page.getByLabel('fast_ema').fill('60')
  await page.getByRole('button', { name: 'Run backtest' }).click()
  await page.waitForFunction(() => document.getElementById('bt-error')?.textContent !== '')
  const from = await page.inputValue('#bt-from')
  const to = await page.inputValue('#bt-to')
  const refused = await api({ model_id: 'trend-follower', from, to, parameters: { fast_ema: 60 } })
  assert.is(refused.status, 422)
  assert.is(await page.textContent('#bt-error'), refused.json.detail)

  await page.getByLabel('fast_ema').fill('20')
  const today = new Date().toISOString().slice(0, 10)
  await page.getByLabel('To', { exact: true }).fill(today)
  await page.getByRole('button', { name: 'Run backtest' }).click()
  const tooLate = await api({ model_id: 'trend-follower', from, to: today })
  assert.is(tooLate.status, 400)
  await page.waitForFunction((detail) => document.getElementById('bt-error')?.textContent === detail, tooLate.json.detail)
})

test('a viewer runs a backtest too, and has no API keys view (not in the navigation, not by its address)', async () => {
  const viewer = await watchedPage(f.browser)
  try {
    await signIn(viewer.page, f.server, VIEWER.email, VIEWER.password)
    assert.is(await viewer.page.locator('nav a[data-view="api-keys"]').count(), 0)
    await viewer.page.goto(`${f.server.url}/console#/api-keys`)
    await viewer.page.waitForSelector('main[data-ready="overview"]')
    assert.is(await viewer.page.evaluate(() => location.hash), '#/overview')
    await openView(viewer.page, 'models')
    await viewer.page.getByRole('button', { name: 'Run backtest' }).click()
    await viewer.page.waitForSelector('#backtest-status[data-status="SUCCEEDED"]')
    const id = (await viewer.page.getAttribute('#backtest-result', 'data-id'))!
    assert.is((await get(`/api/v1/backtests/${id}`, f.viewerJwt)).status, 'SUCCEEDED')
    assert.equal(viewer.problems, [])
  } finally {
    await viewer.close()
  }
})

test('API keys: created by clicking, shown once with a copy button, works with its scope, gone after a reload, revoked after a confirmation', async () => {
  await openView(page, 'api-keys')
  // Refusals first: no scope, an expiry in the past.
  await page.getByLabel('Name').fill('console test key')
  await page.getByRole('button', { name: 'Create key' }).click()
  const noScope = await client(f.server)('POST', '/api/v1/auth/api-tokens', { token: f.owner.jwt, body: { name: 'console test key', scopes: [] } })
  assert.is(noScope.status, 400)
  await page.waitForFunction((detail) => document.getElementById('key-error')?.textContent === detail, noScope.json.detail)
  await page.getByLabel('signals:read').check()
  await page.getByLabel('Expires (optional)').fill('2020-01-01')
  await page.getByRole('button', { name: 'Create key' }).click()
  const past = await client(f.server)('POST', '/api/v1/auth/api-tokens', {
    token: f.owner.jwt,
    body: { name: 'console test key', scopes: ['signals:read'], expires_at: '2020-01-01T00:00:00Z' },
  })
  assert.is(past.status, 400)
  await page.waitForFunction((detail) => document.getElementById('key-error')?.textContent === detail, past.json.detail)
  const before = (await get('/api/v1/auth/api-tokens')).length

  await page.getByLabel('Expires (optional)').fill('')
  await page.getByRole('button', { name: 'Create key' }).click()
  await page.waitForSelector('#new-key')
  const key = await page.inputValue('#new-key')
  assert.match(key, /^sk_live_[0-9A-Za-z]{38}$/)
  assert.is(await page.textContent('#new-key-warning'), 'Copy this key now: it will not be shown again. Only its SHA-256 is stored.')
  await page.getByRole('button', { name: 'Copy' }).click()
  await page.waitForSelector('#copy-result:text("Copied to the clipboard.")')
  assert.is(await page.evaluate(() => navigator.clipboard.readText()), key)

  const keys = await get('/api/v1/auth/api-tokens')
  assert.is(keys.length, before + 1)
  const made = keys[0]
  assert.is(made.name, 'console test key')
  assert.equal(made.scopes, ['signals:read'])
  assert.ok(key.startsWith(made.prefix))
  await page.waitForSelector(`#keys-table[data-rows="${keys.length}"]`)
  assert.equal((await cells(page, '#keys-table'))[0].slice(0, 7), [
    made.name,
    made.prefix,
    'signals:read',
    fmt.when(made.created_at),
    'never',
    'never',
    'active',
  ])
  const signals = await client(f.server)('GET', '/api/v1/signals?limit=1', { token: key })
  assert.is(signals.status, 200, signals.text)
  assert.is((await client(f.server)('GET', '/api/v1/orders?limit=1', { token: key })).status, 403, 'only its scope')
  assert.equal(await axeViolations(page), [], 'the key shown once')

  await page.reload()
  await page.waitForSelector('main[data-ready="api-keys"]')
  assert.is(await page.locator('#new-key').count(), 0)
  assert.not.ok((await page.content()).includes(key), 'the key is not on the page after a reload')

  const revoke = page.getByRole('button', { name: `Revoke ${made.name}` })
  await revoke.click()
  await page.getByRole('dialog').waitFor()
  assert.is(await page.textContent('#confirm-title'), `Revoke “${made.name}”?`)
  await page.getByRole('button', { name: 'Cancel', exact: true }).click()
  await page.locator('dialog').waitFor({ state: 'detached' })
  assert.is((await client(f.server)('GET', '/api/v1/signals?limit=1', { token: key })).status, 200, 'backing out revokes nothing')
  await revoke.click()
  await page.getByRole('button', { name: 'Revoke', exact: true }).click()
  await page.waitForSelector('#keys-notice:not(:empty)')
  const revoked = (await get('/api/v1/auth/api-tokens'))[0]
  assert.ok(revoked.revoked_at)
  assert.is(await page.textContent('#keys-notice'), `Key “${made.name}” (${made.prefix}…) revoked at ${fmt.when(revoked.revoked_at)}.`)
  assert.is((await cells(page, '#keys-table'))[0][6], `revoked ${fmt.when(revoked.revoked_at)}`)
  assert.is((await client(f.server)('GET', '/api/v1/signals?limit=1', { token: key })).status, 401)
  assert.equal(w.problems, [])
})

test('both views at 390x844: no horizontal scroll, no serious or critical axe-core violation, nothing off 127.0.0.1', async () => {
  const phone = await watchedPage(f.browser, { viewport: { width: 390, height: 844 } })
  try {
    await signIn(phone.page, f.server, f.owner.email, f.owner.password)
    for (const id of ['models', 'api-keys']) {
      await openView(phone.page, id)
      if (id === 'models') {
        await phone.page.getByRole('button', { name: 'Run backtest' }).click()
        await phone.page.waitForSelector('#backtest-drawdown[data-drawn="true"]')
      }
      const width = await phone.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }))
      assert.ok(width.scroll <= width.client, `${id}: scrollWidth ${width.scroll} > ${width.client}`)
      assert.equal(await axeViolations(phone.page), [], id)
    }
    assert.equal(phone.problems, [])
  } finally {
    await phone.close()
  }
})

test('with the public feed off, each chain head comes from the export of the model', async () => {
  const server = await startServer({ args: ['--demo', '--quiet', '--no-public-feed'] })
  const other = await watchedPage(f.browser)
  try {
    await eventually(() => (/Demo: +published/.test(server.output()) ? true : undefined), 'the demo lines of the banner')
    const password = /password \(shown once\): (\S+)/.exec(server.output())![1]
    const jwt = await login(server, 'owner@demo.localhost', password)
    assert.is((await client(server)('GET', '/api/v1/public/models')).status, 404)
    await signIn(other.page, server, 'owner@demo.localhost', password)
    await openView(other.page, 'models')
    for (const id of ['trend-follower', 'mean-reversion', 'breakout-momentum']) {
      const head = (await client(server)('GET', `/api/v1/signals/export?model_id=${id}`, { token: jwt })).json.signal_chain
      assert.ok(head.count > 0)
      assert.is(
        await other.page.textContent(`#chain-${id}`),
        `Signal chain: ${head.count} signals, head ${fmt.hash(head.head_hash)} as of ${head.as_of} (from the model's export: the public feed is off).`,
      )
    }
    assert.equal(other.problems, [])
  } finally {
    await other.close()
    await server.stop()
  }
})

test.run()
