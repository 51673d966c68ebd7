// The outbox from source, on a real database (the pass's engine): recordEvent inside a change's transaction writes
// one delivery per subscribed ACTIVE endpoint of that tenant, and a rolled-back change leaves no
// event and no delivery. Also the pure pieces: the address rules and the signatures.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHmac } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { query, type Queries, type Tx } from '../../src/store/store.ts'
import { createTenant } from '../../src/tenants/tenants.ts'
import { recordEvent } from '../../src/webhooks/events.ts'
import { createWebhook, updateWebhook } from '../../src/webhooks/endpoints.ts'
import { openApp, type App } from '../../src/app.ts'
import { addressAllowed } from '../../src/webhooks/url-guard.ts'
import { BlockList } from 'node:net'
import { cidrList } from '../../src/shared/cidr.ts'
import { commandConfig } from '../../src/config.ts'
import { signDelivery } from '../../src/webhooks/signing.ts'
import { databaseUrlFor, tempDir } from '../support/harness.ts'

const test = suite('webhooks: outbox')
const hooks: Record<string, string> = {}
let tenantId = ''
let app: App

test.before(async () => {
  const dir = tempDir()
  app = await openApp(commandConfig({ 'data-dir': dir, database: await databaseUrlFor(dir) }))
  const now = new Date()
  await app.store.write((tx) => setUp(tx, now))
})
test.after(() => app?.close())

async function setUp(tx: Tx, now: Date): Promise<void> {
  const acme = await createTenant(tx, { slug: 'acme', plan: 'EXECUTE' })
  const other = await createTenant(tx, { slug: 'other', plan: 'EXECUTE' })
  tenantId = acme.id
  const url = 'https://127.0.0.2:9/'
  hooks.all = (await createWebhook(tx, acme.id, { url, events: ['*'], description: null }, now)).webhook.id
  hooks.fills = (await createWebhook(tx, acme.id, { url, events: ['order.filled'], description: null }, now)).webhook.id
  hooks.disabled = (await createWebhook(tx, acme.id, { url, events: ['*'], description: null }, now)).webhook.id
  await updateWebhook(tx, acme.id, hooks.disabled, { status: 'DISABLED' }, now)
  hooks.otherTenant = (await createWebhook(tx, other.id, { url, events: ['*'], description: null }, now)).webhook.id
}

const deliveries = query<[string], { webhook_id: string }>('SELECT webhook_id FROM webhook_deliveries WHERE event_id = ? ORDER BY webhook_id')
const firstDelivery = query<[string]>('SELECT status, attempts, event_type FROM webhook_deliveries WHERE event_id = ? LIMIT 1')
const eventCount = query<[string]>('SELECT count(*) AS n FROM events WHERE id = ?')

async function deliveriesOf(db: Queries, eventId: string): Promise<string[]> {
  return (await db.all(deliveries, [eventId])).map((r) => r.webhook_id)
}

test("an event fans out to the tenant's ACTIVE endpoints whose filter takes it, in the same transaction", async () => {
  const created = await app.store.write((tx) => recordEvent(tx, tenantId, 'order.created', { order_id: 'ord_x' }, new Date()))
  assert.equal(await deliveriesOf(app.store.read, created.id), [hooks.all])
  const filled = await app.store.write((tx) => recordEvent(tx, tenantId, 'order.filled', { order_id: 'ord_x' }, new Date()))
  assert.equal(await deliveriesOf(app.store.read, filled.id), [hooks.all, hooks.fills].sort())
  const row = await app.store.read.get(firstDelivery, [filled.id])
  assert.equal(row, { status: 'PENDING', attempts: 0, event_type: 'order.filled' })
})

test('a change that rolls back leaves neither the event nor its deliveries', async () => {
  let eventId = ''
  let failure: unknown
  try {
    await app.store.write(async (tx) => {
      eventId = (await recordEvent(tx, tenantId, 'risk.kill_switch.engaged', { model_id: 'all' }, new Date())).id
      assert.is((await deliveriesOf(tx, eventId)).length, 1, 'written inside the transaction')
      throw new Error('the change failed after recording its event')
    })
  } catch (error) {
    failure = error
  }
  assert.match(String(failure), /change failed/)
  assert.ok(eventId)
  assert.equal(await app.store.read.get(eventCount, [eventId]), { n: 0 })
  assert.equal(await deliveriesOf(app.store.read, eventId), [])
})

test('a ping goes to its own endpoint only, whatever its filter', async () => {
  const ping = await app.store.write((tx) => recordEvent(tx, tenantId, 'webhook.ping', { webhook_id: hooks.fills }, new Date()))
  assert.equal(await deliveriesOf(app.store.read, ping.id), [hooks.fills])
  const foreign = await app.store.write((tx) => recordEvent(tx, tenantId, 'webhook.ping', { webhook_id: hooks.otherTenant }, new Date()))
  assert.equal(await deliveriesOf(app.store.read, foreign.id), [], "another tenant's endpoint is never a target")
})

test('address rules: special ranges refused, public allowed, --webhook-allow-cidr wins', () => {
  const NONE = new BlockList()
  for (const address of [
    '127.0.0.1',
    '10.0.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.251',
    '255.255.255.255',
    '198.18.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a00:1',
    '2001:db8::1',
  ]) {
    assert.not.ok(addressAllowed(address, NONE), address)
  }
  for (const address of ['1.1.1.1', '8.8.8.8', '203.0.114.10', '2606:4700:4700::1111', '::ffff:8.8.8.8']) assert.ok(addressAllowed(address, NONE), address)
  const allowed = cidrList(['192.168.0.0/16', 'fd00::/8'], '--webhook-allow-cidr')
  assert.ok(addressAllowed('192.168.7.7', allowed))
  assert.ok(addressAllowed('::ffff:192.168.7.7', allowed))
  assert.ok(addressAllowed('fd00::5', allowed))
  assert.not.ok(addressAllowed('10.0.0.1', allowed))
  assert.throws(() => cidrList(['192.168.0.0/40'], '--webhook-allow-cidr'), /prefix/)
  assert.throws(() => cidrList(['home-lan'], '--webhook-allow-cidr'), /CIDR/)
})

test('signatures: hex HMAC of the raw body keyed with the secret string; Standard Webhooks keyed with its bytes', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
  const body = '{"id":"evt_1","type":"webhook.ping"}'
  const sentAt = new Date('2026-11-22T00:05:00.000Z')
  const headers = signDelivery({ secret, messageId: 'evt_1', sentAt, body })
  assert.is(headers['X-Service-Signature'], `sha256=${createHmac('sha256', Buffer.from(secret)).update(body).digest('hex')}`)
  // The library's own signer gives the same Standard Webhooks signature.
  assert.is(headers['webhook-signature'], new Webhook(secret).sign('evt_1', sentAt, body))
  assert.is(headers['webhook-timestamp'], String(sentAt.getTime() / 1000))
  const both = signDelivery({ secret, previousSecret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, messageId: 'evt_1', sentAt, body })
  assert.is(both['webhook-signature'].split(' ').length, 2)
  assert.is(both['X-Service-Signature'], headers['X-Service-Signature'], 'X-Service-Signature uses the current secret only')
})

test.run()
