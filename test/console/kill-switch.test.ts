// The kill switch from the console in real Chromium: engaged by clicking (action, scope, reason, a
// confirmation that can be backed out of), then visible in the API, in the banner on every view and
// in the incident trail; "Verify chain" showing the API's head hash; resume. A viewer gets neither
// control, and a refusal of the API (a role taken away while signed in) is shown with its detail.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Page } from 'playwright-core'
import { cli, client } from '../support/harness.ts'
import { withDb } from '../trading/market.ts'
import { axeViolations, consoleFixture, openView, signIn, VIEWER, VIEWS, watchedPage, type ConsoleFixture, type WatchedPage } from './fixture.ts'

const test = suite('console: kill switch, banner, trail, verify, resume, roles')
let f: ConsoleFixture
let w: WatchedPage
let page: Page
const REASON = 'console test: venue looks wrong, stop everything'
const get = async (path: string) => (await client(f.server)('GET', path, { token: f.owner.jwt })).json

test.before(async () => {
  f = await consoleFixture()
  w = await watchedPage(f.browser)
  page = w.page
  await signIn(page, f.server, f.owner.email, f.owner.password)
})
test.after(async () => {
  await w?.close()
  await f?.stop()
})

test('engage: action, scope, reason, then a confirmation; backing out sends nothing', async () => {
  await openView(page, 'risk')
  assert.ok(await page.locator('#paused').isHidden())
  const before = (await get('/api/v1/risk/incidents')).length
  await page.getByLabel('Action').selectOption('PAUSE')
  await page.getByLabel('Scope').selectOption('all')
  await page.getByRole('button', { name: 'Engage kill switch…' }).click()
  assert.is(await page.locator('dialog').count(), 0, 'no reason: the form is not sent')
  assert.is(await page.textContent('#ks-reason-error'), 'Give a reason: it is recorded in the incident trail.')
  assert.is(await page.evaluate(() => document.activeElement?.id), 'ks-reason')
  await page.getByLabel('Reason').fill(REASON)
  await page.getByRole('button', { name: 'Engage kill switch…' }).click()
  await page.getByRole('dialog').waitFor()
  assert.is(await page.textContent('#confirm-title'), 'Pause the whole fleet?')
  assert.equal(await axeViolations(page), [], 'the confirmation dialog')
  await page.getByRole('button', { name: 'Cancel', exact: true }).click()
  await page.locator('dialog').waitFor({ state: 'detached' })
  assert.is(await page.evaluate(() => document.activeElement?.textContent), 'Engage kill switch…', 'focus back on the button')
  assert.is((await get('/api/v1/risk/incidents')).length, before, 'nothing was sent')
  assert.is((await get('/api/v1/risk/profile')).trading_paused, false)

  await page.getByLabel('Action').selectOption('CANCEL_AND_PAUSE')
  await page.getByRole('button', { name: 'Engage kill switch…' }).click()
  assert.is(await page.textContent('#confirm-text'), `Cancel and pause (cancel pending orders and stop new ones) for the whole fleet. Reason: “${REASON}”.`)
  await page.getByRole('button', { name: 'Cancel and pause', exact: true }).click()
  await page.waitForSelector('main[data-ready="risk"] #notice')

  const profile = await get('/api/v1/risk/profile')
  assert.is(profile.trading_paused, true)
  const [incident] = await get('/api/v1/risk/incidents?limit=1')
  assert.is(incident.action, 'EMERGENCY_KILL_SWITCH_ENGAGED')
  assert.is(incident.actor, f.owner.email)
  assert.is(incident.model_id, 'all')
  assert.ok(incident.reason.endsWith(`: ${REASON}`), incident.reason)
  assert.match(
    (await page.textContent('#notice'))!,
    new RegExp(`^TRIGGERED: the whole fleet is paused; \\d+ pending orders? canceled; incident ${incident.id}\\.$`),
  )
})

test('while paused: the banner on every view, the incident first in the trail', async () => {
  for (const id of VIEWS) {
    await openView(page, id)
    assert.ok(await page.locator('#paused').isVisible(), id)
    assert.match((await page.textContent('#paused'))!, /^Trading is paused for the whole fleet\. Resume on the Risk view$/, id)
  }
  await openView(page, 'risk')
  assert.equal(await axeViolations(page), [], 'the risk view with the resume form and the banner')
  await openView(page, 'incidents')
  const [incident] = await get('/api/v1/risk/incidents?limit=1')
  const first = await page.locator('#incidents-table tbody tr').first().locator('td').allTextContents()
  assert.equal(first.slice(0, 6), [incident.timestamp, 'EMERGENCY_KILL_SWITCH_ENGAGED', 'ENGAGED', 'all', f.owner.email, incident.reason])
})

