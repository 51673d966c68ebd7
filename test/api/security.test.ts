// Security cases for every foundation route: no credential, bad key, revoked, expired, wrong scope,
// API key where a session is required, viewer role, alg none, tampered and foreign JWTs, another
// tenant's ids, rate limits, and no secret in any log line.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SignJWT } from 'jose'
import { crc32 } from 'node:zlib'
import { openTestDatabase } from '../support/database.ts'
import { cli, client, login, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'

const test = suite('api: security')
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture
let globex: TenantFixture

// Every authenticated foundation route, with a body that would be valid for it.
const ROUTES: { method: string; path: string; body?: unknown; scope: string | null; session?: boolean; write?: boolean }[] = [
  { method: 'GET', path: '/api/v1/models', scope: null },
  { method: 'GET', path: '/api/v1/workspace', scope: null },
  { method: 'PUT', path: '/api/v1/workspace/models', body: { model_ids: [] }, scope: null, session: true, write: true },
  { method: 'GET', path: '/api/v1/signals', scope: 'signals:read' },
  { method: 'GET', path: '/api/v1/trades', scope: 'trades:read' },
  { method: 'GET', path: '/api/v1/risk/profile', scope: 'risk:read' },
  { method: 'PATCH', path: '/api/v1/risk/profile', body: { max_open_trades: 6 }, scope: 'risk:admin', write: true },
  { method: 'GET', path: '/api/v1/risk/incidents', scope: 'risk:read' },
  { method: 'GET', path: '/api/v1/risk/incidents/verify', scope: 'risk:read' },
  { method: 'GET', path: '/api/v1/risk/incidents/export', scope: 'risk:read' },
  { method: 'GET', path: '/api/v1/auth/api-tokens', scope: null, session: true, write: true },
  { method: 'POST', path: '/api/v1/auth/api-tokens', body: { name: 'n', scopes: ['signals:read'] }, scope: null, session: true, write: true },
]

function signingKey(): Uint8Array {
  return Buffer.from(readFileSync(join(server.dataDir, 'jwt-signing.key'), 'utf8').trim(), 'base64')
}

// An independent few lines of the key format: sk_live_ + 32 base62 + base62 CRC32 in 6 characters.
function keyWithChecksum(body: string): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
  let n = crc32(body)
  let sum = ''
  for (let i = 0; i < 6; i++) {
    sum = alphabet[n % 62] + sum
    n = Math.floor(n / 62)
  }
  return body + sum
}

function claimsOf(jwt: string): any {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString())
}

test.before(async () => {
  server = await startServer()
  api = client(server)
  acme = await tenantFixture(server, 'acme')
  globex = await tenantFixture(server, 'globex')
})
test.after(async () => {
  await server.stop()
})

test('no credential, malformed header and unknown keys are 401 with WWW-Authenticate', async () => {
  for (const r of ROUTES) {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Basic abc' },
      { authorization: 'Bearer' },
      { authorization: `Bearer sk_live_${'A'.repeat(38)}` },
    ]) {
      const res = await api(r.method, r.path, { body: r.body, headers })
      assert.is(res.status, 401, `${r.method} ${r.path} ${JSON.stringify(headers)}`)
      assert.is(res.json.code, 'unauthenticated')
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/)
    }
  }
})

test('a key with a valid checksum that was never issued is 401', async () => {
  const neverIssued = keyWithChecksum(`sk_live_${'Q7'.repeat(16)}`)
  const res = await api('GET', '/api/v1/signals', { token: neverIssued })
  assert.is(res.status, 401)
  assert.is(res.json.code, 'unauthenticated')
  // One character changed in a real key (always a different one): the checksum no longer matches.
  const real = await acme.key(['signals:read'])
  assert.is(keyWithChecksum(real.slice(0, -6)), real, 'the test computes checksums as the server does')
  const swapped = real.slice(0, 8) + (real[8] === 'Z' ? 'Y' : 'Z') + real.slice(9)
  assert.is.not(swapped, real)
  assert.is((await api('GET', '/api/v1/signals', { token: swapped })).status, 401)
})

