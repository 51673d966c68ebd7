// Changing the risk profile from the Risk view in real Chromium: the form holds what the API has,
// saving sends only the fields that changed (the incident names just those), the Profile panel then
// shows the API's new values, an emptied optional limit is off; the API's refusals are shown with
// their detail next to the form with the field marked; a viewer gets no form.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Page } from 'playwright-core'
import { client } from '../support/harness.ts'
import { axeViolations, consoleFixture, fmt, openView, signIn, VIEWER, watchedPage, type ConsoleFixture, type WatchedPage } from './fixture.ts'

const test = suite('console: changing the risk profile and the breakers')
let f: ConsoleFixture
let w: WatchedPage
let page: Page
const get = async (path: string) => (await client(f.server)('GET', path, { token: f.owner.jwt })).json
const MONEY = ['capital_usd', 'max_exposure_usd', 'max_daily_loss_usd', 'max_order_notional_usd']
const EDITABLE = [
  'capital_usd',
  'max_open_trades',
  'max_exposure_usd',
  'fee_bps',
  'slippage_bps',
  'max_order_notional_usd',
  'price_band_pct',
  'max_trades_per_day',
  'max_daily_loss_usd',
  'max_drawdown_pct',
  'max_consecutive_losses',
  'max_orders_per_minute',
]

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

/** What the Profile panel shows for a field: the oracle's own formatting. */
const shownInProfile = (field: string, value: unknown) => (value === null ? 'off' : MONEY.includes(field) ? fmt.money(value as number) : String(value))
/** Clicks "Save the profile" and returns the notice of the redrawn view. */
async function save(): Promise<string> {
  await page.evaluate(() => document.getElementById('notice')?.remove())
  await page.getByRole('button', { name: 'Save the profile' }).click()
  await page.waitForSelector('main[data-ready="risk"] #notice')
  return (await page.textContent('#notice'))!
}
const incidents = async () => (await get('/api/v1/risk/incidents?limit=100')) as any[]

test('the form holds the profile the API has', async () => {
  await openView(page, 'risk')
  const profile = await get('/api/v1/risk/profile')
  for (const field of EDITABLE) {
    assert.is(await page.inputValue(`#edit-${field}`), profile[field] === null ? '' : String(profile[field]), field)
  }
  assert.is(await page.inputValue('#edit-breaker_action'), profile.breaker_action)
  assert.equal(await axeViolations(page), [], 'the risk view with the form')
})

test('saving sends the changed fields only; the Profile panel, the API and the trail show the new values', async () => {
  const before = await get('/api/v1/risk/profile')
  const trail = (await incidents()).length
  const form = page.locator('#edit-profile')
  await form.getByLabel('Max daily loss (USD)').fill('4000')
  await form.getByLabel('Max drawdown (%)').fill('35.5')
  await form.getByLabel('Max orders per minute').fill('40')
  await form.getByLabel('Max order notional (USD)').fill('2,500')
  await form.getByLabel('When a breaker trips').selectOption('FLATTEN')
  const notice = await save()
  const after = await get('/api/v1/risk/profile')
  const wanted = { max_daily_loss_usd: 4000, max_drawdown_pct: 35.5, max_orders_per_minute: 40, max_order_notional_usd: 2500, breaker_action: 'FLATTEN' }
  assert.equal(after, { ...before, ...wanted })
  const [incident] = await incidents()
  assert.is((await incidents()).length, trail + 1)
  assert.is(incident.action, 'RISK_PROFILE_UPDATED')
  assert.is(incident.actor, f.owner.email)
  const sentOrder = ['max_order_notional_usd', 'max_daily_loss_usd', 'max_drawdown_pct', 'max_orders_per_minute', 'breaker_action']
  assert.is(incident.reason, sentOrder.map((k) => `${k} ${before[k]} -> ${after[k]}`).join(', '))
  for (const [field, value] of Object.entries(wanted)) {
    assert.is(await page.textContent(`#profile [data-field="${field}"] dd`), shownInProfile(field, value), field)
    assert.is(await page.inputValue(`#edit-${field}`), String(value), `the form holds the new ${field}`)
  }
  const off = (x: unknown) => (x === null ? 'off' : String(x))
  assert.is(
    notice,
    `Profile saved: Max order notional (USD) ${off(before.max_order_notional_usd)} → 2500; Max daily loss (USD) ${off(before.max_daily_loss_usd)} → 4000; ` +
      `Max drawdown (%) ${off(before.max_drawdown_pct)} → 35.5; Max orders per minute ${off(before.max_orders_per_minute)} → 40; Breaker action ${before.breaker_action} → FLATTEN.`,
  )
})