test('"Verify chain" shows the validity, the count and the head hash the API returns', async () => {
  await openView(page, 'incidents')
  await page.getByRole('button', { name: 'Verify chain' }).click()
  await page.waitForSelector('#verify-result[data-valid]')
  const verified = await get('/api/v1/risk/incidents/verify')
  assert.is(verified.valid, true)
  assert.is(await page.getAttribute('#verify-result', 'data-valid'), 'true')
  assert.is(await page.textContent('#head-hash'), verified.head_hash)
  const incidents = verified.count === 1 ? 'incident' : 'incidents'
  assert.is(await page.textContent('#verify-result'), `The chain is valid: ${verified.count} ${incidents} recomputed. Head hash ${verified.head_hash}`)
})

test('a viewer sees the banner but no kill switch and no resume', async () => {
  const viewer = await watchedPage(f.browser)
  try {
    await signIn(viewer.page, f.server, VIEWER.email, VIEWER.password)
    assert.is(await viewer.page.textContent('#paused'), 'Trading is paused for the whole fleet.')
    await openView(viewer.page, 'risk')
    assert.is(await viewer.page.locator('#profile').count(), 1)
    assert.is(await viewer.page.locator('#kill-switch, #resume, form').count(), 0)
    assert.equal(await viewer.page.locator('main button').allTextContents(), [])
    assert.equal(viewer.problems, [])
  } finally {
    await viewer.close()
  }
})

test('a refusal is shown with its detail: an admin whose role is taken away while signed in', async () => {
  const made = await cli(['user', 'create', 'admin@demo.localhost', '--tenant', 'demo', '--role', 'admin', '--password-stdin'], {
    dataDir: f.server.dataDir,
    input: 'admin-password-console-1',
  })
  assert.is(made.code, 0, made.stderr)
  const admin = await watchedPage(f.browser)
  try {
    await signIn(admin.page, f.server, 'admin@demo.localhost', 'admin-password-console-1')
    await openView(admin.page, 'risk')
    await withDb(f.server, (db) => db.run("UPDATE users SET role = 'viewer' WHERE email = ?", ['admin@demo.localhost']), false)
    await admin.page.locator('#kill-switch').getByLabel('Reason').fill('should be refused')
    await admin.page.getByRole('button', { name: 'Engage kill switch…' }).click()
    await admin.page.getByRole('button', { name: 'Cancel and pause', exact: true }).click()
    await admin.page.waitForSelector('#problem:not([hidden])')
    const refused = await client(f.server)('POST', '/api/v1/risk/kill-switch', {
      token: await admin.page.evaluate(() => sessionStorage.getItem('bulwark.console.token')!),
      body: { action: 'CANCEL_AND_PAUSE', pause: true },
    })
    assert.is(refused.status, 403)
    assert.is(await admin.page.textContent('#problem'), `Error: ${refused.json.detail}`)
    await admin.page.reload()
    await admin.page.waitForSelector('main[data-ready="risk"]')
    assert.is(await admin.page.locator('#kill-switch, #resume').count(), 0, 'the role is read again: the controls are gone')
  } finally {
    await admin.close()
  }
})

test('resume: reason and confirmation; the API, the banner and the trail follow', async () => {
  await openView(page, 'risk')
  const resume = page.locator('#resume')
  await resume.getByLabel('Scope').selectOption('all')
  await resume.getByLabel('Reason').fill('console test: all clear')
  await page.getByRole('button', { name: 'Resume trading…' }).click()
  assert.is(await page.textContent('#confirm-title'), 'Resume the whole fleet?')
  await page.getByRole('button', { name: 'Resume', exact: true }).click()
  await page.waitForSelector('main[data-ready="risk"] #notice')
  assert.match((await page.textContent('#notice'))!, /^RESUMED: the whole fleet is not paused; 0 pending orders canceled; incident inc_\w+\.$/)
  assert.is((await get('/api/v1/risk/profile')).trading_paused, false)
  assert.ok(await page.locator('#paused').isHidden())
  assert.is(await page.locator('#resume').count(), 0)
  const [incident] = await get('/api/v1/risk/incidents?limit=1')
  assert.is(incident.action, 'TRADING_RESUMED')
  await openView(page, 'incidents')
  assert.equal((await page.locator('#incidents-table tbody tr').first().locator('td').allTextContents()).slice(1, 2), ['TRADING_RESUMED'])
  assert.equal(w.problems, [])
})

test.run()