test('wrong scope is 403 insufficient_scope; the right scope passes', async () => {
  for (const r of ROUTES.filter((x) => x.scope)) {
    const other = r.scope === 'signals:read' ? 'trades:read' : 'signals:read'
    const wrong = await acme.key([other])
    const res = await api(r.method, r.path, { token: wrong, body: r.body })
    assert.is(res.status, 403, `${r.method} ${r.path}`)
    assert.is(res.json.code, 'insufficient_scope')
    assert.match(res.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/)
    const right = await acme.key([r.scope!])
    assert.is((await api(r.method, r.path, { token: right, body: r.body })).status, 200, `${r.method} ${r.path} with ${r.scope}`)
  }
  // risk:admin also reads.
  const admin = await acme.key(['risk:admin'])
  assert.is((await api('GET', '/api/v1/risk/profile', { token: admin })).status, 200)
})

test('an API key where a user session is required is 403 session_required', async () => {
  const key = await acme.key(['signals:read', 'trades:read', 'orders:write', 'risk:read', 'risk:admin', 'webhooks:write'])
  for (const r of ROUTES.filter((x) => x.session)) {
    const res = await api(r.method, r.path, { token: key, body: r.body })
    assert.is(res.status, 403, `${r.method} ${r.path}`)
    assert.is(res.json.code, 'session_required')
  }
})

test('a viewer session reads but may not change anything', async () => {
  const email = 'viewer@acme.test'
  const created = await cli(['user', 'create', email, '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'viewer-password-1',
  })
  assert.is(created.code, 0, created.stderr)
  const jwt = await login(server, email, 'viewer-password-1')
  for (const r of ROUTES) {
    const res = await api(r.method, r.path, { token: jwt, body: r.body })
    if (r.write) {
      assert.is(res.status, 403, `${r.method} ${r.path}`)
      assert.is(res.json.code, 'forbidden_role')
    } else {
      assert.is(res.status, 200, `${r.method} ${r.path}`)
    }
  }
})

test('revoked keys are refused at once', async () => {
  const res = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'to-revoke', scopes: ['signals:read'] } })
  const { id, token } = res.json
  assert.is((await api('GET', '/api/v1/signals', { token })).status, 200)
  assert.is((await api('DELETE', `/api/v1/auth/api-tokens/${id}`, { token: acme.jwt })).status, 200)
  const after = await api('GET', '/api/v1/signals', { token })
  assert.is(after.status, 401)
  assert.is(after.json.code, 'unauthenticated')
})

test('expired keys are refused', async () => {
  const res = await api('POST', '/api/v1/auth/api-tokens', {
    token: acme.jwt,
    body: { name: 'short', scopes: ['signals:read'], expires_at: new Date(Date.now() + 60_000).toISOString() },
  })
  const { id, token } = res.json
  assert.is((await api('GET', '/api/v1/signals', { token })).status, 200)
  // Move its expiry into the past in the real database.
  const db = await openTestDatabase(server.dataDir)
  assert.is((await db.run('UPDATE api_keys SET expires_at = ? WHERE id = ?', [new Date(Date.now() - 1000).toISOString(), id])).changes, 1)
  await db.close()
  assert.is((await api('GET', '/api/v1/signals', { token })).status, 401)
})

test('last_used_at is recorded', async () => {
  const res = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'used', scopes: ['signals:read'] } })
  assert.is((await api('GET', '/api/v1/auth/api-tokens', { token: acme.jwt })).json.find((t: any) => t.id === res.json.id).last_used_at, null)
  const before = Date.now()
  await api('GET', '/api/v1/signals', { token: res.json.token })
  // The guard records the use in a write of its own that the request does not await (on
  // PostgreSQL it may commit a moment after the answer): soon, not necessarily at once.
  let record: any
  for (const deadline = Date.now() + 3000; ; await new Promise((r) => setTimeout(r, 50))) {
    const list = await api('GET', '/api/v1/auth/api-tokens', { token: acme.jwt })
    record = list.json.find((t: any) => t.id === res.json.id)
    if (record.last_used_at || Date.now() > deadline) break
  }
  assert.ok(record.last_used_at, 'recorded within 3 s')
  assert.ok(Date.parse(record.last_used_at) >= before - 1000 && Date.parse(record.last_used_at) <= Date.now() + 1000, record.last_used_at)
})

