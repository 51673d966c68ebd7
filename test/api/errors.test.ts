// Bad input answered with precise problem+json, never a 500 and never a half-applied change.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { client, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'

const test = suite('api: errors')
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture
let solo: TenantFixture

test.before(async () => {
  server = await startServer()
  api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  solo = await tenantFixture(server, 'solo', 'SIGNAL')
})
test.after(async () => {
  await server.stop()
})

function isProblem(res: { status: number; headers: Headers; json: any }, status: number, code: string) {
  assert.is(res.status, status, JSON.stringify(res.json))
  assert.is(res.headers.get('content-type'), 'application/problem+json')
  assert.is(res.json.status, status)
  assert.is(res.json.code, code)
  assert.is(res.json.type, 'about:blank')
  assert.ok(res.json.title)
  assert.ok(res.json.detail.length > 5)
  assert.match(res.json.request_id, /\S/)
  assert.is(res.json.request_id, res.headers.get('x-request-id'))
  assert.not.match(JSON.stringify(res.json), /at .*\.ts:\d+/, 'no stack trace')
}

test('unknown path is 404, unknown method is 405 with Allow', async () => {
  isProblem(await api('GET', '/api/v1/nope'), 404, 'not_found')
  isProblem(await api('GET', '/api/v2/models'), 404, 'not_found')
  const res = await api('POST', '/api/v1/models', { token: acme.jwt, body: {} })
  isProblem(res, 405, 'method_not_allowed')
  assert.is(res.headers.get('allow'), 'GET, HEAD')
})

test('malformed JSON is 400 invalid_json', async () => {
  isProblem(
    await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, raw: '{"max_open_trades": ', headers: { 'content-type': 'application/json' } }),
    400,
    'invalid_json',
  )
  isProblem(
    await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, raw: "{'a':1}", headers: { 'content-type': 'application/json' } }),
    400,
    'invalid_json',
  )
})

test('wrong types are 400 validation_failed with every field named', async () => {
  const res = await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: '7', max_exposure_usd: -5 } })
  isProblem(res, 400, 'validation_failed')
  const fields = res.json.errors.map((e: any) => e.field).sort()
  assert.equal(fields, ['max_exposure_usd', 'max_open_trades'])
  isProblem(await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 2.5 } }), 400, 'validation_failed')
  isProblem(await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: {} }), 400, 'validation_failed')
  isProblem(await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: [1] }), 400, 'validation_failed')
  isProblem(
    await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, raw: '{"max_exposure_usd": 1e400}', headers: { 'content-type': 'application/json' } }),
    400,
    'validation_failed',
  )
})

test('unknown fields are refused, and nothing is applied', async () => {
  const before = (await api('GET', '/api/v1/risk/profile', { token: acme.jwt })).json
  const res = await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 9, trading_paused: true } })
  isProblem(res, 400, 'unknown_field')
  assert.match(res.json.detail, /trading_paused/)
  const after = (await api('GET', '/api/v1/risk/profile', { token: acme.jwt })).json
  assert.equal(after, before)
  const incidents = (await api('GET', '/api/v1/risk/incidents', { token: acme.jwt })).json
  assert.is(incidents.length, 0, 'no incident for a refused change')
})

test('unknown and malformed query parameters are 400', async () => {
  const key = await acme.key(['signals:read'])
  isProblem(await api('GET', '/api/v1/signals?foo=1', { token: key }), 400, 'unknown_field')
  isProblem(await api('GET', '/api/v1/signals?limit=0', { token: key }), 400, 'validation_failed')
  isProblem(await api('GET', '/api/v1/signals?limit=1001', { token: key }), 400, 'validation_failed')
  isProblem(await api('GET', '/api/v1/signals?limit=abc', { token: key }), 400, 'validation_failed')
  isProblem(await api('GET', '/api/v1/signals?cursor=bm90LWFuLWlk', { token: key }), 400, 'validation_failed')
  isProblem(await api('GET', '/api/v1/signals?since=yesterday', { token: key }), 400, 'validation_failed')
  isProblem(await api('GET', '/api/v1/signals?pair=btcusdt', { token: key }), 400, 'validation_failed')
  isProblem(await api('GET', '/api/v1/signals?limit=1&limit=2', { token: key }), 400, 'validation_failed')
})

