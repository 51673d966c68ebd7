// An operation that takes no body (every POST, PUT, PATCH and DELETE whose spec has none) accepts
// none, an empty body or {}; anything else is 400 (invalid_json for what is not JSON, unknown_field
// for an object with fields, validation_failed for any other JSON value), before any state is read:
// an unknown id still answers 400, and nothing changes. The operations come from the served OpenAPI
// document, so a new one is covered without touching this file.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { client, startServer, tenantFixture, type Res, type Server, type TenantFixture } from '../support/harness.ts'
import { fill, operations, type Operation } from '../support/openapi.ts'

const test = suite('api: operations that take no body')
const FAKE_ID = 'xyz_01M80000000000000000000000'
const JSON_TYPE = { 'content-type': 'application/json' }
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture
let noBody: Operation[]
let tokenId: string

/** Bodies that are not "none, empty or {}", and what each must be answered with. */
const REFUSED: [string, string, string?][] = [
  ['{"timeout_seconds": 5}', 'unknown_field', 'timeout_seconds'],
  ['{"reason": "x", "force": true}', 'unknown_field', 'reason'],
  ['{"": null}', 'unknown_field', ''],
  ['{"__proto__": {}}', 'unknown_field', '__proto__'],
  ['[]', 'validation_failed', 'body'],
  ['[{}]', 'validation_failed', 'body'],
  ['null', 'validation_failed', 'body'],
  ['0', 'validation_failed', 'body'],
  ['"{}"', 'validation_failed', 'body'],
  ['true', 'validation_failed', 'body'],
  ['not json', 'invalid_json'],
  ['{', 'invalid_json'],
  ['{}}', 'invalid_json'],
  [' ', 'invalid_json'],
  ['\n', 'invalid_json'],
  ['timeout_seconds=5', 'invalid_json'],
]

function isRefusal(res: Res, code: string, field: string | undefined, label: string): void {
  assert.is(res.status, 400, `${label}: ${res.text}`)
  assert.is(res.headers.get('content-type'), 'application/problem+json', label)
  assert.is(res.json.code, code, `${label}: ${res.text}`)
  assert.match(res.json.detail, /takes no body|not valid JSON/, label)
  if (field !== undefined)
    assert.ok(
      res.json.errors?.some((e: { field: string }) => e.field === field),
      `${label}: ${res.text}`,
    )
}

/** The path of an operation: a real API token's id where one is asked for (a DELETE that ran would revoke it), else an unknown id. */
function pathOf(o: Operation): string {
  return o.path === '/api/v1/auth/api-tokens/{id}' ? fill(o.path, tokenId) : fill(o.path, FAKE_ID)
}

test.before(async () => {
  server = await startServer()
  api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  const made = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'bot', scopes: ['orders:write'] } })
  tokenId = made.json.id
  const doc = (await api('GET', '/api/v1/openapi.json')).json
  noBody = operations(doc).filter((o) => o.method !== 'GET' && !o.op.requestBody)
})
test.after(async () => {
  await server.stop()
})

test('the document lists the operations that take no body, and each may answer invalid_json', () => {
  const names = noBody.map((o) => `${o.method} ${o.path}`)
  for (const known of [
    'POST /api/v1/risk/dead-man-switch/heartbeat',
    'DELETE /api/v1/risk/dead-man-switch',
    'DELETE /api/v1/venue',
    'DELETE /api/v1/auth/api-tokens/{id}',
    'DELETE /api/v1/orders/{id}',
    'DELETE /api/v1/webhooks/{id}',
    'POST /api/v1/webhooks/{id}/rotate-secret',
    'POST /api/v1/webhooks/{id}/test',
    'POST /api/v1/webhooks/{id}/deliveries/{dlv}/redeliver',
  ]) {
    assert.ok(names.includes(known), `${known} is not among ${names.join(', ')}`)
  }
  for (const o of noBody) assert.match(o.op.responses['400'].description, /invalid_json/, `${o.method} ${o.path}`)
})

test('every one of them refuses any body but {} with 400, before it reads any state; nothing changes', async () => {
  const armed = await api('PUT', '/api/v1/risk/dead-man-switch', { token: acme.jwt, body: { timeout_seconds: 600, action: 'CANCEL_AND_PAUSE' } })
  assert.is(armed.status, 200, armed.text)
  const incidents = (await api('GET', '/api/v1/risk/incidents?limit=1000', { token: acme.jwt })).json.length
  for (const o of noBody) {
    for (const [raw, code, field] of REFUSED) {
      const label = `${o.method} ${o.path} ${JSON.stringify(raw)}`
      isRefusal(await api(o.method, pathOf(o), { token: acme.jwt, raw, headers: JSON_TYPE }), code, field, label)
    }
  }
  const after = await api('GET', '/api/v1/risk/dead-man-switch', { token: acme.jwt })
  assert.is(after.json.status, armed.json.status)
  assert.is(after.json.deadline, armed.json.deadline, 'no heartbeat was taken')
  assert.is((await api('GET', '/api/v1/risk/incidents?limit=1000', { token: acme.jwt })).json.length, incidents, 'no incident was recorded')
  const tokens = (await api('GET', '/api/v1/auth/api-tokens', { token: acme.jwt })).json
  assert.is(tokens.find((t: { id: string }) => t.id === tokenId)?.revoked_at ?? null, null, 'the API key was not revoked')
})

test('none, an empty body and {} are accepted alike, and are one request for Idempotency-Key', async () => {
  const path = '/api/v1/risk/dead-man-switch/heartbeat'
  for (const options of [
    {},
    { raw: '', headers: JSON_TYPE },
    { raw: '{}', headers: JSON_TYPE },
    { raw: ' { } ', headers: { 'content-type': 'application/json; charset=utf-8' } },
  ]) {
    const res = await api('POST', path, { token: acme.jwt, ...options })
    assert.is(res.status, 200, `${JSON.stringify(options)}: ${res.text}`)
    assert.is(res.json.status, 'ARMED')
  }
  const key = { 'idempotency-key': 'heartbeat-once' }
  const first = await api('POST', path, { token: acme.jwt, headers: key })
  assert.is(first.status, 200, first.text)
  const again = await api('POST', path, { token: acme.jwt, raw: '{}', headers: { ...key, ...JSON_TYPE } })
  assert.is(again.status, 200, again.text)
  assert.is(again.headers.get('idempotent-replayed'), 'true')
  assert.is(again.json.deadline, first.json.deadline)
  const other = await api('POST', path, { token: acme.jwt, raw: '{"x":1}', headers: { ...key, ...JSON_TYPE } })
  assert.is(other.status, 400, 'a body with fields is refused before the replay is looked at')
})

test.run()
