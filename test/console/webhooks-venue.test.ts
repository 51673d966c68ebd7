// The Webhooks and Venue views in real Chromium against a real server whose webhooks may reach
// 127.0.0.1 only (--webhook-allow-cidr 127.0.0.1/32), a real HTTPS receiver and the test venue, both
// on 127.0.0.1 with a CA made per run that the server trusts (--webhook-ca-file, --ca-file). An
// endpoint made by clicking, its test event delivered (signed by the secret the page showed once)
// and shown with its attempt, rotation, redelivery, editing, the API's refusals shown with their
// detail (nothing registered, nothing sent); a venue connected by clicking (the venue checks the
// key), refused keys, disconnection after a confirmation; what a viewer sees; axe-core, 390x844.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chromium, type Browser, type Page } from 'playwright-core'
import { cli, client, login, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { startVenue, venueKey, type Venue } from '../support/venue/index.ts'
import { makeTestCa, serviceSignatureValid, startReceiver, waitUntil, type Receiver } from '../webhooks/receiver.ts'
import { axeViolations, cells, fmt, openView, signIn, watchedPage, type WatchedPage } from './fixture.ts'

const test = suite('console: webhooks and venue')
const VIEWER = { email: 'viewer@acme.test', password: 'viewer-password-console-2' }
const good = venueKey('console', 'console')
const withdrawing = venueKey('console-withdraws', 'console')
let receiver: Receiver
let venue: Venue
let server: Server
let acme: TenantFixture
let browser: Browser
let w: WatchedPage
let page: Page
let viewerJwt: string

const call = (method: string, path: string, body?: unknown, token = acme.jwt) => client(server)(method, path, { token, body })
const get = async (path: string) => {
  const res = await call('GET', path)
  assert.is(res.status, 200, res.text)
  return res.json
}

test.before(async () => {
  const ca = makeTestCa('console')
  receiver = await startReceiver(ca)
  venue = await startVenue({ ca })
  await venue.addKey({ ...good, restrictions: { enableWithdrawals: false } })
  await venue.addKey({ ...withdrawing, restrictions: { enableWithdrawals: true } })
  await venue.setBalances({ USDT: 10_000 }, 'console')
  server = await startServer({
    args: ['--quiet', '--webhook-allow-cidr', '127.0.0.1/32', '--webhook-ca-file', ca.caFile, '--venue-url', venue.url, '--ca-file', ca.caFile],
  })
  acme = await tenantFixture(server, 'acme')
  const made = await cli(['user', 'create', VIEWER.email, '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: VIEWER.password,
  })
  assert.is(made.code, 0, made.stderr)
  viewerJwt = await login(server, VIEWER.email, VIEWER.password)
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  w = await watchedPage(browser)
  page = w.page
  await signIn(page, server, acme.ownerEmail, acme.password)
})
test.after(async () => {
  await w?.close()
  await browser?.close()
  await server?.stop()
  await venue?.close()
  await receiver?.close()
})

const HOOK = '/console-hook'
let hookId: string
let secret: string

const deliveryRow = (d: any) => [
  d.id,
  d.event_type,
  d.status,
  String(d.attempts),
  fmt.when(d.last_attempt_at),
  d.last_status_code === null ? '\u2014' : String(d.last_status_code),
  d.last_error ?? '',
  fmt.when(d.next_attempt_at),
  fmt.when(d.delivered_at),
  d.redelivery_of ?? '',
  fmt.when(d.created_at),
  'Redeliver',
]

/** Waits for the API to call every delivery of the endpoint done, then redraws the page's table and compares it with the API's list. */
async function deliveriesShown(count: number): Promise<any[]> {
  let list: any[] = []
  await waitUntil(`${count} finished deliveries`, async () => {
    list = await get(`/api/v1/webhooks/${hookId}/deliveries`)
    return list.length === count && list.every((d) => d.status !== 'PENDING')
  })
  await page.evaluate(() => document.getElementById('main')!.removeAttribute('data-ready'))
  await page.getByRole('button', { name: 'Refresh deliveries' }).click()
  await page.waitForSelector(`main[data-ready="webhooks"] #deliveries-table[data-rows="${count}"]`)
  assert.equal(await cells(page, '#deliveries-table'), list.map(deliveryRow))
  return list
}

/** Does `act`, then waits for the error line `id` to say something new, and returns it. */
async function errorAfter(id: string, act: () => Promise<void>): Promise<string> {
  const before = await page.textContent(`#${id}`)
  await act()
  await page.waitForFunction(([id, before]) => !['', before].includes(document.getElementById(id!)?.textContent ?? ''), [id, before])
  return (await page.textContent(`#${id}`))!
}

async function click(name: string): Promise<void> {
  await page.getByRole('button', { name, exact: true }).click()
}

/** Clicks the button `name` and returns the notice the redrawn view shows. */
async function noticeAfter(name: string, view = 'webhooks'): Promise<string> {
  await page.evaluate(() => document.getElementById('notice')?.remove())
  await click(name)
  await page.waitForSelector(`main[data-ready="${view}"] #notice`)
  return (await page.textContent('#notice'))!
}

test('webhooks: the event types offered are the API’s', async () => {
  await openView(page, 'webhooks')
  const doc = (await call('GET', '/api/v1/openapi.json')).json
  const events = doc.paths['/api/v1/webhooks'].post.requestBody.content['application/json'].schema.properties.events.items.enum
  assert.equal(await page.locator('#create-webhook input[name="events"]').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value)), events)
  assert.equal(await cells(page, '#webhooks-table'), [])
})

