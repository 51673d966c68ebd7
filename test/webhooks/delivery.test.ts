// Signed deliveries to real HTTPS receivers on 127.0.0.1 (a test CA made with openssl, trusted
// through --webhook-ca-file): the signature checked by an independent HMAC and by the
// standardwebhooks library, tampering caught, rotation, redelivery and per-endpoint ordering.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Webhook } from 'standardwebhooks'
import { openTestDatabase } from '../support/database.ts'
import { client, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { makeTestCa, serviceSignatureValid, startReceiver, waitUntil, type Receiver, type TestCa } from './receiver.ts'

const test = suite('webhooks: signed delivery')
let ca: TestCa
let receiver: Receiver
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture
let key: string

test.before(async () => {
  ca = makeTestCa()
  receiver = await startReceiver(ca)
  server = await startServer({ args: ['--webhook-allow-cidr', '127.0.0.0/8', '--webhook-allow-cidr', '::1/128', '--webhook-ca-file', ca.caFile] })
  api = client(server)
  acme = await tenantFixture(server, 'acme')
  key = await acme.key(['webhooks:write'])
})
test.after(async () => {
  await server.stop()
  await receiver.close()
})

async function register(path: string, extra: Record<string, unknown> = {}) {
  const res = await api('POST', '/api/v1/webhooks', { token: key, body: { url: receiver.url + path, ...extra } })
  assert.is(res.status, 200, res.text)
  return res.json as { id: string; signing_secret: string; url: string }
}

async function ping(webhookId: string) {
  const res = await api('POST', `/api/v1/webhooks/${webhookId}/test`, { token: key })
  assert.is(res.status, 200, res.text)
  return res.json as { id: string; event_id: string; status: string }
}

test('a ping arrives with the documented headers and body', async () => {
  const hook = await register('/basic')
  assert.match(hook.signing_secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  assert.is(Buffer.from(hook.signing_secret.slice(6), 'base64').length, 32)
  const delivery = await ping(hook.id)
  assert.match(delivery.id, /^dlv_/)
  assert.is(delivery.status, 'PENDING')
  await waitUntil('the ping', () => receiver.at('/basic').length === 1)
  const got = receiver.at('/basic')[0]
  assert.is(got.headers['content-type'], 'application/json')
  assert.is(got.headers['x-service-event'], 'webhook.ping')
  assert.is(got.headers['x-service-delivery'], delivery.id)
  assert.is(got.headers['webhook-id'], delivery.event_id)
  assert.equal(Object.keys(got.body), ['id', 'type', 'created_at', 'sent_at', 'attempt', 'tenant_id', 'data'])
  assert.is(got.body.id, delivery.event_id)
  assert.is(got.body.type, 'webhook.ping')
  assert.is(got.body.attempt, 1)
  assert.match(got.body.tenant_id, /^ten_/)
  assert.equal(got.body.data, { webhook_id: hook.id })
  // Replay protection as a receiver does it: sent_at within 5 minutes, and it is the signed timestamp.
  const sentAt = Date.parse(got.body.sent_at)
  assert.ok(Math.abs(Date.now() - sentAt) < 5 * 60_000)
  assert.is(got.headers['webhook-timestamp'], String(Math.floor(sentAt / 1000)))

  await waitUntil(
    'the delivery to be recorded',
    async () => (await api('GET', `/api/v1/webhooks/${hook.id}/deliveries`, { token: key })).json[0].status === 'SUCCEEDED',
  )
  const listed = (await api('GET', `/api/v1/webhooks/${hook.id}/deliveries`, { token: key })).json[0]
  assert.is(listed.id, delivery.id)
  assert.is(listed.attempts, 1)
  assert.is(listed.last_status_code, 200)
  assert.is(listed.next_attempt_at, null)
  assert.ok(listed.delivered_at)
  // The ping is an event like any other: it is in the event log.
  const db = await openTestDatabase(server.dataDir, { readonly: true })
  const event = (await db.get<{ type: string; tenant_id: string }>('SELECT type, tenant_id FROM events WHERE id = ?', [delivery.event_id]))!
  await db.close()
  assert.is(event.type, 'webhook.ping')
  assert.is(event.tenant_id, got.body.tenant_id)
})

test('X-Service-Signature and webhook-signature verify independently; a tampered body is rejected', async () => {
  const hook = await register('/verify')
  await ping(hook.id)
  await waitUntil('the ping', () => receiver.at('/verify').length === 1)
  const got = receiver.at('/verify')[0]
  assert.match(got.headers['x-service-signature'] as string, /^sha256=[0-9a-f]{64}$/)
  assert.ok(serviceSignatureValid(hook.signing_secret, got.raw, got.headers['x-service-signature']), 'independent HMAC of the raw body')
  const standard = new Webhook(hook.signing_secret)
  assert.equal(standard.verify(got.raw, got.headers as Record<string, string>), got.body, 'standardwebhooks verifies')

  const tampered = got.raw.replace('"attempt":1', '"attempt":2')
  assert.is.not(tampered, got.raw)
  assert.not.ok(serviceSignatureValid(hook.signing_secret, tampered, got.headers['x-service-signature']))
  assert.throws(() => standard.verify(tampered, got.headers as Record<string, string>))
  const other = await register('/verify-other')
  assert.not.ok(serviceSignatureValid(other.signing_secret, got.raw, got.headers['x-service-signature']), 'another secret does not verify')
  assert.throws(() => new Webhook(other.signing_secret).verify(got.raw, got.headers as Record<string, string>))
})

test('rotate-secret: the new secret signs at once, webhook-signature carries both for 24 h', async () => {
  const hook = await register('/rotate')
  const res = await api('POST', `/api/v1/webhooks/${hook.id}/rotate-secret`, { token: key })
  assert.is(res.status, 200, res.text)
  const fresh = res.json.signing_secret as string
  assert.match(fresh, /^whsec_/)
  assert.is.not(fresh, hook.signing_secret)
  const expires = Date.parse(res.json.previous_secret_expires_at)
  assert.ok(Math.abs(expires - Date.now() - 24 * 3600_000) < 60_000)
  await ping(hook.id)
  await waitUntil('the ping', () => receiver.at('/rotate').length === 1)
  const got = receiver.at('/rotate')[0]
  assert.ok(serviceSignatureValid(fresh, got.raw, got.headers['x-service-signature']), 'X-Service-Signature uses the new secret')
  assert.not.ok(serviceSignatureValid(hook.signing_secret, got.raw, got.headers['x-service-signature']))
  assert.is((got.headers['webhook-signature'] as string).split(' ').length, 2)
  const headers = got.headers as Record<string, string>
  assert.ok(new Webhook(fresh).verify(got.raw, headers), 'new secret verifies')
  assert.ok(new Webhook(hook.signing_secret).verify(got.raw, headers), 'old secret still verifies during the overlap')
  // The secret is shown on rotation only.
  const shown = await api('GET', `/api/v1/webhooks/${hook.id}`, { token: key })
  assert.not.ok(shown.text.includes(fresh))
  assert.not.ok('signing_secret' in shown.json)
})

test('redeliver: the same event again, as a new delivery that names the original', async () => {
  const hook = await register('/redeliver')
  const first = await ping(hook.id)
  await waitUntil('the ping', () => receiver.at('/redeliver').length === 1)
  const res = await api('POST', `/api/v1/webhooks/${hook.id}/deliveries/${first.id}/redeliver`, { token: key })
  assert.is(res.status, 200, res.text)
  assert.is(res.json.event_id, first.event_id)
  assert.is(res.json.redelivery_of, first.id)
  assert.is.not(res.json.id, first.id)
  await waitUntil('the redelivery', () => receiver.at('/redeliver').length === 2)
  const [a, b] = receiver.at('/redeliver')
  assert.is(b.body.id, a.body.id, 'same body id: a receiver dedupes it')
  assert.is(b.headers['x-service-delivery'], res.json.id)
  assert.ok(serviceSignatureValid(hook.signing_secret, b.raw, b.headers['x-service-signature']))
  const unknown = await api('POST', `/api/v1/webhooks/${hook.id}/deliveries/dlv_01ARZ3NDEKTSV4RRFFQ69G5FAV/redeliver`, { token: key })
  assert.is(unknown.status, 404)
})

test('first attempts to one endpoint arrive in order of creation', async () => {
  const hook = await register('/ordered')
  const sent: string[] = []
  for (let i = 0; i < 15; i++) sent.push((await ping(hook.id)).event_id)
  await waitUntil('15 pings', () => receiver.at('/ordered').length === 15)
  assert.equal(
    receiver.at('/ordered').map((r) => r.body.id),
    sent,
  )
})

test('events filter: an endpoint only gets the types it asked for, pings aside', async () => {
  const hook = await register('/filtered', { events: ['order.filled'] })
  assert.equal((await api('GET', `/api/v1/webhooks/${hook.id}`, { token: key })).json.events, ['order.filled'])
  // A ping tests the endpoint whatever its filter says.
  await ping(hook.id)
  await waitUntil('the ping', () => receiver.at('/filtered').length === 1)
})

test('a receiver whose certificate no trusted CA signed is not delivered to', async () => {
  const stranger = makeTestCa('stranger')
  const other = await startReceiver(stranger)
  try {
    const res = await api('POST', '/api/v1/webhooks', { token: key, body: { url: `${other.url}/x` } })
    assert.is(res.status, 200)
    await ping(res.json.id)
    let delivery: any
    await waitUntil('a failed attempt', async () => {
      delivery = (await api('GET', `/api/v1/webhooks/${res.json.id}/deliveries`, { token: key })).json[0]
      return delivery.attempts >= 1
    })
    assert.is(delivery.status, 'PENDING')
    assert.match(delivery.last_error, /certificate/i)
    assert.is(delivery.last_status_code, null)
    assert.is(other.received.length, 0)
    assert.is((await api('DELETE', `/api/v1/webhooks/${res.json.id}`, { token: key })).status, 200)
  } finally {
    await other.close()
  }
})

test('the connect-time check: endpoints the operator no longer allows get no request', async () => {
  const literal = await register('/revoked-literal')
  // By name: the address is checked where the socket resolves it (no DNS rebinding window).
  const named = await api('POST', '/api/v1/webhooks', { token: key, body: { url: `https://localhost:${receiver.port}/revoked-named` } })
  assert.is(named.status, 200, named.text)
  await server.stop()
  server = await startServer({ dataDir: server.dataDir, args: ['--webhook-ca-file', ca.caFile] })
  api = client(server)
  for (const id of [literal.id, named.json.id]) {
    await ping(id)
    let delivery: any
    await waitUntil('a refused attempt', async () => {
      delivery = (await api('GET', `/api/v1/webhooks/${id}/deliveries`, { token: key })).json[0]
      return delivery.attempts >= 1
    })
    assert.match(delivery.last_error, /--webhook-allow-cidr/)
    assert.is(delivery.status, 'PENDING')
  }
  assert.is(receiver.at('/revoked-literal').length, 0)
  assert.is(receiver.at('/revoked-named').length, 0)
})

test('health reports the backlog; signing secrets never reach the log', async () => {
  const health = await api('GET', '/api/v1/health')
  assert.type(health.json.webhook_backlog, 'number')
  assert.ok(health.json.webhook_backlog >= 1, 'the refused delivery above is still pending')
  const hooks = (await api('GET', '/api/v1/webhooks?limit=1000', { token: key })).json
  assert.ok(hooks.length >= 8)
  const db = await openTestDatabase(server.dataDir, { readonly: true })
  const secrets = await db.all<{ secret: string; previous_secret: string | null }>('SELECT secret, previous_secret FROM webhooks')
  await db.close()
  for (const row of secrets) {
    assert.not.ok(server.output().includes(row.secret))
    if (row.previous_secret) assert.not.ok(server.output().includes(row.previous_secret))
    assert.not.ok(server.output().includes(row.secret.slice(6)))
  }
})

test.run()