test('a model not active in the workspace is 404 on signals', async () => {
  const key = await acme.key(['signals:read'])
  isProblem(await api('GET', '/api/v1/signals?model_id=trend-follower', { token: key }), 404, 'not_found')
})

test('415 for a body that is not JSON, 413 over 64 KiB', async () => {
  isProblem(
    await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, raw: 'max_open_trades=3', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
    415,
    'unsupported_media_type',
  )
  isProblem(await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, raw: '{}' }), 415, 'unsupported_media_type')
  const big = JSON.stringify({ name: 'x'.repeat(70 * 1024), scopes: ['signals:read'] })
  isProblem(
    await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, raw: big, headers: { 'content-type': 'application/json' } }),
    413,
    'payload_too_large',
  )
  assert.is((await api('GET', '/api/v1/health')).status, 200, 'server still up')
})

test('a missing body where one is required is 400', async () => {
  isProblem(await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt }), 400, 'validation_failed')
})

test('api tokens: unknown scopes, past expiry, empty name', async () => {
  isProblem(await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'x', scopes: ['admin:all'] } }), 400, 'validation_failed')
  isProblem(await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'x', scopes: [] } }), 400, 'validation_failed')
  isProblem(await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: '', scopes: ['signals:read'] } }), 400, 'validation_failed')
  isProblem(
    await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'x', scopes: ['signals:read'], expires_at: '2020-01-01T00:00:00Z' } }),
    400,
    'validation_failed',
  )
  isProblem(
    await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'x', scopes: ['signals:read', 'signals:read'] } }),
    400,
    'validation_failed',
  )
  isProblem(await api('DELETE', '/api/v1/auth/api-tokens/tok_nope', { token: acme.jwt }), 404, 'not_found')
})

test('workspace: plan limits and unknown models', async () => {
  const res = await api('PUT', '/api/v1/workspace/models', { token: solo.jwt, body: { model_ids: ['trend-follower', 'mean-reversion'] } })
  isProblem(res, 409, 'plan_limit_exceeded')
  assert.match(res.json.detail, /SIGNAL allows at most 1/)
  assert.equal((await api('GET', '/api/v1/workspace', { token: solo.jwt })).json.active_model_ids, [])
  isProblem(await api('PUT', '/api/v1/workspace/models', { token: solo.jwt, body: { model_ids: ['no-such-model'] } }), 400, 'validation_failed')
  assert.is((await api('PUT', '/api/v1/workspace/models', { token: solo.jwt, body: { model_ids: ['trend-follower'] } })).status, 200)
  const six = ['trend-follower', 'mean-reversion', 'breakout-momentum']
  assert.is((await api('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: six } })).status, 200)
})

test('login: wrong password and unknown e-mail look the same', async () => {
  const wrong = await api('POST', '/api/v1/auth/login', { body: { email: acme.ownerEmail, password: 'wrong-password' } })
  const unknown = await api('POST', '/api/v1/auth/login', { body: { email: 'nobody@acme.test', password: 'wrong-password' } })
  isProblem(wrong, 401, 'unauthenticated')
  isProblem(unknown, 401, 'unauthenticated')
  assert.is(wrong.json.detail, unknown.json.detail)
})

test('Idempotency-Key must be printable ASCII', async () => {
  isProblem(
    await api('POST', '/api/v1/auth/api-tokens', {
      token: acme.jwt,
      body: { name: 'x', scopes: ['signals:read'] },
      headers: { 'idempotency-key': 'x'.repeat(300) },
    }),
    400,
    'validation_failed',
  )
})

test.run()