test('webhooks: an endpoint added by clicking; its secret shown once signs the test event, delivered and shown with its attempt', async () => {
  const form = page.locator('#create-webhook')
  await form.getByLabel('URL').fill(`${receiver.url}${HOOK}`)
  await form.getByLabel('All events (*)').uncheck()
  await form.getByLabel('order.filled').check()
  await form.getByLabel('webhook.ping').check()
  await form.getByLabel('Description (optional)').fill('ops console')
  const added = await noticeAfter('Add endpoint')
  const [hook] = await get('/api/v1/webhooks')
  hookId = hook.id
  assert.is(hook.url, `${receiver.url}${HOOK}`)
  assert.equal(hook.events, ['order.filled', 'webhook.ping'])
  assert.is(hook.description, 'ops console')
  assert.is(added, `Endpoint ${hook.id} added: ${hook.url}.`)
  secret = (await page.textContent('#signing-secret'))!
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  assert.equal(await cells(page, '#webhooks-table'), [[hook.url, 'order.filled, webhook.ping', 'ACTIVE', 'ops console', '\u2014', fmt.when(hook.created_at)]])
  assert.is(await page.inputValue('#wh-edit-url'), hook.url, 'the new endpoint is open')

  const notice = await noticeAfter('Send test event')
  const [delivery] = await get(`/api/v1/webhooks/${hookId}/deliveries`)
  assert.is(notice, `Test event ${delivery.event_id} (webhook.ping) queued as delivery ${delivery.id}.`)
  assert.is(await page.locator('#signing-secret').count(), 0, 'the secret is shown once')
  await waitUntil('the test event', () => receiver.at(HOOK).length === 1)
  const got = receiver.at(HOOK)[0]
  assert.is(got.body.id, delivery.event_id)
  assert.is(got.headers['x-service-delivery'], delivery.id)
  assert.ok(serviceSignatureValid(secret, got.raw, got.headers['x-service-signature']), 'signed with the secret the page showed')
  const [done] = await deliveriesShown(1)
  assert.is(done.status, 'SUCCEEDED')
  assert.is(done.attempts, 1)
  assert.is(done.last_status_code, 200)
})

