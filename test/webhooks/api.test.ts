// The webhook API: the description's object, URL rules, scopes and roles, tenant isolation,
// idempotent replays (the secret included, stored sealed), and every answer checked against the OpenAPI document.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openTestDatabase } from '../support/database.ts'
import { cli, client, startServer, tenantFixture, login, type Server, type TenantFixture } from '../support/harness.ts'
import { ResponseOracle } from '../support/openapi.ts'

const test = suite('webhooks: api')
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture
let other: TenantFixture
let key: string
let oracle: ResponseOracle
/** Every answer must match the OpenAPI document. */
let call: ReturnType<ResponseOracle['checked']>

test.before(async () => {
  // Only 127.0.0.2 is allowed: every other private address is refused. Endpoints that get pinged
  // point at 127.0.0.2:9, where nothing listens, so no test ever reaches out of this machine.
  server = await startServer({ args: ['--webhook-allow-cidr', '127.0.0.2/32'] })
  api = client(server)
  acme = await tenantFixture(server, 'acme')
  other = await tenantFixture(server, 'other')
  key = await acme.key(['webhooks:write'])
  oracle = new ResponseOracle((await api('GET', '/api/v1/openapi.json')).json)
  call = oracle.checked(api)
})
test.after(async () => {
  await server.stop()
})

// Every endpoint made here points at 127.0.0.2 (allowed above), so nothing can leave this machine.
const PUBLIC_URL = 'https://127.0.0.2:9/hooks/bulwark?token=abc'
const LOCAL_URL = 'https://127.0.0.2:9/hook'

