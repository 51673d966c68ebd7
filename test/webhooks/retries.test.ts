// The retry schedule against real HTTPS receivers: 500s, a timeout and a redirect are failures
// retried with the same delivery id; the eighth failure is FAILED; a waiting retry never holds back
// newer deliveries; a slow endpoint never delays another; 5 days without success is DISABLED.
// The server runs with BULWARK_WEBHOOK_RETRY_SCALE (test-only) so the schedule takes seconds.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { Webhook } from 'standardwebhooks'
import { openTestDatabase } from '../support/database.ts'
import { client, startServer, tenantFixture, type Server } from '../support/harness.ts'
import { makeTestCa, serviceSignatureValid, startReceiver, waitUntil, type Receiver } from './receiver.ts'

const test = suite('webhooks: retries')
let receiver: Receiver
let server: Server
let api: ReturnType<typeof client>
let key: string

test.before(async () => {
  const ca = makeTestCa()
  receiver = await startReceiver(ca)
  server = await startServer({
    args: ['--webhook-allow-cidr', '127.0.0.0/8', '--webhook-ca-file', ca.caFile],
    env: { BULWARK_WEBHOOK_RETRY_SCALE: '0.0001' }, // 5 s -> 0.5 ms ... 10 h -> 3.6 s
  })
  api = client(server)
  const acme = await tenantFixture(server, 'acme')
  key = await acme.key(['webhooks:write'])
})
test.after(async () => {
  await server.stop()
  await receiver.close()
})

async function register(path: string) {
  const res = await api('POST', '/api/v1/webhooks', { token: key, body: { url: receiver.url + path } })
  assert.is(res.status, 200, res.text)
  return res.json as { id: string; signing_secret: string }
}

async function ping(webhookId: string) {
  const res = await api('POST', `/api/v1/webhooks/${webhookId}/test`, { token: key })
  assert.is(res.status, 200, res.text)
  return res.json as { id: string; event_id: string }
}

async function deliveryOf(webhookId: string, id: string) {
  return (await api('GET', `/api/v1/webhooks/${webhookId}/deliveries/${id}`, { token: key })).json
}

test('500, 500, then 200: three attempts of one delivery, each signed afresh', async () => {
  const hook = await register('/flaky')
  receiver.behave('/flaky', (_r, seen) => ({ status: seen < 2 ? 500 : 200 }))
  const sent = await ping(hook.id)
  await waitUntil('the third attempt', () => receiver.at('/flaky').length === 3)
  const attempts = receiver.at('/flaky')
  assert.equal(
    attempts.map((r) => r.body.attempt),
    [1, 2, 3],
  )
  for (const got of attempts) {
    assert.is(got.headers['x-service-delivery'], sent.id, 'same delivery id on every retry')
    assert.is(got.body.id, sent.event_id, 'same event id on every retry')
    assert.ok(serviceSignatureValid(hook.signing_secret, got.raw, got.headers['x-service-signature']))
    assert.ok(new Webhook(hook.signing_secret).verify(got.raw, got.headers as Record<string, string>))
  }
  assert.ok(attempts[2].body.sent_at > attempts[0].body.sent_at, 'each attempt has its own sent_at')
  await waitUntil('SUCCEEDED', async () => (await deliveryOf(hook.id, sent.id)).status === 'SUCCEEDED')
  const delivery = await deliveryOf(hook.id, sent.id)
  assert.is(delivery.attempts, 3)
  assert.is(delivery.last_status_code, 200)
  assert.is(delivery.last_error, null)
})

test('a redirect is a failure and is not followed', async () => {
  const hook = await register('/moved')
  receiver.behave('/moved', (_r, seen) => (seen === 0 ? { status: 302, headers: { Location: '/elsewhere' } } : { status: 204 }))
  const sent = await ping(hook.id)
  await waitUntil('SUCCEEDED', async () => (await deliveryOf(hook.id, sent.id)).status === 'SUCCEEDED')
  assert.is(receiver.at('/moved').length, 2)
  assert.is(receiver.at('/elsewhere').length, 0)
})