test('webhooks: rotation asks first; the new secret, shown once, signs the next delivery', async () => {
  const before = await get(`/api/v1/webhooks/${hookId}`)
  await click('Rotate secret…')
  assert.is(await page.textContent('#confirm-title'), 'Rotate the signing secret?')
  await click('Cancel')
  await page.locator('dialog').waitFor({ state: 'detached' })
  assert.equal(await get(`/api/v1/webhooks/${hookId}`), before, 'backing out sends nothing')
  await click('Rotate secret…')
  await click('Rotate')
  await page.waitForSelector('main[data-ready="webhooks"] #signing-secret')
  const rotated = (await page.textContent('#signing-secret'))!
  assert.match(rotated, /^whsec_/)
  assert.is.not(rotated, secret)
  assert.is(await page.textContent('#notice'), `Secret of ${hookId} rotated: the new one signs from now on.`)
  await noticeAfter('Send test event')
  await waitUntil('the second test event', () => receiver.at(HOOK).length === 2)
  const got = receiver.at(HOOK)[1]
  assert.ok(serviceSignatureValid(rotated, got.raw, got.headers['x-service-signature']), 'the new secret signs')
  assert.not.ok(serviceSignatureValid(secret, got.raw, got.headers['x-service-signature']), 'the old one does not')
  assert.is(await page.locator('#signing-secret').count(), 0)
  await deliveriesShown(2)
})

test('webhooks: redeliver queues the same event as a new delivery, shown with its own attempt', async () => {
  const [, first] = await get(`/api/v1/webhooks/${hookId}/deliveries`)
  await page.evaluate(() => document.getElementById('notice')?.remove())
  await page.locator('#deliveries-table tr', { hasText: first.id }).getByRole('button', { name: 'Redeliver' }).click()
  await page.waitForSelector('main[data-ready="webhooks"] #notice')
  const [copy] = await get(`/api/v1/webhooks/${hookId}/deliveries`)
  assert.is(copy.redelivery_of, first.id)
  assert.is(copy.event_id, first.event_id)
  assert.is(await page.textContent('#notice'), `Event ${first.event_id} queued again as delivery ${copy.id}.`)
  await waitUntil('the redelivery', () => receiver.at(HOOK).length === 3)
  assert.is(receiver.at(HOOK)[2].body.id, first.event_id, 'the same body id: the receiver can dedupe')
  const list = await deliveriesShown(3)
  assert.equal([list[0].status, list[0].attempts], ['SUCCEEDED', 1])
})

test("webhooks: editing saves url, events, description and status; the API's refusal of a disabled endpoint's test is shown", async () => {
  const form = page.locator('#edit-webhook')
  await form.getByLabel('order.filled').uncheck()
  await form.getByLabel('Description (optional)').fill('')
  await form.getByLabel('Status').selectOption('DISABLED')
  const notice = await noticeAfter('Save changes')
  const hook = await get(`/api/v1/webhooks/${hookId}`)
  assert.equal([hook.events, hook.description, hook.status], [['webhook.ping'], null, 'DISABLED'])
  assert.is(notice, `Endpoint ${hookId} saved: ${hook.url}, DISABLED, events webhook.ping.`)
  await click('Send test event')
  await page.waitForSelector('#problem:not([hidden])')
  const refused = await call('POST', `/api/v1/webhooks/${hookId}/test`)
  assert.is(refused.status, 400)
  assert.is(await page.textContent('#problem'), `Error: ${refused.json.detail}`)
  await page.locator('#edit-webhook').getByLabel('Status').selectOption('ACTIVE')
  await noticeAfter('Save changes')
  assert.is((await get(`/api/v1/webhooks/${hookId}`)).status, 'ACTIVE')
  assert.is(receiver.at(HOOK).length, 3, 'nothing was sent while disabled')
})