test('create returns id, url, status ACTIVE and a whsec_ secret, plus events and created_at', async () => {
  const res = await call('POST', '/api/v1/webhooks', { token: key, body: { url: PUBLIC_URL, description: 'ops', events: ['order.filled', 'trade.closed'] } })
  assert.is(res.status, 200, res.text)
  const hook = res.json
  assert.match(hook.id, /^wh_[0-9A-Z]{26}$/)
  assert.is(hook.url, PUBLIC_URL)
  assert.is(hook.status, 'ACTIVE')
  assert.match(hook.signing_secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  assert.equal(hook.events, ['order.filled', 'trade.closed'])
  assert.is(hook.description, 'ops')
  assert.ok(Date.parse(hook.created_at))
  const plain = await call('POST', '/api/v1/webhooks', { token: acme.jwt, body: { url: LOCAL_URL } })
  assert.equal(plain.json.events, ['*'], 'all events by default')
  assert.is.not(plain.json.signing_secret, hook.signing_secret)
})

test('list and get never show the secret', async () => {
  const list = await call('GET', '/api/v1/webhooks', { token: key })
  assert.is(list.status, 200)
  assert.ok(list.json.length >= 2)
  for (const hook of list.json) assert.not.ok('signing_secret' in hook)
  const one = await call('GET', `/api/v1/webhooks/${list.json[0].id}`, { token: key })
  assert.equal(one.json, list.json[0])
  const paged = await call('GET', '/api/v1/webhooks?limit=1', { token: key })
  assert.is(paged.json.length, 1)
  assert.match(paged.headers.get('link') ?? '', /rel="next"/)
})

test('URL rules: https, no credentials, no private, loopback, link-local, multicast or reserved address', async () => {
  const refused = [
    'http://127.0.0.2:9/hook',
    'ftp://127.0.0.2:9/',
    'not a url',
    'https://user:pw@127.0.0.2:9/',
    'https://127.0.0.1/',
    'https://127.9.9.9:8443/',
    'https://2130706433/',
    'https://0x7f.1/',
    'https://localhost/',
    'https://10.1.2.3/',
    'https://172.16.0.1/',
    'https://192.168.1.10/',
    'https://100.64.0.1/',
    'https://169.254.169.254/latest',
    'https://0.0.0.0/',
    'https://224.0.0.1/',
    'https://255.255.255.255/',
    'https://[::1]/',
    'https://[::]/',
    'https://[fe80::1]/',
    'https://[fd00::1]/',
    'https://[ff02::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:a00:1]/',
    'https://does-not-exist.invalid/',
  ]
  for (const url of refused) {
    const res = await call('POST', '/api/v1/webhooks', { token: key, body: { url } })
    assert.is(res.status, 400, `${url}: ${res.text}`)
    assert.is(res.json.code, 'validation_failed', url)
    assert.is(res.json.errors[0].field, 'url', url)
  }
  const bad = [
    [{ url: PUBLIC_URL, events: ['order.exploded'] }, 'validation_failed'],
    [{ url: PUBLIC_URL, events: [] }, 'validation_failed'],
    [{ url: PUBLIC_URL, colour: 'red' }, 'unknown_field'],
    [{ events: ['*'] }, 'validation_failed'],
  ] as const
  for (const [body, code] of bad) {
    const res = await call('POST', '/api/v1/webhooks', { token: key, body })
    assert.is(res.status, 400, JSON.stringify(body))
    assert.is(res.json.code, code)
  }
})

test('PATCH changes url, events, description and status, with the same URL rules', async () => {
  const created = (await call('POST', '/api/v1/webhooks', { token: key, body: { url: LOCAL_URL } })).json
  let res = await call('PATCH', `/api/v1/webhooks/${created.id}`, {
    token: key,
    body: { url: 'https://127.0.0.2:9/new', events: ['risk.kill_switch.engaged'], description: null, status: 'DISABLED' },
  })
  assert.is(res.status, 200, res.text)
  assert.is(res.json.url, 'https://127.0.0.2:9/new')
  assert.equal(res.json.events, ['risk.kill_switch.engaged'])
  assert.is(res.json.status, 'DISABLED')
  assert.is(res.json.description, null)
  assert.not.ok('signing_secret' in res.json)
  res = await call('PATCH', `/api/v1/webhooks/${created.id}`, { token: key, body: { url: 'https://192.168.0.5/' } })
  assert.is(res.status, 400)
  assert.is(res.json.errors[0].field, 'url')
  res = await call('PATCH', `/api/v1/webhooks/${created.id}`, { token: key, body: {} })
  assert.is(res.status, 400)
  res = await call('PATCH', `/api/v1/webhooks/${created.id}`, { token: key, body: { status: 'PAUSED' } })
  assert.is(res.status, 400)
  // A disabled endpoint cannot be pinged until it is active again.
  res = await call('POST', `/api/v1/webhooks/${created.id}/test`, { token: key })
  assert.is(res.status, 400)
  assert.is(res.json.code, 'validation_failed')
})

test('test, deliveries and redeliver answer as documented', async () => {
  const created = (await call('POST', '/api/v1/webhooks', { token: key, body: { url: LOCAL_URL } })).json
  const ping = await call('POST', `/api/v1/webhooks/${created.id}/test`, { token: key })
  assert.is(ping.status, 200, ping.text)
  assert.is(ping.json.event_type, 'webhook.ping')
  assert.match(ping.json.event_id, /^evt_/)
  const list = await call('GET', `/api/v1/webhooks/${created.id}/deliveries`, { token: key })
  assert.is(list.json[0].id, ping.json.id)
  await call('GET', `/api/v1/webhooks/${created.id}/deliveries?status=PENDING&limit=5`, { token: key })
  await call('GET', `/api/v1/webhooks/${created.id}/deliveries/${ping.json.id}`, { token: key })
  const again = await call('POST', `/api/v1/webhooks/${created.id}/deliveries/${ping.json.id}/redeliver`, { token: key })
  assert.is(again.json.redelivery_of, ping.json.id)
  const rotated = await call('POST', `/api/v1/webhooks/${created.id}/rotate-secret`, { token: key })
  assert.match(rotated.json.signing_secret, /^whsec_/)
  // Deleting the endpoint drops its deliveries with it.
  const removed = await call('DELETE', `/api/v1/webhooks/${created.id}`, { token: key })
  assert.is(removed.json.id, created.id)
  assert.is((await call('GET', `/api/v1/webhooks/${created.id}`, { token: key })).status, 404)
  assert.is((await call('GET', `/api/v1/webhooks/${created.id}/deliveries`, { token: key })).status, 404)
})

test('Idempotency-Key: a replay returns the same webhook with its secret, which is stored only sealed', async () => {
  const headers = { 'idempotency-key': 'wh-create-1' }
  const first = await call('POST', '/api/v1/webhooks', { token: key, body: { url: 'https://127.0.0.2:9/idem' }, headers })
  const replay = await call('POST', '/api/v1/webhooks', { token: key, body: { url: 'https://127.0.0.2:9/idem' }, headers })
  assert.is(replay.status, 200)
  assert.is(replay.headers.get('idempotent-replayed'), 'true')
  assert.is(replay.json.id, first.json.id)
  assert.is(replay.json.signing_secret, first.json.signing_secret)
  const db = await openTestDatabase(server.dataDir, { readonly: true })
  const stored = await db.all<{ body: string }>('SELECT body FROM idempotency_keys')
  await db.close()
  assert.not.ok(
    stored.some((row) => row.body.includes(first.json.signing_secret.slice(6))),
    'the secret is never stored in the clear',
  )
  const rotateHeaders = { 'idempotency-key': 'wh-rotate-1' }
  const rotated = await call('POST', `/api/v1/webhooks/${first.json.id}/rotate-secret`, { token: key, headers: rotateHeaders })
  const rotatedAgain = await call('POST', `/api/v1/webhooks/${first.json.id}/rotate-secret`, { token: key, headers: rotateHeaders })
  assert.is(rotatedAgain.json.signing_secret, rotated.json.signing_secret)
  assert.is(rotatedAgain.json.previous_secret_expires_at, rotated.json.previous_secret_expires_at)
  assert.is(
    await call('POST', '/api/v1/webhooks', { token: key, body: { url: 'https://127.0.0.2:9/other' }, headers }).then((r) => r.json.code),
    'idempotency_conflict',
  )
})

test('scopes and roles: webhooks:write or an owner/admin session; viewers and other keys are refused', async () => {
  const readOnly = await acme.key(['signals:read', 'trades:read', 'risk:admin'])
  for (const [method, path] of [
    ['GET', '/api/v1/webhooks'],
    ['POST', '/api/v1/webhooks'],
  ] as const) {
    const res = await call(method, path, { token: readOnly, body: method === 'POST' ? { url: PUBLIC_URL } : undefined })
    assert.is(res.status, 403)
    assert.is(res.json.code, 'insufficient_scope')
  }
  const made = await cli(['user', 'create', 'viewer@acme.test', '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'viewer-password-1',
  })
  assert.is(made.code, 0, made.stderr)
  const viewer = await login(server, 'viewer@acme.test', 'viewer-password-1')
  for (const [method, path] of [
    ['GET', '/api/v1/webhooks'],
    ['POST', '/api/v1/webhooks'],
  ] as const) {
    const res = await call(method, path, { token: viewer, body: method === 'POST' ? { url: PUBLIC_URL } : undefined })
    assert.is(res.status, 403)
    assert.is(res.json.code, 'forbidden_role')
  }
  const revokable = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'short', scopes: ['webhooks:write'] } })
  await api('DELETE', `/api/v1/auth/api-tokens/${revokable.json.id}`, { token: acme.jwt })
  const revoked = await call('GET', '/api/v1/webhooks', { token: revokable.json.token })
  assert.is(revoked.status, 401)
  assert.is((await call('GET', '/api/v1/webhooks')).status, 401)
})

