// The Gateway view in real Chromium against a real server and the test venue: without a Binance
// venue the view says so and shows the API's refusal; with one, a key made by clicking is shown once
// (key and secret, each with a copy button) with the URLs a bot sets, built from the page's origin,
// works with findGatewayKey, is gone after a reload and is revoked after a confirmation; a viewer
// has no Gateway view; axe-core and 390x844.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Browser, Page } from 'playwright-core'
import { findGatewayKey } from '../../src/gateway/keys.ts'
import { openStore } from '../../src/store/open-store.ts'
import { openSecretBox } from '../../src/store/secret-box.ts'
import { cli, client, databaseUrlFor, login, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { startVenue, venueKey, type Venue } from '../support/venue/index.ts'
import { axeViolations, cells, fmt, launchChromium, openView, signIn, watchedPage, type WatchedPage } from './fixture.ts'

const test = suite('console: gateway')
const VIEWER = { email: 'viewer@acme.test', password: 'viewer-password-gateway-1' }
let venue: Venue
let server: Server
let acme: TenantFixture
let browser: Browser
let w: WatchedPage
let page: Page

const call = (method: string, path: string, body?: unknown, token = acme.jwt) => client(server)(method, path, { token, body })
const keys = async () => {
  const res = await call('GET', '/api/v1/gateway/keys')
  assert.is(res.status, 200, res.text)
  return res.json
}

test.before(async () => {
  venue = await startVenue()
  server = await startServer({ args: ['--quiet', '--venue-url', venue.url, '--ca-file', venue.caFile] })
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
  await venue?.close()
})

test("without a venue: the view says a Binance venue is needed, and the API's refusal is shown", async () => {
  await openView(page, 'gateway')
  assert.match(
    (await page.textContent('#gateway-venue-note'))!,
    /^No venue is connected\. The gateway speaks Binance's API and needs a connected Binance account/,
  )
  assert.is(await page.getAttribute('#gateway-venue-note a', 'href'), '#/venue')
  const origin = new URL(server.url).origin
  assert.equal(await cells(page, '#gateway-keys-table'), [])
  assert.equal(await page.locator('#gateway-urls dd').allTextContents(), [
    `${origin}/gateway/binance/api/v3`,
    `${origin}/gateway/binance/api/v3`,
    `${origin}/gateway/binance/sapi/v1`,
  ])
  await page.getByLabel('Name').fill('too early')
  await page.getByRole('button', { name: 'Create gateway key' }).click()
  const refused = await call('POST', '/api/v1/gateway/keys', { name: 'too early' })
  assert.is(refused.status, 409)
  await page.waitForFunction((detail) => document.getElementById('gateway-key-error')?.textContent === detail, refused.json.detail)
  assert.equal(await keys(), [])
})

test('a key by clicking: key and secret shown once with copy buttons and the URLs; it works; gone after a reload', async () => {
  const key = venueKey('acme', 'acme')
  await venue.addKey({ ...key, restrictions: { enableWithdrawals: false } })
  await venue.setBalances({ USDT: 1000 }, 'acme')
  const connected = await call('PUT', '/api/v1/venue', { exchange: 'binance', api_key: key.apiKey, api_secret: key.secret })
  assert.is(connected.status, 200, connected.text)
  await page.reload()
  await page.waitForSelector('main[data-ready="gateway"]')
  assert.is(await page.locator('#gateway-venue-note').count(), 0)

  // The API's own validation first: a blank name.
  await page.getByRole('button', { name: 'Create gateway key' }).click()
  const blank = await call('POST', '/api/v1/gateway/keys', { name: '' })
  assert.is(blank.status, 400)
  await page.waitForFunction((detail) => document.getElementById('gateway-key-error')?.textContent === detail, blank.json.detail)
  assert.is(await page.getAttribute('#gateway-key-name', 'aria-invalid'), 'true')

  await page.getByLabel('Name').fill('console bot')
  await page.getByRole('button', { name: 'Create gateway key' }).click()
  await page.waitForSelector('#gateway-api-secret')
  const apiKey = await page.inputValue('#gateway-api-key')
  const apiSecret = await page.inputValue('#gateway-api-secret')
  assert.match(apiKey, /^[0-9A-Za-z]{64}$/)
  assert.match(apiSecret, /^[0-9A-Za-z]{64}$/)
  assert.is(
    await page.textContent('#gateway-once-warning'),
    'Copy the API key and the secret now: the secret will not be shown again. Only the SHA-256 of the key is stored, and the secret is stored encrypted.',
  )
  const origin = new URL(server.url).origin
  assert.equal(await page.locator('#gateway-created-urls dd').allTextContents(), [
    `${origin}/gateway/binance/api/v3`,
    `${origin}/gateway/binance/api/v3`,
    `${origin}/gateway/binance/sapi/v1`,
  ])
  await page.getByRole('button', { name: 'Copy the API key' }).click()
  await page.waitForSelector('#gateway-api-key-copied:text("The API key is copied to the clipboard.")')
  assert.is(await page.evaluate(() => navigator.clipboard.readText()), apiKey)
  await page.getByRole('button', { name: 'Copy the API secret' }).click()
  await page.waitForSelector('#gateway-api-secret-copied:text("The API secret is copied to the clipboard.")')
  assert.is(await page.evaluate(() => navigator.clipboard.readText()), apiSecret)

  const [made] = await keys()
  assert.is(made.name, 'console bot')
  assert.is(made.api_key_prefix, apiKey.slice(0, 8))
  await page.waitForSelector('#gateway-keys-table[data-rows="1"]')
  assert.equal(await cells(page, '#gateway-keys-table'), [['console bot', `${made.api_key_prefix}\u2026`, fmt.when(made.created_at), 'active', 'Revoke']])
  const store = await openStore({ dataDir: server.dataDir, databaseUrl: await databaseUrlFor(server.dataDir) })
  try {
    const found = await findGatewayKey(store.read, apiKey, openSecretBox(server.dataDir))
    assert.is(found?.id, made.id)
    assert.is(found?.secret, apiSecret, 'the secret the page showed is the one that signs')
  } finally {
    await store.close()
  }
  assert.equal(await axeViolations(page), [], 'the key shown once')

  await page.reload()
  await page.waitForSelector('main[data-ready="gateway"]')
  assert.is(await page.locator('#gateway-api-secret').count(), 0)
  const content = await page.content()
  assert.not.ok(content.includes(apiSecret) || content.includes(apiKey), 'neither on the page after a reload')
  assert.equal(w.problems, [])
})

test('revoking asks first; backing out revokes nothing; confirmed, the key is revoked and the row says so', async () => {
  await openView(page, 'gateway')
  const [made] = await keys()
  const revoke = page.getByRole('button', { name: `Revoke ${made.name}` })
  await revoke.click()
  await page.getByRole('dialog').waitFor()
  assert.is(await page.textContent('#confirm-title'), `Revoke “${made.name}”?`)
  await page.getByRole('button', { name: 'Cancel', exact: true }).click()
  await page.locator('dialog').waitFor({ state: 'detached' })
  assert.is((await keys())[0].revoked_at, null, 'backing out revokes nothing')
  await revoke.click()
  await page.getByRole('button', { name: 'Revoke', exact: true }).click()
  await page.waitForSelector('#gateway-notice:not(:empty)')
  const [revoked] = await keys()
  assert.ok(revoked.revoked_at)
  assert.is(await page.textContent('#gateway-notice'), `Gateway key “${made.name}” (${made.api_key_prefix}…) revoked at ${fmt.when(revoked.revoked_at)}.`)
  assert.equal((await cells(page, '#gateway-keys-table'))[0], [
    'console bot',
    `${made.api_key_prefix}\u2026`,
    fmt.when(made.created_at),
    `revoked ${fmt.when(revoked.revoked_at)}`,
    '',
  ])
  assert.equal(w.problems, [])
})

test('a viewer has no Gateway view: not in the navigation, not by its address', async () => {
  const viewer = await watchedPage(browser)
  try {
    await signIn(viewer.page, server, VIEWER.email, VIEWER.password)
    assert.is(await viewer.page.locator('nav a[data-view="gateway"]').count(), 0)
    await viewer.page.goto(`${server.url}/console#/gateway`)
    await viewer.page.waitForSelector('main[data-ready="overview"]')
    assert.is(await viewer.page.evaluate(() => location.hash), '#/overview')
    const viewerJwt = await login(server, VIEWER.email, VIEWER.password)
    assert.is((await call('GET', '/api/v1/gateway/keys', undefined, viewerJwt)).status, 403)
    assert.equal(viewer.problems, [])
  } finally {
    await viewer.close()
  }
})

test('at 390x844: no horizontal scroll, no serious or critical axe-core violation', async () => {
  const phone = await watchedPage(browser, { viewport: { width: 390, height: 844 } })
  try {
    await signIn(phone.page, server, acme.ownerEmail, acme.password)
    await openView(phone.page, 'gateway')
    const width = await phone.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }))
    assert.ok(width.scroll <= width.client, `scrollWidth ${width.scroll} > ${width.client}`)
    assert.equal(await axeViolations(phone.page), [])
    assert.equal(phone.problems, [])
  } finally {
    await phone.close()
  }
})

test.run()
