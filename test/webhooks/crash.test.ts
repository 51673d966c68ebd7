// The outbox survives a crash: the server is killed with SIGKILL while deliveries are pending, and
// after a restart on the same data dir every event arrives (at least once, none lost).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openTestDatabase } from '../support/database.ts'
import { client, startServer, tenantFixture, type Server } from '../support/harness.ts'
import { makeTestCa, serviceSignatureValid, startReceiver, waitUntil, type Receiver, type TestCa } from './receiver.ts'

const test = suite('webhooks: crash safety')
let ca: TestCa
let receiver: Receiver
let server: Server
let api: ReturnType<typeof client>
let key: string

const serverOptions = () => ({
  args: ['--webhook-allow-cidr', '127.0.0.0/8', '--webhook-ca-file', ca.caFile],
  env: { BULWARK_WEBHOOK_RETRY_SCALE: '0.001' }, // retries after 5 ms, 300 ms, 1.8 s, ...
})

test.before(async () => {
  ca = makeTestCa()
  receiver = await startReceiver(ca)
  server = await startServer(serverOptions())
  api = client(server)
  const acme = await tenantFixture(server, 'acme')
  key = await acme.key(['webhooks:write'])
})
test.after(async () => {
  await server.stop()
  await receiver.close()
})

async function register(url: string) {
  const res = await api('POST', '/api/v1/webhooks', { token: key, body: { url } })
  assert.is(res.status, 200, res.text)
  return res.json as { id: string; signing_secret: string }
}

async function pings(webhookId: string, count: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const res = await api('POST', `/api/v1/webhooks/${webhookId}/test`, { token: key })
    assert.is(res.status, 200, res.text)
    ids.push(res.json.event_id)
  }
  return ids
}

async function pendingRows(dataDir: string): Promise<number> {
  const db = await openTestDatabase(dataDir, { readonly: true })
  try {
    return (await db.get<{ n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'PENDING'"))!.n
  } finally {
    await db.close()
  }
}

async function restart(): Promise<void> {
  server = await startServer({ dataDir: server.dataDir, ...serverOptions() })
  api = client(server)
}

test('SIGKILL in the middle of a stream: every event arrives after restart', async () => {
  const hook = await register(`${receiver.url}/stream`)
  receiver.behave('/stream', () => ({ delayMs: 100 }))
  const sent = await pings(hook.id, 30)
  await waitUntil('the first deliveries', () => receiver.at('/stream').length >= 2)
  await server.stop('SIGKILL')
  assert.ok((await pendingRows(server.dataDir)) > 0, 'the kill left deliveries pending')
  const beforeRestart = new Set(receiver.at('/stream').map((r) => r.body.id))
  assert.ok(beforeRestart.size < sent.length)

  await restart()
  await waitUntil('every event', () => sent.every((id) => receiver.at('/stream').some((r) => r.body.id === id)), 30_000)
  const arrived = receiver.at('/stream')
  for (const got of arrived) assert.ok(serviceSignatureValid(hook.signing_secret, got.raw, got.headers['x-service-signature']))
  // At least once: the attempt cut short by the kill may arrive twice, with the same ids.
  assert.ok(arrived.length >= sent.length)
  assert.equal([...new Set(arrived.map((r) => r.body.id))].sort(), [...sent].sort())
  await waitUntil('the outbox to drain', async () => (await pendingRows(server.dataDir)) === 0)
})

test('SIGKILL while the receiver is down: the events wait in the outbox and arrive after restart', async () => {
  const down = await startReceiver(ca)
  const port = down.port
  await down.close() // nothing listens: every attempt fails, the deliveries wait for retries
  const hook = await register(`https://127.0.0.1:${port}/later`)
  const sent = await pings(hook.id, 10)
  await server.stop('SIGKILL')
  assert.is(await pendingRows(server.dataDir), 10)

  const back = await startReceiver(ca, port)
  try {
    await restart()
    await waitUntil('every event', () => sent.every((id) => back.at('/later').some((r) => r.body.id === id)), 30_000)
    assert.equal([...new Set(back.at('/later').map((r) => r.body.id))].sort(), [...sent].sort())
    for (const got of back.at('/later')) assert.ok(serviceSignatureValid(hook.signing_secret, got.raw, got.headers['x-service-signature']))
  } finally {
    await back.close()
  }
})

test('SIGTERM with a request hanging at a receiver: a clean exit, and the delivery is sent again after restart', async () => {
  const hook = await register(`${receiver.url}/hold`)
  receiver.behave('/hold', (_r, seen) => (seen === 0 ? { hang: true } : { status: 200 }))
  const res = await api('POST', `/api/v1/webhooks/${hook.id}/test`, { token: key })
  await waitUntil('the receiver to hold the request', () => receiver.open() === 1)
  assert.is(await server.stop('SIGTERM'), 0)
  assert.is(await pendingRows(server.dataDir), 1, 'the abandoned attempt left its delivery pending')
  await restart()
  await waitUntil('the second try', () => receiver.at('/hold').length === 2)
  const [first, second] = receiver.at('/hold')
  assert.is(second.headers['x-service-delivery'], res.json.id)
  assert.is(second.body.id, first.body.id)
})

test.run()
