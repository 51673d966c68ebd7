// The dead man's switch on the Risk view in real Chromium against `serve --demo`: armed by clicking
// (timeout, action, scope), the deadline the API has, the time left counting down each second in a
// timer that does not talk every second (aria-live off, the deadline as its name); a heartbeat
// pushes the deadline; a refusal shows the API's detail; a viewer sees the switch and no control;
// disarm; and a switch left without a heartbeat fires on screen: the view shows it and the banner.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Page } from 'playwright-core'
import { client } from '../support/harness.ts'
import { axeViolations, consoleFixture, fmt, openView, signIn, VIEWER, watchedPage, type ConsoleFixture, type WatchedPage } from './fixture.ts'

const test = suite("console: the dead man's switch")
let f: ConsoleFixture
let w: WatchedPage
let page: Page
const get = async (path: string) => (await client(f.server)('GET', path, { token: f.owner.jwt })).json
const dms = () => get('/api/v1/risk/dead-man-switch')
const field = (name: string) => page.textContent(`#dms-status [data-field="${name}"] dd`)
/** The countdown's "m:ss" as seconds. */
const left = async (p: Page = page) => {
  const [m, s] = (await p.textContent('#dms-remaining'))!.split(':').map(Number)
  return m * 60 + s
}
/** Clears the panel's notice, clicks, and waits for the new one. */
async function act(name: string): Promise<string> {
  await page.evaluate(() => document.getElementById('dms-notice')?.remove())
  await page.locator('#dead-man-switch').getByRole('button', { name, exact: true }).click()
  await page.waitForSelector('#dms-notice')
  return (await page.textContent('#dms-notice'))!
}

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

test('not armed: the state, no countdown, the arming form; no axe violation', async () => {
  await openView(page, 'risk')
  assert.is((await dms()).status, 'DISARMED')
  assert.is(await field('status'), 'DISARMED')
  assert.is(await field('deadline'), '\u2014')
  assert.is(await page.locator('#dms-countdown').count(), 0)
  assert.is(await page.locator('#dms-heartbeat, #dms-disarm').count(), 0)
  assert.is(await page.inputValue('#dms-timeout'), '300')
  assert.equal(await axeViolations(page), [], 'the risk view with the switch disarmed')
})

test('armed by clicking: the API has it, the deadline is shown and the time left counts down each second', async () => {
  const panel = page.locator('#dead-man-switch')
  await panel.getByLabel('Timeout (seconds)').fill('120')
  await panel.getByLabel('When it fires').selectOption('CANCEL_AND_PAUSE')
  await panel.getByLabel('Applies to').selectOption('all')
  const notice = await act('Arm')
  const armed = await dms()
  assert.is(armed.status, 'ARMED')
  assert.is(armed.timeout_seconds, 120)
  assert.is(armed.action, 'CANCEL_AND_PAUSE')
  assert.is(armed.model_id, 'all')
  const ahead = Date.parse(armed.deadline) - Date.now()
  assert.ok(ahead > 110_000 && ahead <= 120_000, `${ahead} ms ahead`)
  assert.is(notice, `Armed: CANCEL_AND_PAUSE for the whole fleet after 120 s without a heartbeat; deadline ${fmt.when(armed.deadline)}.`)
  assert.is(await field('status'), 'ARMED')
  assert.is(await field('deadline'), fmt.when(armed.deadline))
  assert.is(await field('timeout_seconds'), '120 s')
  const [incident] = await get('/api/v1/risk/incidents?limit=1')
  assert.is(incident.action, 'DEAD_MAN_SWITCH_ARMED')
  assert.is(incident.actor, f.owner.email)

  const timer = page.locator('#dms-remaining')
  assert.is(await timer.getAttribute('role'), 'timer')
  assert.is(await timer.getAttribute('aria-live'), 'off', 'not read out every second')
  assert.is(await timer.getAttribute('aria-label'), `Time left until the deadline, ${fmt.when(armed.deadline)}`)
  const first = await left()
  assert.ok(first > 100 && first <= 120, String(first))
  await page.waitForTimeout(2200)
  const second = await left()
  assert.ok(second <= first - 2 && second >= first - 3, `${first} then ${second}`)
  assert.is(await timer.getAttribute('aria-label'), `Time left until the deadline, ${fmt.when(armed.deadline)}`, 'the name stays still')
  assert.ok(await page.locator('#dms-heartbeat').isVisible())
  assert.equal(await axeViolations(page), [], 'the risk view with the switch armed')
})