test('JWTs: alg none, tampered, wrong issuer, wrong audience, expired, foreign key are 401', async () => {
  const claims = claimsOf(acme.jwt)
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`
  const [h, , s] = acme.jwt.split('.')
  const tampered = `${h}.${b64({ ...claims, tid: 'ten_other', role: 'owner' })}.${s}`
  const key = signingKey()
  const sign = (payload: Record<string, unknown>, options: { iss?: string; aud?: string; exp?: number; alg?: string } = {}) =>
    new SignJWT(payload)
      .setProtectedHeader({ alg: options.alg ?? 'HS256' })
      .setIssuer(options.iss ?? 'bulwark')
      .setAudience(options.aud ?? 'bulwark-api')
      .setSubject(claims.sub)
      .setIssuedAt()
      .setJti('j')
      .setExpirationTime(options.exp ?? Math.floor(Date.now() / 1000) + 600)
  const base = { tid: claims.tid, role: 'owner', email: claims.email }
  const tokens = {
    none,
    tampered,
    wrongIssuer: await sign(base, { iss: 'someone-else' }).sign(key),
    wrongAudience: await sign(base, { aud: 'other-api' }).sign(key),
    expired: await sign(base, { exp: Math.floor(Date.now() / 1000) - 10 }).sign(key),
    foreignKey: await sign(base).sign(new Uint8Array(32).fill(7)),
    hs512: await sign(base, { alg: 'HS512' }).sign(new Uint8Array(64).fill(Buffer.from(key)[0])),
    crossTenant: await sign({ ...base, tid: claimsOf(globex.jwt).tid }).sign(key),
  }
  for (const [name, token] of Object.entries(tokens)) {
    const res = await api('GET', '/api/v1/workspace', { token })
    assert.is(res.status, 401, name)
    assert.is(res.json.code, 'unauthenticated', name)
  }
  // Control: a token we sign correctly is accepted, so the refusals above are meaningful.
  assert.is((await api('GET', '/api/v1/workspace', { token: await sign(base).sign(key) })).status, 200)
})

test("another tenant's ids are 404 and its data never shows", async () => {
  const res = await api('POST', '/api/v1/auth/api-tokens', { token: globex.jwt, body: { name: 'globex-bot', scopes: ['signals:read'] } })
  const globexKeyId = res.json.id
  const del = await api('DELETE', `/api/v1/auth/api-tokens/${globexKeyId}`, { token: acme.jwt })
  assert.is(del.status, 404)
  assert.is(del.json.code, 'not_found')
  assert.is((await api('GET', '/api/v1/signals', { token: res.json.token })).status, 200, 'still alive: acme could not revoke it')
  const acmeList = await api('GET', '/api/v1/auth/api-tokens', { token: acme.jwt })
  assert.not.ok(acmeList.json.some((t: any) => t.id === globexKeyId))
  assert.is((await api('GET', '/api/v1/workspace', { token: globex.jwt })).json.slug, 'globex')
  // A change by acme leaves globex untouched.
  await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 2 } })
  assert.is((await api('GET', '/api/v1/risk/profile', { token: globex.jwt })).json.max_open_trades, 5)
  assert.is((await api('GET', '/api/v1/risk/incidents', { token: globex.jwt })).json.length, 0)
})

test('signals of models active only in another workspace never show', async () => {
  const db = await openTestDatabase(server.dataDir)
  const zeros = '0'.repeat(64)
  await db.run(
    `INSERT INTO signals (id, model_id, pair, action, direction, entry_price, as_of, created_at, model_version, model_hash, chain_seq, prev_hash, hash)
      VALUES ('sig_01M9000000000000000000000X', 'mean-reversion', 'ADA/USDT', 'HOLD', 'HOLD', 1, '2026-11-01', '2026-11-01T00:10:00.000Z', '1.0.0', ?, 1, ?, ?)`,
    [zeros, zeros, zeros],
  )
  await db.close()
  await api('PUT', '/api/v1/workspace/models', { token: globex.jwt, body: { model_ids: ['mean-reversion'] } })
  await api('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: ['trend-follower'] } })
  const acmeKey = await acme.key(['signals:read'])
  const globexKey = await globex.key(['signals:read'])
  assert.is((await api('GET', '/api/v1/signals', { token: acmeKey })).json.length, 0)
  assert.is((await api('GET', '/api/v1/signals', { token: globexKey })).json.length, 1)
  assert.is((await api('GET', '/api/v1/signals?model_id=mean-reversion', { token: acmeKey })).status, 404)
})

test('no secret appears in any log line', async () => {
  const res = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'log-check', scopes: ['signals:read'] } })
  await api('GET', '/api/v1/signals', { token: res.json.token })
  await api('POST', '/api/v1/auth/login', { body: { email: acme.ownerEmail, password: acme.password } })
  await new Promise((r) => setTimeout(r, 100))
  const log = server.output()
  assert.ok(log.includes('"route":"/api/v1/signals"'), 'requests are logged')
  for (const secret of [
    res.json.token,
    acme.password,
    acme.jwt,
    acme.jwt.split('.')[2],
    readFileSync(join(server.dataDir, 'jwt-signing.key'), 'utf8').trim(),
  ]) {
    assert.not.ok(log.includes(secret), 'a secret leaked into the log')
  }
})

test('rate limits: per credential and per address for login, with RateLimit headers', async () => {
  const limited = await startServer({ args: ['--rate-limit', '3', '--login-rate-limit', '2'] })
  try {
    const tenant = await tenantFixture(limited, 'rl')
    const key = await tenant.key(['signals:read']) // the fixture's login and key creation used the session's budget
    const call = () => client(limited)('GET', '/api/v1/signals', { token: key })
    let first = await call()
    if (Number(first.headers.get('ratelimit-reset')) < 5) {
      // Windows are whole minutes: start the count at the top of a fresh one so it cannot reset mid-test.
      await new Promise((r) => setTimeout(r, Number(first.headers.get('ratelimit-reset')) * 1000 + 200))
      first = await call()
    }
    assert.is(first.headers.get('ratelimit-limit'), '3')
    assert.is(first.headers.get('ratelimit-remaining'), '2')
    assert.ok(Number(first.headers.get('ratelimit-reset')) > 0)
    await call()
    await call()
    const over = await call()
    assert.is(over.status, 429)
    assert.is(over.json.code, 'rate_limited')
    assert.ok(Number(over.headers.get('retry-after')) > 0)
    assert.is(over.headers.get('ratelimit-remaining'), '0')
    // Another credential (the owner's session) keeps its own budget.
    const workspace = await client(limited)('GET', '/api/v1/workspace', { token: tenant.jwt })
    assert.is(workspace.status, 200)
    // Three logins in a row from one address, limit 2: the third is refused whatever came before.
    const attempt = () => client(limited)('POST', '/api/v1/auth/login', { body: { email: 'x@y.z', password: 'nope' } })
    const logins = [await attempt(), await attempt(), await attempt()]
    assert.ok(logins.slice(0, 2).every((r) => r.status === 401 || r.status === 429))
    assert.is(logins[2].status, 429)
    assert.is(logins[2].json.code, 'rate_limited')
  } finally {
    await limited.stop()
  }
})

test('refusals to a known credential carry its RateLimit headers too', async () => {
  const key = await acme.key(['signals:read'])
  const refusals = [
    await api('GET', '/api/v1/signals?limit=0', { token: key }), // 400 validation
    await api('GET', '/api/v1/signals?model_id=no-such-model', { token: key }), // 404
    await api('GET', '/api/v1/trades', { token: key }), // 403 scope
  ]
  assert.equal(
    refusals.map((r) => r.status),
    [400, 404, 403],
  )
  for (const res of refusals) {
    const limit = Number(res.headers.get('ratelimit-limit'))
    assert.ok(limit > 0, `${res.status} has RateLimit-Limit`)
    assert.ok(Number(res.headers.get('ratelimit-remaining')) < limit, 'the refusal counted against the budget')
    assert.ok(Number(res.headers.get('ratelimit-reset')) > 0)
  }
  // Without a known credential there is no budget to report.
  assert.is((await api('GET', '/api/v1/signals')).headers.get('ratelimit-limit'), null)
})

test('health is public and never needs a credential', async () => {
  assert.is((await api('GET', '/api/v1/health', { headers: { authorization: 'Bearer garbage' } })).status, 200)
})

test.run()