test('an emptied optional limit is turned off (null); nothing changed sends nothing', async () => {
  const trail = (await incidents()).length
  await page.getByRole('button', { name: 'Save the profile' }).click()
  assert.is(await page.textContent('#edit-profile-error'), 'Nothing changed: edit a value first.')
  assert.is((await incidents()).length, trail, 'nothing was sent')
  await page.locator('#edit-profile').getByLabel('Max drawdown (%)').fill('')
  const notice = await save()
  assert.is((await get('/api/v1/risk/profile')).max_drawdown_pct, null)
  assert.is(await page.textContent('#profile [data-field="max_drawdown_pct"] dd'), 'off')
  assert.is(notice, 'Profile saved: Max drawdown (%) 35.5 → off.')
  assert.is((await incidents())[0].reason, 'max_drawdown_pct 35.5 -> null')
})

test("the API's refusals are shown with their detail next to the form, the field marked; nothing changes", async () => {
  const cases: [string, string, Record<string, unknown>][] = [
    ['Max drawdown (%)', '150', { max_drawdown_pct: 150 }],
    ['Max open trades', 'many', { max_open_trades: 'many' }],
    ['Capital (USD)', '', { capital_usd: null }],
    ['Max losses in a row', '2.5', { max_consecutive_losses: 2.5 }],
  ]
  const before = await get('/api/v1/risk/profile')
  await openView(page, 'risk')
  for (const [label, typed, body] of cases) {
    // A fresh form for each case (the session stays: it is in sessionStorage).
    await page.reload()
    await page.waitForSelector('main[data-ready="risk"]')
    const refused = await client(f.server)('PATCH', '/api/v1/risk/profile', { token: f.owner.jwt, body })
    assert.is(refused.status, 400, refused.text)
    const input = page.locator('#edit-profile').getByLabel(label)
    await input.fill(typed)
    await page.getByRole('button', { name: 'Save the profile' }).click()
    await page.waitForFunction(() => document.getElementById('edit-profile-error')?.textContent !== '')
    assert.is(await page.textContent('#edit-profile-error'), refused.json.detail, label)
    assert.is(await input.getAttribute('aria-invalid'), 'true', label)
    assert.ok(await input.evaluate((el) => el === document.activeElement), `${label} focused`)
  }
  assert.equal(await get('/api/v1/risk/profile'), before)
  assert.equal(await axeViolations(page), [], 'the form with a refusal shown')
  assert.equal(w.problems, [])
})

test('at 390x844 the form fits without horizontal scroll; a viewer gets no form', async () => {
  const phone = await watchedPage(f.browser, { viewport: { width: 390, height: 844 } })
  const viewer = await watchedPage(f.browser)
  try {
    await signIn(phone.page, f.server, f.owner.email, f.owner.password)
    await openView(phone.page, 'risk')
    assert.is(await phone.page.locator('#edit-profile').count(), 1)
    const width = await phone.page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }))
    assert.ok(width.scroll <= width.client, `scrollWidth ${width.scroll} > ${width.client}`)
    assert.equal(await axeViolations(phone.page), [])
    await signIn(viewer.page, f.server, VIEWER.email, VIEWER.password)
    await openView(viewer.page, 'risk')
    assert.is(await viewer.page.locator('#profile').count(), 1)
    assert.is(await viewer.page.locator('#edit-profile, #profile-editor').count(), 0)
    assert.equal(phone.problems, [])
    assert.equal(viewer.problems, [])
  } finally {
    await phone.close()
    await viewer.close()
  }
})

test.run()