test("another tenant's endpoint is not found, whatever the operation", async () => {
  const mine = (await call('POST', '/api/v1/webhooks', { token: key, body: { url: LOCAL_URL } })).json
  const ping = (await call('POST', `/api/v1/webhooks/${mine.id}/test`, { token: key })).json
  const theirs = await other.key(['webhooks:write'])
  const attempts: [string, string, unknown?][] = [
    ['GET', `/api/v1/webhooks/${mine.id}`],
    ['PATCH', `/api/v1/webhooks/${mine.id}`, { status: 'DISABLED' }],
    ['DELETE', `/api/v1/webhooks/${mine.id}`],
    ['POST', `/api/v1/webhooks/${mine.id}/rotate-secret`],
    ['POST', `/api/v1/webhooks/${mine.id}/test`],
    ['GET', `/api/v1/webhooks/${mine.id}/deliveries`],
    ['GET', `/api/v1/webhooks/${mine.id}/deliveries/${ping.id}`],
    ['POST', `/api/v1/webhooks/${mine.id}/deliveries/${ping.id}/redeliver`],
    ['GET', '/api/v1/webhooks/wh_not-an-id'],
    ['GET', `/api/v1/webhooks/${mine.id}/deliveries/dlv_nope`],
  ]
  for (const [method, path, body] of attempts) {
    for (const token of [theirs, other.jwt]) {
      const res = await call(method, path, { token, body })
      assert.is(res.status, 404, `${method} ${path}: ${res.text}`)
      assert.is(res.json.code, 'not_found')
    }
  }
  assert.ok(!(await call('GET', '/api/v1/webhooks', { token: theirs })).json.some((h: any) => h.id === mine.id))
  assert.is((await call('GET', `/api/v1/webhooks/${mine.id}`, { token: key })).json.status, 'ACTIVE', 'untouched')
})

test('serve refuses a bad --webhook-allow-cidr or --webhook-ca-file with exit 2', async () => {
  for (const args of [
    ['--webhook-allow-cidr', '10.0.0.0/33'],
    ['--webhook-allow-cidr', 'lan'],
    ['--webhook-ca-file', '/nonexistent/ca.pem'],
  ]) {
    const res = await cli(['serve', '--port', '0', ...args], { dataDir: `${server.dataDir}-unused` })
    assert.is(res.code, 2, res.stderr)
    assert.match(res.stderr, /--webhook-/)
  }
})

test.run()
