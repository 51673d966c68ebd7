// Every status the OpenAPI document gives an operation, provoked through a real server wherever it
// can be, each answer validated against the document's schema for that status (the oracle is
// strict: a status the operation does not document fails). The last test checks the converse: the
// documented statuses never provoked are exactly the ones whyNotProvoked lists, with the reason.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SCOPES } from '../../src/auth/scopes.ts'
import { openTestDatabase } from '../support/database.ts'
import { cli, client, login, startServer, tempDir, tenantFixture, type Res, type Server, type TenantFixture } from '../support/harness.ts'
import { fill, ResponseOracle, type Operation } from '../support/openapi.ts'

const test = suite('api: openapi statuses')
let server: Server
let acme: TenantFixture
let small: TenantFixture
let viewer: string
let allKey: string
let oracle: ResponseOracle
let call: ReturnType<ResponseOracle['checked']>
type Call = typeof call
const FAKE_ID = 'xyz_01M80000000000000000000000'
const SEED = 'statuses-seed'
const LOCAL_HOOK = 'https://127.0.0.1:9/hook'

/** A body each operation accepts, for probes that must get past validation (nothing is executed). */
const VALID: Record<string, unknown> = {
  'POST /api/v1/auth/login': { email: 'owner@acme.test', password: 'wrong-password' },
  'POST /api/v1/auth/api-tokens': { name: 'probe', scopes: ['signals:read'] },
  'PUT /api/v1/workspace/models': { model_ids: ['trend-follower'] },
  'PATCH /api/v1/risk/profile': { max_open_trades: 5 },
  'POST /api/v1/risk/kill-switch': { action: 'PAUSE', pause: true },
  'PUT /api/v1/risk/dead-man-switch': { timeout_seconds: 60, action: 'CANCEL_AND_PAUSE' },
  'POST /api/v1/orders': { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', notional_usd: 10 },
  'POST /api/v1/webhooks': { url: LOCAL_HOOK },
  'PATCH /api/v1/webhooks/{id}': { description: 'probe' },
  'POST /api/v1/backtests': { model_id: 'trend-follower', from: '2025-01-01', to: '2025-01-31' },
  'POST /api/v1/gateway/keys': { name: 'probe' },
  'POST /api/v1/alert-hooks': { name: 'probe', mode: 'PAPER' },
}

const isPublic = (o: Operation) => Array.isArray(o.op.security) && o.op.security.length === 0
const documents = (o: Operation, status: number) => Object.hasOwn(o.op.responses, String(status))
/** The problem codes the document gives a status of an operation. */
const codes = (o: Operation, status: number): string[] =>
  o.op.responses[status]?.content?.['application/problem+json']?.schema.allOf[1].properties.code.enum ?? []

/**
 * Documented but not provoked here, and why:
 * - 500 internal, everywhere: only a bug answers it.
 * - 503 of the reads with a credential: service_unavailable needs serve --oidc-issuer and a provider
 *   whose keys cannot be fetched (test/api/oidc.test.ts provokes it). The changes' 503
 *   database_busy and health's 503 are provoked below, by holding the write lock from this process;
 *   on PostgreSQL (database_unavailable), by holding every table locked.
 * - 404 of the operations below: "tenant not found" and "risk profile not found" need a tenant
 *   without the rows every tenant gets when it is created, which no request or command can make.
 */
const TENANT_ROWS_404 = new Set([
  'GET /api/v1/workspace',
  'PUT /api/v1/workspace/models',
  'GET /api/v1/risk/profile',
  'PATCH /api/v1/risk/profile',
  'POST /api/v1/risk/kill-switch',
  'POST /api/v1/orders',
])
function whyNotProvoked(o: Operation, status: number): string | undefined {
  if (status === 500) return 'only a bug'
  if (status === 409 && o.path === '/api/v1/venue') return 'LIVE orders on a venue: test/venue/live-orders.test.ts provokes live_orders_open'
  if (status === 422 && o.path === '/api/v1/venue') return 'a venue that answers: test/venue/accounts.test.ts provokes venue_rejected and venue_key_unsafe'
  const ownStatus = (o.op.responses[503] as { content?: Record<string, unknown> } | undefined)?.content?.['application/json'] !== undefined
  if (status === 503 && isPublic(o) && !ownStatus && codes(o, 503).join() === 'database_unavailable')
    return 'a PostgreSQL that does not answer: test/cluster/ provokes database_unavailable'
  if (status === 503 && !codes(o, 503).includes('database_busy') && !codes(o, 503).includes('venue_unavailable') && !isPublic(o))
    return 'an unreachable OIDC provider'
  if (status === 404 && TENANT_ROWS_404.has(`${o.method} ${o.path}`)) return 'a tenant without its own rows'
  return undefined
}

async function expectProblem(c: Call, method: string, path: string, options: Parameters<Call>[2], status: number, code: string): Promise<Res> {
  const res = await c(method, path, options)
  assert.is(res.status, status, `${method} ${path}: ${res.text.slice(0, 300)}`)
  assert.is(res.json.code, code, `${method} ${path}: ${res.text.slice(0, 300)}`)
  assert.is(res.json.status, status)
  assert.is(res.headers.get('x-request-id'), res.json.request_id)
  return res
}

test.before(async () => {
  // --venue-url: a venue that refuses connections, so nothing ever leaves 127.0.0.1.
  server = await startServer({ args: ['--webhook-allow-cidr', '127.0.0.1/32', '--login-rate-limit', '100', '--venue-url', 'https://127.0.0.1:9'] })
  const api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  small = await tenantFixture(server, 'small', 'SIGNAL')
  allKey = await acme.key([...SCOPES])
  const made = await cli(['user', 'create', 'viewer@acme.test', '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'viewer-password-1',
  })
  assert.is(made.code, 0, made.stderr)
  viewer = await login(server, 'viewer@acme.test', 'viewer-password-1')
  oracle = new ResponseOracle((await api('GET', '/api/v1/openapi.json')).json)
  call = oracle.checked(api)
  // A stored answer under SEED: the same key on any other request of the tenant is then a conflict.
  const seeded = await call('POST', '/api/v1/auth/api-tokens', {
    token: acme.jwt,
    body: { name: 'seed', scopes: ['signals:read'] },
    headers: { 'idempotency-key': SEED },
  })
  assert.is(seeded.status, 200, seeded.text)
})
test.after(async () => {
  await server.stop()
})

test('every operation: the pipeline answers 400, 401, 403, 404, 409, 413 and 415 where documented', async () => {
  const keys = new Map<string, string>()
  const keyWithout = async (scopes: string[]) => {
    const other = SCOPES.filter((s) => !scopes.includes(s))
    if (!keys.has(other.join())) keys.set(other.join(), await acme.key(other))
    return keys.get(other.join())!
  }
  for (const o of oracle.ops) {
    const path = fill(o.path, FAKE_ID)
    const body = VALID[`${o.method} ${o.path}`]
    // Past the guard: the owner's session where API keys are refused, otherwise a key with every scope.
    const token = isPublic(o) ? undefined : codes(o, 403).includes('session_required') ? acme.jwt : allKey
    // Refused before the handler runs, so probing changes nothing.
    const probe = `${path}?openapi_probe=1`
    await expectProblem(call, o.method, probe, { token }, 400, 'unknown_field')
    if (!isPublic(o)) {
      const res = await expectProblem(call, o.method, probe, {}, 401, 'unauthenticated')
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/)
    }
    const refusals = codes(o, 403)
    if (refusals.includes('session_required')) await expectProblem(call, o.method, probe, { token: allKey }, 403, 'session_required')
    if (refusals.includes('insufficient_scope'))
      await expectProblem(call, o.method, probe, { token: await keyWithout(o.op['x-scopes']) }, 403, 'insufficient_scope')
    if (refusals.includes('forbidden_role')) await expectProblem(call, o.method, probe, { token: viewer }, 403, 'forbidden_role')
    if (o.params.length) await expectProblem(call, o.method, path, { token, body }, 404, 'not_found')
    if (codes(o, 409).includes('idempotency_conflict')) {
      await expectProblem(call, o.method, path, { token, body, headers: { 'idempotency-key': SEED } }, 409, 'idempotency_conflict')
    }
    if (documents(o, 413)) {
      await expectProblem(
        call,
        o.method,
        path,
        { token, raw: JSON.stringify({ x: 'y'.repeat(70_000) }), headers: { 'content-type': 'application/json' } },
        413,
        'payload_too_large',
      )
    }
    if (documents(o, 415)) {
      await expectProblem(
        call,
        o.method,
        path,
        { token, raw: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
        415,
        'unsupported_media_type',
      )
    }
  }
})

test('route-specific refusals: 400, 401, 403, 404, 409 and 422 of the handlers', async () => {
  const cases: [string, string, Parameters<Call>[2], number, string][] = [
    ['GET', '/api/v1/signals', { token: 'sk_live_000000000000000000000000000000000000AAAAAA' }, 401, 'unauthenticated'],
    ['POST', '/api/v1/auth/login', { body: { email: 'owner@acme.test', password: 'wrong' } }, 401, 'unauthenticated'],
    ['POST', '/api/v1/auth/login', { body: { email: 'not an email', password: 'x' } }, 400, 'validation_failed'],
    ['GET', '/api/v1/signals?model_id=breakout-momentum', { token: allKey }, 404, 'not_found'],
    ['GET', '/api/v1/signals?limit=0', { token: allKey }, 400, 'validation_failed'],
    ['GET', '/api/v1/signals?cursor=bm90LWEtY3Vyc29y', { token: allKey }, 400, 'validation_failed'],
    ['GET', '/api/v1/signals/export', { token: allKey }, 400, 'validation_failed'],
    ['GET', '/api/v1/signals/export?model_id=breakout-momentum', { token: allKey }, 404, 'not_found'],
    ['PATCH', '/api/v1/risk/profile', { token: acme.jwt, raw: '{"max_open_trades":', headers: { 'content-type': 'application/json' } }, 400, 'invalid_json'],
    ['PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 'many' } }, 400, 'validation_failed'],
    ['PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 3, colour: 'red' } }, 400, 'unknown_field'],
    ['PUT', '/api/v1/workspace/models', { token: small.jwt, body: { model_ids: ['trend-follower', 'mean-reversion'] } }, 409, 'plan_limit_exceeded'],
    ['POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'x', scopes: ['root'] } }, 400, 'validation_failed'],
    ['POST', '/api/v1/orders', { token: await small.key(['orders:write']), body: VALID['POST /api/v1/orders'] }, 403, 'plan_forbids'],
    ['POST', '/api/v1/orders', { token: allKey, body: { pair: 'NOPE/USDT', side: 'BUY', type: 'MARKET', notional_usd: 10 } }, 422, 'no_price'],
    ['DELETE', '/api/v1/venue', { token: acme.jwt }, 404, 'not_found'],
    [
      'PUT',
      '/api/v1/venue',
      { token: acme.jwt, body: { exchange: 'binance', api_key: 'key-12345678', api_secret: 'secret-12345678' } },
      503,
      'venue_unavailable',
    ],
    ['POST', '/api/v1/webhooks', { token: allKey, body: { url: 'http://127.0.0.1:9/hook' } }, 400, 'validation_failed'],
    ['POST', '/api/v1/backtests', { token: allKey, body: { ...(VALID['POST /api/v1/backtests'] as object), model_id: 'no-such-model' } }, 404, 'not_found'],
    [
      'POST',
      '/api/v1/backtests',
      { token: allKey, body: { ...(VALID['POST /api/v1/backtests'] as object), parameters: { fast_ema: 60 } } },
      422,
      'invalid_parameters',
    ],
  ]
  for (const [method, path, options, status, code] of cases) await expectProblem(call, method, path, options, status, code)
})

test('orders: 409 trading_paused while the kill switch holds a model, 422 risk_limit_exceeded past a limit', async () => {
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)
  const file = join(tempDir('candles'), 'candles.csv')
  writeFileSync(file, `pair,date,open,high,low,close,volume\nBTC/USDT,${yesterday},60000,61000,59000,60500,1000\n`)
  const imported = await cli(['prices', 'import', file], { dataDir: server.dataDir })
  assert.is(imported.code, 0, imported.stderr)
  const order = { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', notional_usd: 10, model_id: 'trend-follower' }
  const paused = await call('POST', '/api/v1/risk/kill-switch', { token: allKey, body: { action: 'PAUSE', pause: true, model_id: 'trend-follower' } })
  assert.is(paused.status, 200, paused.text)
  await expectProblem(call, 'POST', '/api/v1/orders', { token: allKey, body: order }, 409, 'trading_paused')
  const resumed = await call('POST', '/api/v1/risk/kill-switch', { token: allKey, body: { action: 'RESUME', pause: false, model_id: 'trend-follower' } })
  assert.is(resumed.status, 200, resumed.text)
  // 10 000 USD is a new tenant's max_exposure_usd.
  await expectProblem(
    call,
    'POST',
    '/api/v1/orders',
    { token: allKey, body: { ...order, model_id: undefined, notional_usd: 20_000 } },
    422,
    'risk_limit_exceeded',
  )
})

test('kill switch: FLATTEN never fails for want of a price: it pauses, and a trade with no price stays open, named', async () => {
  const tenantId = (await call('GET', '/api/v1/workspace', { token: allKey })).json.tenant_id
  const db = await openTestDatabase(server.dataDir)
  const trade = `trd_01M8NP${'0'.repeat(20)}`
  await db.run(
    `INSERT INTO trades (id, tenant_id, model_id, pair, direction, mode, quantity, entry_price, status, opened_at)
    VALUES (?, ?, 'breakout-momentum', 'NOPX/USDT', 'LONG', 'PAPER', 1, 10, 'OPEN', '2026-10-02T00:05:00.000Z')`,
    [trade, tenantId],
  )
  try {
    const flattened = await call('POST', '/api/v1/risk/kill-switch', { token: allKey, body: { action: 'FLATTEN', pause: true, model_id: 'breakout-momentum' } })
    assert.is(flattened.status, 200, flattened.text)
    const profile = await call('GET', '/api/v1/risk/profile', { token: allKey })
    assert.ok(profile.json.paused_model_ids.includes('breakout-momentum'), 'the pause took effect')
    const incidents = await call('GET', '/api/v1/risk/incidents', { token: allKey })
    const reason = incidents.json.find((i: any) => i.id === flattened.json.incident_id).reason
    assert.match(reason, /1 left open with no known price or no venue \(NOPX\/USDT\)/)
    assert.is((await db.get<{ status: string }>('SELECT status FROM trades WHERE id = ?', [trade]))?.status, 'OPEN')
  } finally {
    await call('POST', '/api/v1/risk/kill-switch', { token: allKey, body: { action: 'RESUME', pause: false, model_id: 'breakout-momentum' } })
    await db.run('DELETE FROM trades WHERE id = ?', [trade])
    await db.close()
  }
})

// SQLite: another process holds the write lock (BEGIN IMMEDIATE); each change waits its 5 s and
// gives up, 503 database_busy, and health is DEGRADED. PostgreSQL: another session holds every
// table in ACCESS EXCLUSIVE mode (a change that finds nothing to change reads only, and must wait
// too); each change meets its statement timeout (or the pool's wait for a connection), 503
// database_unavailable.
test('while another process keeps the write lock: every change is 503 database_busy (PostgreSQL: database_unavailable), then health 503 DEGRADED', async () => {
  const db = await openTestDatabase(server.dataDir)
  if (db.engine === 'sqlite') await db.exec('BEGIN IMMEDIATE')
  else {
    const tables = await db.all<{ name: string }>('SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename')
    assert.ok(tables.length >= 20, `${tables.length} tables`)
    await db.exec(`BEGIN; LOCK TABLE ${tables.map((t) => `"${t.name}"`).join(', ')} IN ACCESS EXCLUSIVE MODE`)
  }
  const expected = db.engine === 'sqlite' ? 'database_busy' : 'database_unavailable'
  try {
    // All at once, each past the guard and validation: none can run before the lock is released,
    // so each waits the server's deadline for it and gives up; nothing is written.
    const changes = oracle.ops.filter((o) => codes(o, 503).includes('database_busy'))
    const body = (o: Operation) =>
      o.path === '/api/v1/risk/kill-switch' ? { action: 'CANCEL_ORDERS', pause: false, model_id: 'breakout-momentum' } : VALID[`${o.method} ${o.path}`]
    const answers = await Promise.all(
      changes.map((o) => call(o.method, fill(o.path, FAKE_ID), { token: codes(o, 403).includes('session_required') ? acme.jwt : allKey, body: body(o) })),
    )
    answers.forEach((res, i) => {
      assert.is(res.status, 503, `${changes[i].method} ${changes[i].path}: ${res.text.slice(0, 200)}`)
      assert.is(res.json.code, expected, `${changes[i].method} ${changes[i].path}: ${res.text.slice(0, 200)}`)
      assert.is(res.headers.get('retry-after'), '1')
    })
    assert.ok(changes.length >= 10, `${changes.length} changes`)
    const health = await call('GET', '/api/v1/health')
    assert.is(health.status, 503, health.text)
    // Health's own body either way: DEGRADED, the lock held past a write's wait on SQLite, the reads
    // timing out on PostgreSQL.
    assert.is(health.json.status, 'DEGRADED', health.text)
    assert.is(health.json.database, db.engine === 'sqlite' ? 'busy' : 'unavailable', health.text)
  } finally {
    await db.exec('ROLLBACK')
    await db.close()
  }
  assert.is((await call('GET', '/api/v1/health')).status, 200)
})

test('429 for every operation with a credential and for login; 404 for the public feed when it is off', async () => {
  const other = await startServer({ args: ['--rate-limit', '1', '--login-rate-limit', '2', '--no-public-feed'] })
  try {
    const callOther = oracle.checked(client(other))
    // One budget of one request a minute for the owner's session, which passes every guard; a
    // request that gets through is a harmless 400. Five tries outlast one turn of the minute.
    const owner = await tenantFixture(other, 'limited')
    const limited = async (method: string, path: string, options: Parameters<Call>[2]) => {
      let res: Res | undefined
      for (let i = 0; i < 5 && res?.status !== 429; i++) res = await callOther(method, path, options)
      assert.is(res!.status, 429, `${method} ${path}: ${res!.text.slice(0, 200)}`)
      assert.is(res!.json.code, 'rate_limited')
      assert.ok(Number(res!.headers.get('retry-after')) > 0)
    }
    for (const o of oracle.ops.filter((o) => !isPublic(o))) await limited(o.method, `${fill(o.path, FAKE_ID)}?openapi_probe=1`, { token: owner.jwt })
    // Two a minute for one e-mail (an address gets ten times as many): the third attempt is refused.
    await limited('POST', '/api/v1/auth/login', { body: { email: 'nobody@limited.test', password: 'wrong-password' } })
    await expectProblem(callOther, 'GET', '/', {}, 404, 'not_found')
    await expectProblem(callOther, 'GET', '/api/v1/public/signals', {}, 404, 'not_found')
    await expectProblem(callOther, 'GET', '/api/v1/public/models', {}, 404, 'not_found')
  } finally {
    await other.stop()
  }
})

test('every documented status was provoked above, except the ones whyNotProvoked gives a reason for', () => {
  const missed: string[] = []
  let provoked = 0
  for (const o of oracle.ops) {
    const seen = oracle.seen.get(`${o.method} ${o.path}`) ?? new Set<number>()
    // 200 is the business of test/api/openapi.test.ts.
    for (const status of Object.keys(o.op.responses)
      .map(Number)
      .filter((s) => s !== 200)) {
      const why = whyNotProvoked(o, status)
      if (why) assert.not.ok(seen.has(status), `${o.method} ${o.path} ${status} (listed: ${why}) was provoked; take it off the list`)
      else if (seen.has(status)) provoked++
      else missed.push(`${o.method} ${o.path} ${status}`)
    }
  }
  assert.equal(missed, [], `documented, never provoked, no reason given:\n${missed.join('\n')}`)
  assert.ok(provoked > 150, `${provoked} statuses provoked`)
})

test.run()