test("webhooks: refused URLs and events get the API's detail at the form, the field marked; nothing registered, nothing sent", async () => {
  const cases: [string, Record<string, unknown>][] = [
    [`http://127.0.0.1:${receiver.port}/plain`, { url: `http://127.0.0.1:${receiver.port}/plain`, events: ['*'] }],
    ['https://10.0.0.1/hook', { url: 'https://10.0.0.1/hook', events: ['*'] }],
    ['https://169.254.169.254/latest', { url: 'https://169.254.169.254/latest', events: ['*'] }],
    [`https://user:pw@127.0.0.1:${receiver.port}/creds`, { url: `https://user:pw@127.0.0.1:${receiver.port}/creds`, events: ['*'] }],
  ]
  const form = page.locator('#create-webhook')
  for (const [typed, body] of cases) {
    const refused = await call('POST', '/api/v1/webhooks', body)
    assert.is(refused.status, 400, refused.text)
    await form.getByLabel('URL').fill(typed)
    assert.is(await errorAfter('wh-new-error', () => click('Add endpoint')), refused.json.detail, typed)
    assert.is(await form.getByLabel('URL').getAttribute('aria-invalid'), 'true')
  }
  await form.getByLabel('URL').fill(`${receiver.url}/no-events`)
  await form.getByLabel('All events (*)').uncheck()
  const noEvents = await call('POST', '/api/v1/webhooks', { url: `${receiver.url}/no-events`, events: [] })
  assert.is(noEvents.status, 400)
  assert.is(await errorAfter('wh-new-error', () => click('Add endpoint')), noEvents.json.detail)
  // The edit form's URL goes through the same check.
  await page.locator('#edit-webhook').getByLabel('URL').fill('https://192.168.1.10/hook')
  const patch = await call('PATCH', `/api/v1/webhooks/${hookId}`, { url: 'https://192.168.1.10/hook' })
  assert.is(patch.status, 400)
  assert.is(await errorAfter('wh-edit-error', () => click('Save changes')), patch.json.detail)
  assert.is((await get('/api/v1/webhooks')).length, 1, 'nothing registered')
  assert.is((await get(`/api/v1/webhooks/${hookId}`)).url, `${receiver.url}${HOOK}`)
  assert.equal(
    receiver.received.map((r) => r.path),
    [HOOK, HOOK, HOOK],
    'nothing sent',
  )
  assert.equal(await axeViolations(page), [], 'the webhooks view with an endpoint open and refusals shown')
})

test('a viewer: the venue status only, and no webhooks view (its routes refuse a viewer)', async () => {
  const viewer = await watchedPage(browser)
  try {
    await signIn(viewer.page, server, VIEWER.email, VIEWER.password)
    await openView(viewer.page, 'venue')
    assert.is(await viewer.page.textContent('#venue-status [data-field="status"] dd'), 'DISCONNECTED')
    assert.is(await viewer.page.locator('main form, main button').count(), 0)
    assert.equal(await axeViolations(viewer.page), [])
    // The webhook routes refuse a viewer even to read, so the view is not offered: not in the navigation, not by its address.
    assert.is(await viewer.page.locator('nav a[data-view="webhooks"]').count(), 0)
    await viewer.page.goto(`${server.url}/console#/webhooks`)
    await viewer.page.waitForSelector('main[data-ready="overview"]')
    assert.is(await viewer.page.evaluate(() => location.hash), '#/overview')
    assert.is((await call('GET', '/api/v1/webhooks', undefined, viewerJwt)).status, 403, 'the route refuses a viewer too')
    assert.equal(viewer.problems, [])
  } finally {
    await viewer.close()
  }
})

test("venue: keys the venue refuses are shown with the API's detail; a good key connects and the status is the API's", async () => {
  await openView(page, 'venue')
  assert.is(await page.textContent('#venue-status [data-field="status"] dd'), 'DISCONNECTED')
  const form = page.locator('#venue-connect')
  const refusals: [string, string][] = [
    [withdrawing.apiKey, withdrawing.secret],
    [good.apiKey, `${good.secret.slice(0, -1)}0`],
  ]
  for (const [key, typedSecret] of refusals) {
    const body = { exchange: 'binance', api_key: key, api_secret: typedSecret }
    const refused = await call('PUT', '/api/v1/venue', body)
    assert.is(refused.status, 422, refused.text)
    await page.reload()
    await page.waitForSelector('main[data-ready="venue"]')
    await form.getByLabel('Exchange').fill('binance')
    await form.getByLabel('API key').fill(key)
    await form.getByLabel('API secret').fill(typedSecret)
    assert.is(await errorAfter('venue-error', () => click('Connect')), refused.json.detail)
  }
  assert.is((await get('/api/v1/venue')).status, 'DISCONNECTED', 'nothing stored')
  await form.getByLabel('API secret').fill(good.secret)
  const connected = await noticeAfter('Connect', 'venue')
  const account = await get('/api/v1/venue')
  assert.is(account.status, 'CONNECTED')
  assert.is(account.connected_by, acme.ownerEmail)
  assert.is(connected, `Connected: binance, key ${account.api_key_hint}; can trade: yes; can withdraw: no.`)
  const yesNo = (x: boolean | null) => (x === null ? 'not told by the venue' : x ? 'yes' : 'no')
  const expected = [
    ['status', account.status],
    ['exchange', account.exchange],
    ['api_key_hint', account.api_key_hint],
    ['can_trade', yesNo(account.can_trade)],
    ['can_withdraw', yesNo(account.can_withdraw)],
    ['checked_at', fmt.when(account.checked_at)],
    ['connected_at', fmt.when(account.connected_at)],
    ['connected_by', account.connected_by],
  ]
  for (const [field, value] of expected) assert.is(await page.textContent(`#venue-status [data-field="${field}"] dd`), value, field)
  const asked = (await venue.requests()).map((r) => `${r.method} ${r.path}`)
  assert.ok(asked.includes('GET /api/v3/account'), 'the venue was asked')
  const html = await page.content()
  assert.not.ok(html.includes(good.secret) || html.includes(good.apiKey), 'neither the key nor the secret is on the page')
  assert.is(await page.locator('#venue-connect').getByRole('button').textContent(), 'Replace the key')
})