test("a heartbeat pushes the deadline: the new one is the API's, the time left starts again; focus stays on the button", async () => {
  const before = await dms()
  await page.waitForTimeout(1100)
  const notice = await act('Send a heartbeat')
  const after = await dms()
  assert.ok(after.deadline > before.deadline, `${before.deadline} -> ${after.deadline}`)
  assert.is(after.last_heartbeat_at, new Date(Date.parse(after.deadline) - 120_000).toISOString())
  assert.is(notice, `Heartbeat received: the deadline moved to ${fmt.when(after.deadline)}.`)
  assert.is(await field('deadline'), fmt.when(after.deadline))
  assert.is(await field('last_heartbeat_at'), fmt.when(after.last_heartbeat_at))
  assert.ok((await left()) >= 118, 'counting from the new deadline')
  assert.is(await page.evaluate(() => document.activeElement?.id), 'dms-heartbeat')
})

test("a refusal is shown with the API's detail next to the form, the field marked; nothing changes", async () => {
  const before = await dms()
  const refused = await client(f.server)('PUT', '/api/v1/risk/dead-man-switch', {
    token: f.owner.jwt,
    body: { timeout_seconds: 5, action: 'CANCEL_AND_PAUSE' },
  })
  assert.is(refused.status, 400)
  await page.locator('#dead-man-switch').getByLabel('Timeout (seconds)').fill('5')
  await page.getByRole('button', { name: 'Re-arm', exact: true }).click()
  await page.waitForFunction(() => document.getElementById('dms-error')?.textContent)
  assert.is(await page.textContent('#dms-error'), refused.json.detail)
  assert.is(await page.getAttribute('#dms-timeout', 'aria-invalid'), 'true')
  assert.is(await page.evaluate(() => document.activeElement?.id), 'dms-timeout')
  assert.equal(await dms(), before)
})

test('a viewer sees the switch, its deadline and the time left, and no control', async () => {
  const viewer = await watchedPage(f.browser)
  try {
    await signIn(viewer.page, f.server, VIEWER.email, VIEWER.password)
    await openView(viewer.page, 'risk')
    const armed = await dms()
    assert.is(await viewer.page.textContent('#dms-status [data-field="status"] dd'), 'ARMED')
    assert.is(await viewer.page.textContent('#dms-status [data-field="deadline"] dd'), fmt.when(armed.deadline))
    assert.ok((await left(viewer.page)) > 0)
    assert.is(await viewer.page.locator('#dms-arm-form, #dms-heartbeat, #dms-disarm, #dms-error').count(), 0)
    assert.equal(await viewer.page.locator('main button, main input, main select').count(), 0)
    assert.equal(await axeViolations(viewer.page), [], "the viewer's risk view")
    assert.equal(viewer.problems, [])
  } finally {
    await viewer.close()
  }
})

test('disarm: the API has it DISARMED, the countdown is gone, focus on the panel heading', async () => {
  const notice = await act('Disarm')
  const after = await dms()
  assert.is(after.status, 'DISARMED')
  assert.is(after.deadline, null)
  assert.is(notice, `Disarmed: no deadline is running; incident ${after.incident_id}.`)
  assert.is((await get('/api/v1/risk/incidents?limit=1'))[0].action, 'DEAD_MAN_SWITCH_DISARMED')
  assert.is(await field('status'), 'DISARMED')
  assert.is(await page.locator('#dms-countdown, #dms-heartbeat').count(), 0)
  assert.is(await page.evaluate(() => document.activeElement?.id), 'dead-man-switch-title')
})

test('no heartbeat by the deadline: it fires, and the view says so with the paused banner', async () => {
  await page.locator('#dead-man-switch').getByLabel('Timeout (seconds)').fill('10')
  await act('Arm')
  assert.ok((await left()) <= 10)
  await page.waitForSelector('main[data-ready="risk"] #notice', { timeout: 20_000 })
  const fired = await dms()
  assert.is(fired.status, 'FIRED')
  assert.is(
    await page.textContent('#notice'),
    `The dead man's switch fired at ${fmt.when(fired.fired_at)}: no heartbeat by ${fmt.when(fired.deadline)}; incident ${fired.incident_id}.`,
  )
  assert.is(await field('status'), 'FIRED')
  assert.ok(await page.locator('#paused').isVisible())
  assert.is((await get('/api/v1/risk/profile')).trading_paused, true)
  assert.is((await get('/api/v1/risk/incidents?limit=1'))[0].action, 'DEAD_MAN_SWITCH_FIRED')
  assert.equal(w.problems, [])
})

test.run()