test('the eighth failure is FAILED, and the waiting retries never held back newer deliveries', async () => {
  const hook = await register('/dead-then-alive')
  let doomed = ''
  receiver.behave('/dead-then-alive', (r) => ({ status: r.body.id === doomed ? 503 : 200 }))
  const first = await ping(hook.id)
  doomed = first.event_id
  const later = [await ping(hook.id), await ping(hook.id)]
  await waitUntil('FAILED', async () => (await deliveryOf(hook.id, first.id)).status === 'FAILED', 40_000)
  const delivery = await deliveryOf(hook.id, first.id)
  assert.is(delivery.attempts, 8)
  assert.is(delivery.last_status_code, 503)
  assert.is(delivery.next_attempt_at, null)
  const arrivals = receiver.at('/dead-then-alive')
  assert.equal(
    arrivals.filter((r) => r.body.id === doomed).map((r) => r.body.attempt),
    [1, 2, 3, 4, 5, 6, 7, 8],
  )
  for (const other of later) {
    const index = arrivals.findIndex((r) => r.body.id === other.event_id)
    const lastTry = arrivals.findIndex((r) => r.body.id === doomed && r.body.attempt === 8)
    assert.ok(index !== -1 && index < lastTry, 'newer deliveries went out while the old one was waiting for retries')
    assert.is((await deliveryOf(hook.id, other.id)).status, 'SUCCEEDED')
  }
  const failedOnly = await api('GET', `/api/v1/webhooks/${hook.id}/deliveries?status=FAILED`, { token: key })
  assert.equal(
    failedOnly.json.map((d: any) => d.id),
    [first.id],
  )
  // A failed delivery can be sent again by hand.
  doomed = ''
  const again = await api('POST', `/api/v1/webhooks/${hook.id}/deliveries/${first.id}/redeliver`, { token: key })
  await waitUntil('the redelivery', async () => (await deliveryOf(hook.id, again.json.id)).status === 'SUCCEEDED')
})

test('a timeout is retried with the same delivery id; a slow endpoint never delays another', async () => {
  const slow = await register('/slow')
  const fast = await register('/fast')
  receiver.behave('/slow', (_r, seen) => (seen === 0 ? { hang: true } : { status: 200 }))
  const stuck = await ping(slow.id)
  await waitUntil('the slow endpoint to be holding a request', () => receiver.open() === 1)
  const quick = await ping(fast.id)
  await waitUntil('the fast ping', () => receiver.at('/fast').length === 1)
  assert.is(receiver.open(), 1, 'the fast endpoint was served while the slow one still held its request')
  assert.is(receiver.at('/slow').length, 1)
  assert.is((await deliveryOf(fast.id, quick.id)).attempts, 1)
  // The sender gives up after 10 s, then retries the same delivery.
  await waitUntil('the retry', () => receiver.at('/slow').length === 2, 30_000)
  const [firstTry, retry] = receiver.at('/slow')
  assert.is(retry.headers['x-service-delivery'], stuck.id)
  assert.is(retry.headers['x-service-delivery'], firstTry.headers['x-service-delivery'])
  assert.is(retry.body.attempt, 2)
  await waitUntil('SUCCEEDED', async () => (await deliveryOf(slow.id, stuck.id)).status === 'SUCCEEDED')
  const delivery = await deliveryOf(slow.id, stuck.id)
  assert.is(delivery.attempts, 2)
})

test('an endpoint failing for 5 days without a success is DISABLED; reactivating restarts the clock', async () => {
  const hook = await register('/gone')
  receiver.behave('/gone', () => ({ status: 500 }))
  // Five days of failures, compressed: the failure clock is set back in the real database.
  const sixDaysAgo = new Date(Date.now() - 6 * 24 * 3600_000).toISOString()
  const db = await openTestDatabase(server.dataDir)
  assert.is((await db.run('UPDATE webhooks SET failing_since = ? WHERE id = ?', [sixDaysAgo, hook.id])).changes, 1)
  await db.close()
  const sent = await ping(hook.id)
  await waitUntil('DISABLED', async () => (await api('GET', `/api/v1/webhooks/${hook.id}`, { token: key })).json.status === 'DISABLED')
  const shown = (await api('GET', `/api/v1/webhooks/${hook.id}`, { token: key })).json
  assert.is(shown.failing_since, sixDaysAgo)
  // Nothing more is attempted while disabled; the delivery waits (it is not lost).
  const attemptsSoFar = receiver.at('/gone').length
  const refused = await api('POST', `/api/v1/webhooks/${hook.id}/test`, { token: key })
  assert.is(refused.status, 400)
  assert.is(refused.json.code, 'validation_failed')
  assert.is((await deliveryOf(hook.id, sent.id)).status, 'PENDING')
  receiver.behave('/gone', () => ({ status: 200 }))
  const res = await api('PATCH', `/api/v1/webhooks/${hook.id}`, { token: key, body: { status: 'ACTIVE' } })
  assert.is(res.json.status, 'ACTIVE')
  assert.is(res.json.failing_since, null)
  await waitUntil('the waiting delivery', async () => (await deliveryOf(hook.id, sent.id)).status === 'SUCCEEDED')
  assert.ok(receiver.at('/gone').length > attemptsSoFar)
})

test.run()