test('venue: a viewer sees the connected status, no control', async () => {
  const viewer = await watchedPage(browser)
  try {
    await signIn(viewer.page, server, VIEWER.email, VIEWER.password)
    await openView(viewer.page, 'venue')
    assert.is(await viewer.page.textContent('#venue-status [data-field="status"] dd'), 'CONNECTED')
    assert.is(await viewer.page.textContent('#venue-status [data-field="connected_by"] dd'), acme.ownerEmail)
    assert.is(await viewer.page.locator('main form, main button').count(), 0)
    assert.equal(viewer.problems, [])
  } finally {
    await viewer.close()
  }
})

test('venue: disconnecting asks first; backing out sends nothing', async () => {
  await click('Disconnect…')
  assert.is(await page.textContent('#confirm-title'), 'Disconnect the venue?')
  assert.equal(await axeViolations(page), [], 'the confirmation')
  await click('Cancel')
  await page.locator('dialog').waitFor({ state: 'detached' })
  assert.is((await get('/api/v1/venue')).status, 'CONNECTED')
  const hint = (await get('/api/v1/venue')).api_key_hint
  await click('Disconnect…')
  assert.is(await noticeAfter('Disconnect', 'venue'), `Disconnected: the binance key ${hint} is forgotten.`)
  assert.is((await get('/api/v1/venue')).status, 'DISCONNECTED')
  assert.is(await page.textContent('#venue-status [data-field="status"] dd'), 'DISCONNECTED')
  assert.is(await page.locator('#venue-disconnect').count(), 0)
})

test('webhooks: deleting asks first, then the endpoint and its deliveries are gone', async () => {
  await openView(page, 'webhooks')
  await page.evaluate(() => document.getElementById('main')!.removeAttribute('data-ready'))
  await page.getByRole('button', { name: `${receiver.url}${HOOK}` }).click()
  await page.waitForSelector('main[data-ready="webhooks"] #endpoint')
  await click('Delete endpoint…')
  assert.is(await noticeAfter('Delete'), `Endpoint ${hookId} deleted with its deliveries: ${receiver.url}${HOOK}.`)
  assert.is((await call('GET', `/api/v1/webhooks/${hookId}`)).status, 404)
  assert.equal(await cells(page, '#webhooks-table'), [])
  assert.is(await page.locator('#endpoint').count(), 0)
  assert.equal(w.problems, [])
})

test('both views at 390x844: no horizontal scroll, no serious or critical axe-core violation', async () => {
  const made = await call('POST', '/api/v1/webhooks', { url: `${receiver.url}/phone`, events: ['webhook.ping'] })
  assert.is(made.status, 200, made.text)
  const phone = await watchedPage(browser, { viewport: { width: 390, height: 844 } })
  try {
    await signIn(phone.page, server, acme.ownerEmail, acme.password)
    for (const id of ['webhooks', 'venue']) {
      await openView(phone.page, id)
      if (id === 'webhooks') {
        await phone.page.getByRole('button', { name: `${receiver.url}/phone` }).click()
        await phone.page.waitForSelector('#endpoint #deliveries-table')
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

test.run()
