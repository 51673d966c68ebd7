// The Alerts view in real Chromium against a real server: a hook made by clicking (name, mode, model,
// maximum age, TradingView's addresses) is shown once with its URL, its secret and a TradingView
// message ready to paste, each with a copy button, and is what the API lists; the API's refusals
// (a bad address, LIVE without a venue) are shown with the field marked; a hook's alerts (rows written
// with plain SQL, as the receiver records them) are listed; revoking asks first; a viewer has no
// Alerts view; axe-core and 390x844.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Browser, Page } from 'playwright-core'
import { cli, client, login, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { withDb } from '../trading/market.ts'
import { axeViolations, cells, fmt, launchChromium, openView, signIn, watchedPage, type WatchedPage } from './fixture.ts'

const test = suite('console: alerts')
const VIEWER = { email: 'viewer@acme.test', password: 'viewer-password-alerts-1' }
const TRADINGVIEW = ['52.89.214.238', '34.212.75.30', '54.218.53.128', '52.32.178.7']
let server: Server
let acme: TenantFixture
let browser: Browser
let w: WatchedPage
let page: Page

const call = (method: string, path: string, body?: unknown, token = acme.jwt) => client(server)(method, path, { token, body })
const hooks = async () => {
  const res = await call('GET', '/api/v1/alert-hooks')
  assert.is(res.status, 200, res.text)
  return res.json
}

test.before(async () => {
  server = await startServer({ args: ['--quiet'] })
  acme = await tenantFixture(server, 'acme')
  const made = await cli(['user', 'create', VIEWER.email, '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: VIEWER.password,
  })
  assert.is(made.code, 0, made.stderr)
  browser = await launchChromium()
  w = await watchedPage(browser, { permissions: ['clipboard-read', 'clipboard-write'] })
  page = w.page
  await signIn(page, server, acme.ownerEmail, acme.password)
})
test.after(async () => {
  await w?.close()
  await browser?.close()
  await server?.stop()
})

test("the API's refusals are shown next to the form, the field they name marked", async () => {
  await openView(page, 'alerts')
  assert.equal(await cells(page, '#alerts-hooks-table'), [])
  await page.getByLabel('Name').fill('too early')
  await page.getByLabel('Source addresses (optional)').fill('10.0.0.1, tradingview')
  await page.getByRole('button', { name: 'Create alert hook' }).click()
  const bad = await call('POST', '/api/v1/alert-hooks', { name: 'too early', mode: 'PAPER', max_age_seconds: 60, source_cidrs: ['10.0.0.1', 'tradingview'] })
  assert.is(bad.status, 400)
  await page.waitForFunction((detail) => document.getElementById('alerts-error')?.textContent === detail, bad.json.detail)
  assert.is(await page.getAttribute('#alerts-cidrs', 'aria-invalid'), 'true')

  await page.getByLabel('Source addresses (optional)').fill('')
  await page.getByLabel('Mode', { exact: true }).selectOption('LIVE')
  await page.getByRole('button', { name: 'Create alert hook' }).click()
  const live = await call('POST', '/api/v1/alert-hooks', { name: 'too early', mode: 'LIVE' })
  assert.is(live.status, 409)
  await page.waitForFunction((detail) => document.getElementById('alerts-error')?.textContent === detail, live.json.detail)
  assert.equal(await hooks(), [])
  assert.equal(w.problems, [])
})

test('a hook by clicking: URL, secret and the TradingView message shown once with copy buttons; listed as the API lists it; gone after a reload', async () => {
  await page.reload()
  await page.waitForSelector('main[data-ready="alerts"]')
  await page.getByLabel('Name').fill('tv btc 4h')
  await page.getByLabel('Model (optional)').selectOption('trend-follower')
  await page.getByLabel('Maximum age (seconds)').fill('120')
  await page.getByRole('button', { name: "Use TradingView's addresses" }).click()
  assert.is(await page.inputValue('#alerts-cidrs'), TRADINGVIEW.join(', '))
  await page.getByRole('button', { name: 'Create alert hook' }).click()
  await page.waitForSelector('#alerts-secret')
  const secret = await page.inputValue('#alerts-secret')
  assert.match(secret, /^[0-9a-f]{64}$/)
  const [made] = await hooks()
  assert.equal(
    { name: made.name, mode: made.mode, model_id: made.model_id, max_age_seconds: made.max_age_seconds, source_cidrs: made.source_cidrs },
    { name: 'tv btc 4h', mode: 'PAPER', model_id: 'trend-follower', max_age_seconds: 120, source_cidrs: TRADINGVIEW },
  )
  assert.is(made.url, `${new URL(server.url).origin}/hooks/alerts/${made.id}`)
  assert.is(await page.inputValue('#alerts-url'), made.url)
  const message = await page.inputValue('#alerts-message')
  assert.is(
    message,
    `{"secret":"${secret}","id":"{{strategy.order.id}}-{{timenow}}","pair":"{{ticker}}","side":"{{strategy.order.action}}","quantity":{{strategy.order.contracts}},"timestamp":"{{timenow}}"}`,
  )
  // Filled in as TradingView fills it, the message is JSON with what the receiver reads.
  const filled = JSON.parse(
    message
      .replaceAll('{{strategy.order.id}}', 'Long')
      .replaceAll('{{timenow}}', '2026-11-27T10:00:05Z')
      .replaceAll('{{ticker}}', 'BTCUSDT')
      .replaceAll('{{strategy.order.action}}', 'buy')
      .replaceAll('{{strategy.order.contracts}}', '0.015'),
  )
  assert.equal(filled, { secret, id: 'Long-2026-11-27T10:00:05Z', pair: 'BTCUSDT', side: 'buy', quantity: 0.015, timestamp: '2026-11-27T10:00:05Z' })
  assert.is(
    await page.textContent('#alerts-once-warning'),
    'Copy the secret now: it will not be shown again. It is stored encrypted; every message must carry it.',
  )
  for (const [id, label, value] of [
    ['alerts-url', 'webhook URL', made.url],
    ['alerts-secret', 'secret', secret],
    ['alerts-message', 'TradingView message', message],
  ]) {
    await page.getByRole('button', { name: `Copy the ${label}` }).click()
    await page.waitForSelector(`#${id}-copied:text("The ${label} is copied to the clipboard.")`)
    assert.is(await page.evaluate(() => navigator.clipboard.readText()), value)
  }
  await page.waitForSelector('#alerts-hooks-table[data-rows="1"]')
  assert.equal(await cells(page, '#alerts-hooks-table'), [
    ['tv btc 4h', made.url, 'PAPER', 'trend-follower', '120 s', TRADINGVIEW.join(', '), '0', 'active', 'Show alerts', 'Revoke'],
  ])
  assert.equal(await axeViolations(page), [], 'the secret shown once')
  await page.reload()
  await page.waitForSelector('main[data-ready="alerts"]')
  assert.is(await page.locator('#alerts-secret').count(), 0)
  assert.not.ok((await page.content()).includes(secret), 'not on the page after a reload')
  assert.equal(w.problems, [])
})

test("a hook's alerts: what arrived, newest first, with outcome, code, reason and message", async () => {
  const [hook] = await hooks()
  const tenantId = (await call('GET', '/api/v1/auth/session')).json.tenant_id
  const rows = [
    ['alr_01M8A000000000000000000001', '2026-11-27T10:00:05.300Z', 'o-1', 'ACCEPTED', null, null, '{"id":"o-1","pair":"BTCUSDT","side":"buy"}'],
    ['alr_01M8A000000000000000000002', '2026-11-27T11:00:00.000Z', 'o-2', 'REFUSED', 'alert_stale', 'timestamp: older than 120 s', '{"id":"o-2"}'],
  ]
  await withDb(
    server,
    async (db) => {
      for (const [id, at, alertId, outcome, code, reason, message] of rows)
        await db.run(
          'INSERT INTO alerts (id, hook_id, tenant_id, alert_id, received_at, outcome, code, reason, order_id, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)',
          [id, hook.id, tenantId, alertId, at, outcome, code, reason, message],
        )
    },
    false,
  )
  await openView(page, 'alerts')
  await page.getByRole('button', { name: `Show alerts of ${hook.name}` }).click()
  await page.waitForSelector('#alerts-log-table[data-rows="2"]')
  assert.is(await page.textContent('#alerts-log-title'), `Alerts of “${hook.name}”`)
  const log = (await call('GET', `/api/v1/alert-hooks/${hook.id}/alerts`)).json
  assert.equal(
    await cells(page, '#alerts-log-table'),
    log.map((a: any) => [fmt.when(a.received_at), a.alert_id, a.outcome, a.code ?? '', a.reason ?? '', '\u2014', a.message]),
  )
  assert.equal(
    log.map((a: any) => a.id),
    [rows[1][0], rows[0][0]],
  )
  assert.equal(w.problems, [])
})

test('revoking asks first; backing out revokes nothing; confirmed, the hook is revoked and the row says so', async () => {
  await openView(page, 'alerts')
  const [hook] = await hooks()
  const revoke = page.getByRole('button', { name: `Revoke ${hook.name}` })
  await revoke.click()
  await page.getByRole('dialog').waitFor()
  assert.is(await page.textContent('#confirm-title'), `Revoke “${hook.name}”?`)
  await page.getByRole('button', { name: 'Cancel', exact: true }).click()
  await page.locator('dialog').waitFor({ state: 'detached' })
  assert.is((await hooks())[0].revoked_at, null, 'backing out revokes nothing')
  await revoke.click()
  await page.getByRole('button', { name: 'Revoke', exact: true }).click()
  await page.waitForSelector('#alerts-notice:not(:empty)')
  const [revoked] = await hooks()
  assert.ok(revoked.revoked_at)
  assert.is(await page.textContent('#alerts-notice'), `Alert hook “${hook.name}” revoked at ${fmt.when(revoked.revoked_at)}.`)
  const [row] = await cells(page, '#alerts-hooks-table')
  assert.equal(row.slice(7), [`revoked ${fmt.when(revoked.revoked_at)}`, 'Show alerts', ''])
  assert.equal(w.problems, [])
})

test('a viewer has no Alerts view: not in the navigation, not by its address', async () => {
  const viewer = await watchedPage(browser)
  try {
    await signIn(viewer.page, server, VIEWER.email, VIEWER.password)
    assert.is(await viewer.page.locator('nav a[data-view="alerts"]').count(), 0)
    await viewer.page.goto(`${server.url}/console#/alerts`)
    await viewer.page.waitForSelector('main[data-ready="overview"]')
    assert.is(await viewer.page.evaluate(() => location.hash), '#/overview')
    const viewerJwt = await login(server, VIEWER.email, VIEWER.password)
    assert.is((await call('GET', '/api/v1/alert-hooks', undefined, viewerJwt)).status, 403)
    assert.equal(viewer.problems, [])
  } finally {
    await viewer.close()
  }
})

test('at 390x844 with a hook and its alerts open: no horizontal scroll, no serious or critical axe-core violation', async () => {
  const phone = await watchedPage(browser, { viewport: { width: 390, height: 844 } })
  try {
    await signIn(phone.page, server, acme.ownerEmail, acme.password)
    await openView(phone.page, 'alerts')
    const [hook] = await hooks()
    await phone.page.getByRole('button', { name: `Show alerts of ${hook.name}` }).click()
    await phone.page.waitForSelector('#alerts-log-table')
    const width = await phone.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }))
    assert.ok(width.scroll <= width.client, `scrollWidth ${width.scroll} > ${width.client}`)
    assert.equal(await axeViolations(phone.page), [])
    assert.equal(phone.problems, [])
  } finally {
    await phone.close()
  }
})

test.run()
