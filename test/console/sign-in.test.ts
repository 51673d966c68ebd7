// The console's shell in real Chromium against `serve --demo`: what GET /console and its assets
// answer (CSP, types, nosniff, cache validators, 404), GET /api/v1/auth/session, sign-in with a
// wrong password (the API's detail shown) and the right one, sign-out forgetting the token, and a
// token the server no longer accepts leading back to sign-in.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { client, ROOT } from '../support/harness.ts'
import { consoleFixture, signIn, VIEWER, watchedPage, type ConsoleFixture } from './fixture.ts'

const test = suite('console: shell, assets and sign-in')
let f: ConsoleFixture

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

test.before(async () => {
  f = await consoleFixture()
})
test.after(async () => {
  await f?.stop()
})

test('GET /console: the shell with the strict CSP, nothing inline, no other origin named', async () => {
  const res = await client(f.server)('GET', '/console')
  assert.is(res.status, 200)
  assert.is(res.headers.get('content-type'), 'text/html; charset=utf-8')
  assert.is(res.headers.get('content-security-policy'), CSP)
  assert.is(res.headers.get('x-content-type-options'), 'nosniff')
  assert.is(res.headers.get('cache-control'), 'no-cache')
  assert.not.match(res.text, /<style|\sstyle=|<script>|\son[a-z]+=/i)
  assert.not.match(res.text, /https?:\/\//)
})

test('GET /console/assets/:name: scripts and styles with their type, nosniff and an ETag that revalidates; uPlot as npm ships it; unknown name 404', async () => {
  const api = client(f.server)
  for (const [name, type] of [
    ['app.js', 'text/javascript; charset=utf-8'],
    ['console.css', 'text/css; charset=utf-8'],
    ['uPlot.iife.min.js', 'text/javascript; charset=utf-8'],
    ['uPlot.min.css', 'text/css; charset=utf-8'],
  ]) {
    const res = await api('GET', `/console/assets/${name}`)
    assert.is(res.status, 200, name)
    assert.is(res.headers.get('content-type'), type, name)
    assert.is(res.headers.get('x-content-type-options'), 'nosniff')
    assert.is(res.headers.get('cache-control'), 'no-cache')
    const etag = res.headers.get('etag')!
    assert.match(etag, /^"[\w-]+"$/)
    const again = await api('GET', `/console/assets/${name}`, { headers: { 'if-none-match': etag } })
    assert.is(again.status, 304, name)
    assert.is(again.text, '')
  }
  const uplot = await api('GET', '/console/assets/uPlot.iife.min.js')
  assert.is(uplot.text, readFileSync(`${ROOT}node_modules/uplot/dist/uPlot.iife.min.js`, 'utf8'))
  for (const name of ['nope.js', 'index.html', '..%2Fapp.ts', 'routes.ts']) {
    const res = await api('GET', `/console/assets/${name}`)
    assert.is(res.status, 404, name)
    assert.is(res.headers.get('content-type'), 'application/problem+json')
    assert.is(res.json.code, 'not_found')
    assert.match(res.json.detail, /^the console has no asset named "/)
  }
})

test('GET /api/v1/auth/session: e-mail, role, tenant and expiry of a session; 401 without one, 403 for an API key', async () => {
  const api = client(f.server)
  const owner = await api('GET', '/api/v1/auth/session', { token: f.owner.jwt })
  assert.is(owner.status, 200, owner.text)
  const claims = JSON.parse(Buffer.from(f.owner.jwt.split('.')[1], 'base64url').toString())
  assert.equal(owner.json, {
    email: 'owner@demo.localhost',
    role: 'owner',
    tenant_id: claims.tid,
    tenant_slug: 'demo',
    expires_at: new Date(claims.exp * 1000).toISOString(),
  })
  const viewer = await api('GET', '/api/v1/auth/session', { token: f.viewerJwt })
  assert.is(viewer.json.role, 'viewer')
  assert.is(viewer.json.email, VIEWER.email)
  assert.is((await api('GET', '/api/v1/auth/session')).status, 401)
  const key = await api('POST', '/api/v1/auth/api-tokens', { token: f.owner.jwt, body: { name: 'console-test', scopes: ['risk:read'] } })
  const refused = await api('GET', '/api/v1/auth/session', { token: key.json.token })
  assert.is(refused.status, 403)
  assert.is(refused.json.code, 'session_required')
})

test('sign-in: a wrong password shows the API detail; the right one opens the overview; sign-out forgets the token', async () => {
  const { page, problems, close } = await watchedPage(f.browser)
  try {
    await page.goto(`${f.server.url}/console`)
    await page.waitForSelector('main[data-ready="sign-in"]')
    await page.getByLabel('E-mail').fill(f.owner.email)
    await page.getByLabel('Password').fill('not-the-password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    const wrong = await client(f.server)('POST', '/api/v1/auth/login', { body: { email: f.owner.email, password: 'not-the-password' } })
    await page.waitForFunction(() => document.getElementById('sign-in-error')?.textContent !== '')
    assert.is(await page.textContent('#sign-in-error'), wrong.json.detail)
    assert.is(await page.evaluate(() => sessionStorage.length), 0)

    await page.getByLabel('Password').fill(f.owner.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForSelector('main[data-ready="overview"]')
    assert.is(await page.textContent('#who-text'), 'owner@demo.localhost (owner, demo)')
    assert.is(new URL(page.url()).hash, '#/overview')
    const stored = await page.evaluate(() => sessionStorage.getItem('bulwark.console.token'))
    assert.is((await client(f.server)('GET', '/api/v1/auth/session', { token: stored! })).json.email, f.owner.email)
    await page.reload()
    await page.waitForSelector('main[data-ready="overview"]')

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForSelector('main[data-ready="sign-in"]')
    assert.is(await page.evaluate(() => sessionStorage.getItem('bulwark.console.token')), null)
    await page.reload()
    await page.waitForSelector('main[data-ready="sign-in"]')
    assert.ok(await page.locator('nav#nav').isHidden())
    assert.equal(problems, [])
  } finally {
    await close()
  }
})

test('a token the server refuses: back to the sign-in form, with the API detail', async () => {
  const { page, problems, close } = await watchedPage(f.browser)
  try {
    await signIn(page, f.server, VIEWER.email, VIEWER.password)
    await page.evaluate(() => sessionStorage.setItem('bulwark.console.token', 'eyJhbGciOiJIUzI1NiJ9.e30.invalid'))
    await page.locator('nav a[data-view="signals"]').click()
    await page.waitForSelector('main[data-ready="sign-in"]')
    const refused = await client(f.server)('GET', '/api/v1/signals', { token: 'eyJhbGciOiJIUzI1NiJ9.e30.invalid' })
    assert.is(await page.textContent('#sign-in-error'), `Your session ended: ${refused.json.detail}`)
    assert.is(await page.evaluate(() => sessionStorage.length), 0)
    assert.equal(problems, [])
  } finally {
    await close()
  }
})

test.run()
