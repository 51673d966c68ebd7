// The OpenAPI document against the server that serves it. (a) The route table, read from the route
// registry and probed on the live server, has exactly the document's paths and methods. (b) Real
// answers, successes and problems alike, validate against the document's schemas (ajv, 2020-12);
// test/api/openapi-statuses.test.ts provokes every documented error status of every operation.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { appRoutes } from '../../src/app.ts'
import { commandConfig } from '../../src/config.ts'
import { openSessions } from '../../src/auth/sessions.ts'
import { SCOPES } from '../../src/auth/scopes.ts'
import { openTestDatabase } from '../support/database.ts'
import { cli, client, login, startServer, tempDir, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { fill, isNoRoute, ResponseOracle } from '../support/openapi.ts'

const test = suite('api: openapi document')
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture
let small: TenantFixture
let doc: any
let oracle: ResponseOracle
/** Every answer must match the OpenAPI document. */
let call: ReturnType<ResponseOracle['checked']>
let allKey: string
const FAKE_ID = 'xyz_01M80000000000000000000000'

function documentedRoutes(): string[] {
  return oracle.ops.map((o) => `${o.method} ${o.path}`).sort()
}

test.before(async () => {
  // Loopback allowed as a webhook target so that a webhook (and its deliveries) can be created.
  server = await startServer({ args: ['--webhook-allow-cidr', '127.0.0.1/32'] })
  api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  small = await tenantFixture(server, 'small', 'SIGNAL')
  allKey = await acme.key([...SCOPES])
  const res = await api('GET', '/api/v1/openapi.json')
  assert.is(res.status, 200)
  doc = res.json
  oracle = new ResponseOracle(doc)
  call = oracle.checked(api)
})
test.after(async () => {
  await server.stop()
})

test('the document is OpenAPI 3.1 with unique operation ids', () => {
  assert.is(doc.openapi, '3.1.0')
  assert.ok(doc.info.version)
  const ids = oracle.ops.map((o) => o.op.operationId)
  assert.is(new Set(ids).size, ids.length, 'operationId unique')
  for (const o of oracle.ops) {
    assert.ok(o.op.responses['200'], `${o.method} ${o.path} documents its 200`)
    assert.not.ok('default' in o.op.responses, `${o.method} ${o.path}: every status is spelled out`)
    for (const [status, response] of Object.entries<any>(o.op.responses)) {
      const problem = response.content['application/problem+json']
      if (!problem) continue
      // The description names the codes; the schema admits only those, with that status.
      const { code, status: pinned } = problem.schema.allOf[1].properties
      assert.ok(code.enum.length > 0 && pinned.const === Number(status), `${o.method} ${o.path} ${status}`)
      assert.ok(response.description.startsWith(code.enum.join(', ')), `${o.method} ${o.path} ${status}: ${response.description}`)
    }
    for (const name of o.params)
      assert.ok(
        o.op.parameters.some((p: any) => p.in === 'path' && p.name === name),
        `${o.path} declares {${name}}`,
      )
  }
})

test('every registered route is documented, and every documented operation is registered', () => {
  const dir = tempDir()
  const registered = appRoutes(commandConfig(dir), { sessions: openSessions(dir) })
    .filter((r) => !r.hidden)
    .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`)
    .sort()
  assert.equal(new Set(registered).size, registered.length, 'no route registered twice')
  assert.equal(documentedRoutes(), registered)
})

test('the live server routes every documented operation, guarded as documented', async () => {
  for (const o of oracle.ops) {
    const path = fill(o.path, FAKE_ID)
    const isPublic = Array.isArray(o.op.security) && o.op.security.length === 0
    // Without a credential: public routes answer, the others ask for one (the router matched first).
    let res = await call(o.method, path)
    assert.not.ok(isNoRoute(res), `${o.method} ${o.path} is routed`)
    if (isPublic) assert.is.not(res.status, 401, `${o.method} ${o.path} is public as documented`)
    else {
      assert.is(res.status, 401, `${o.method} ${o.path} needs a credential as documented`)
      assert.ok(res.headers.get('www-authenticate')?.startsWith('Bearer'))
    }
    // With the owner's session. State-changing methods get an unknown query parameter, which is
    // refused before the handler runs, so probing changes nothing.
    const probe = o.method === 'GET' ? path : `${path}?openapi_probe=1`
    res = await call(o.method, probe, { token: acme.jwt })
    assert.not.ok(isNoRoute(res), `${o.method} ${o.path} is routed (${res.text.slice(0, 200)})`)
    assert.is.not(res.status, 401, `${o.method} ${o.path}: ${res.text}`)
    if (o.method !== 'GET') assert.is(res.json?.code, 'unknown_field', `${o.method} ${o.path}: ${res.text}`)
    // The signal export needs its model_id (400 without: openapi-statuses.test.ts).
    if (o.method === 'GET' && o.params.length === 0 && !isPublic && o.path !== '/api/v1/signals/export')
      assert.is(res.status, 200, `${o.method} ${o.path}: ${res.text}`)
  }
})

test('x-scopes: a key with a documented scope passes the guard, a key without one is 403', async () => {
  const keys = new Map<string, string>()
  const keyFor = async (scopes: string[]) => {
    const name = scopes.join(',')
    if (!keys.has(name)) keys.set(name, await acme.key(scopes))
    return keys.get(name)!
  }
  let checked = 0
  for (const o of oracle.ops.filter((o) => Array.isArray(o.op['x-scopes']))) {
    const scopes: string[] = o.op['x-scopes']
    const path = fill(o.path, FAKE_ID) + (o.method === 'GET' ? '' : '?openapi_probe=1')
    const granted = await call(o.method, path, { token: await keyFor([scopes[0]]) })
    assert.ok(granted.status !== 401 && granted.status !== 403, `${o.method} ${o.path} with ${scopes[0]}: ${granted.text}`)
    const other = SCOPES.filter((s) => !scopes.includes(s))
    if (!other.length) continue
    const refused = await call(o.method, path, { token: await keyFor(other) })
    assert.is(refused.status, 403, `${o.method} ${o.path} without ${scopes.join('|')}: ${refused.text}`)
    assert.is(refused.json.code, 'insufficient_scope')
    assert.match(refused.headers.get('www-authenticate') ?? '', /insufficient_scope/)
    checked++
  }
  assert.ok(checked >= 5, `checked ${checked} scoped operations`)
})

test('a documented path answers an undocumented method with 405 and Allow from the document', async () => {
  for (const path of Object.keys(doc.paths)) {
    const concrete = fill(path, FAKE_ID)
    // Every template the concrete path matches contributes its methods (/x/{id} also matches /x/verify).
    const documented = new Set(oracle.ops.filter((o) => o.matcher.test(concrete)).map((o) => o.method))
    if (documented.has('GET')) documented.add('HEAD')
    const missing = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].find((m) => !documented.has(m))
    if (!missing) continue
    const res = await api(missing, concrete, { token: acme.jwt })
    assert.is(res.status, 405, `${missing} ${concrete}: ${res.text}`)
    assert.is(res.json.code, 'method_not_allowed')
    assert.equal(new Set((res.headers.get('allow') ?? '').split(/,\s*/)), documented, `Allow of ${concrete}`)
  }
})

test('successful answers of the foundation routes validate against the document', async () => {
  const ws = await call('GET', '/api/v1/workspace', { token: allKey })
  const tenantId = ws.json.tenant_id
  // Rows straight into the real database, as the publisher and the broker will write them.
  const db = await openTestDatabase(server.dataDir)
  // Placeholder links (chain_seq, zero hashes): new signals must carry them (sql/013); the chain is test/signals/chain.test.ts's.
  const zeros = '0'.repeat(64)
  const signal = (params: unknown[]) =>
    db.run(
      `INSERT INTO signals (id, model_id, pair, action, direction, entry_price, as_of, created_at, model_version, model_hash, chain_seq, prev_hash, hash)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, '1.0.0', ?, ?, ?, ?)`,
      params,
    )
  const trade = (params: unknown[]) =>
    db.run(
      `INSERT INTO trades (id, tenant_id, model_id, pair, direction, mode, quantity, entry_price, exit_price, gross_pnl_pct, pnl_pct, fees_usd, slippage_usd, status, opened_at, closed_at)
      VALUES (?, ?, ?, ?, 'LONG', 'PAPER', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      params,
    )
  const actions = [
    ['ENTER_LONG', 'LONG'],
    ['HOLD', 'HOLD'],
    ['EXIT_LONG', 'DE-RISK'],
  ]
  await db.exec('BEGIN')
  for (let i = 0; i < 12; i++) {
    const day = `2026-10-${String(1 + i).padStart(2, '0')}`
    const [action, direction] = actions[i % 3]
    await signal([
      `sig_01M8${String(i).padStart(2, '0')}00000000000000000000`,
      i % 2 ? 'trend-follower' : 'mean-reversion',
      'BTC/USDT',
      action,
      direction,
      60000.5 + i,
      day,
      `${day}T00:05:00.000Z`,
      zeros,
      i + 1,
      zeros,
      zeros,
    ])
  }
  await trade([
    'trd_01M80000000000000000000000',
    tenantId,
    'trend-follower',
    'ETH/USDT',
    1.5,
    2500,
    null,
    null,
    null,
    0.375,
    0.19,
    'OPEN',
    '2026-10-02T00:05:00.000Z',
    null,
  ])
  await trade([
    'trd_01M80000000000000000000001',
    tenantId,
    null,
    'BTC/USDT',
    0.1,
    60000,
    61000,
    1.67,
    1.52,
    6,
    3,
    'CLOSED',
    '2026-10-01T00:05:00.000Z',
    '2026-10-03T00:05:00.000Z',
  ])
  await db.exec('COMMIT')
  await db.close()

  await call('GET', '/api/v1/health')
  await call('GET', '/api/v1/models', { token: allKey })
  const put = await call('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: ['trend-follower', 'mean-reversion'] } })
  assert.is(put.status, 200)
  await call('GET', '/api/v1/workspace', { token: acme.jwt })
  const signals = await call('GET', '/api/v1/signals?limit=5', { token: allKey })
  assert.is(signals.json.length, 5)
  await call('GET', '/api/v1/signals?model_id=trend-follower&pair=BTC/USDT&since=2026-10-03', { token: acme.jwt })
  const trades = await call('GET', '/api/v1/trades', { token: allKey })
  assert.is(trades.json.length, 2)
  await call('GET', '/api/v1/trades?status=CLOSED', { token: allKey })
  await call('GET', '/api/v1/risk/profile', { token: allKey })
  const patched = await call('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 7, fee_bps: 12.5 } })
  assert.is(patched.json.max_open_trades, 7)
  const incidents = await call('GET', '/api/v1/risk/incidents', { token: allKey })
  assert.ok(incidents.json.length >= 1)
  assert.is((await call('GET', '/api/v1/risk/incidents/verify', { token: allKey })).json.valid, true)
  await call('GET', '/api/v1/risk/incidents/export', { token: allKey })
  const created = await call('POST', '/api/v1/auth/api-tokens', {
    token: acme.jwt,
    body: { name: 'oracle', scopes: ['signals:read'], expires_at: '2099-01-01T00:00:00Z' },
    headers: { 'idempotency-key': 'oa-1' },
  })
  assert.is(created.status, 200)
  const replayed = await call('POST', '/api/v1/auth/api-tokens', {
    token: acme.jwt,
    body: { name: 'oracle', scopes: ['signals:read'], expires_at: '2099-01-01T00:00:00Z' },
    headers: { 'idempotency-key': 'oa-1' },
  })
  assert.is(replayed.json.token, created.json.token)
  await call('GET', '/api/v1/signals', { token: created.json.token })
  await call('GET', '/api/v1/auth/api-tokens?limit=2', { token: acme.jwt })
  const revoked = await call('DELETE', `/api/v1/auth/api-tokens/${created.json.id}`, { token: acme.jwt })
  assert.ok(revoked.json.revoked_at)
  await call('GET', '/api/v1/auth/api-tokens', { token: acme.jwt })
  await call('GET', '/api/v1/openapi.json')
})

test('resources of the other features validate too: an order, a webhook and its deliveries', async () => {
  const has = (method: string, path: string) => oracle.ops.some((o) => o.method === method && o.path === path)
  if (has('POST', '/api/v1/orders')) {
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)
    const file = join(tempDir('candles'), 'candles.csv')
    writeFileSync(file, `pair,date,open,high,low,close,volume\nBTC/USDT,${yesterday},60000,61000,59000,60500,1000\n`)
    const imported = await cli(['prices', 'import', file], { dataDir: server.dataDir })
    assert.is(imported.code, 0, imported.stderr)
    const order = await call('POST', '/api/v1/orders', {
      token: allKey,
      body: { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', notional_usd: 100, model_id: 'trend-follower' },
    })
    assert.is(order.status, 200, order.text)
    await call('GET', `/api/v1/orders/${order.json.id}`, { token: allKey })
    const limit = await call('POST', '/api/v1/orders', {
      token: allKey,
      body: { pair: 'BTC/USDT', side: 'BUY', type: 'LIMIT', quantity: 0.001, limit_price: 1000 },
    })
    if (has('DELETE', '/api/v1/orders/{id}') && limit.status === 200) await call('DELETE', `/api/v1/orders/${limit.json.id}`, { token: allKey })
    await call('POST', '/api/v1/orders', { token: allKey, body: { pair: 'NOPE/USDT', side: 'BUY', type: 'MARKET', notional_usd: 100 } })
  }
  if (has('POST', '/api/v1/webhooks')) {
    const hook = await call('POST', '/api/v1/webhooks', { token: allKey, body: { url: 'https://127.0.0.1:9/hook', description: 'oracle' } })
    assert.is(hook.status, 200, hook.text)
    if (has('POST', '/api/v1/webhooks/{id}/test')) await call('POST', `/api/v1/webhooks/${hook.json.id}/test`, { token: allKey })
    if (has('PATCH', '/api/v1/webhooks/{id}')) await call('PATCH', `/api/v1/webhooks/${hook.json.id}`, { token: allKey, body: { description: 'renamed' } })
    if (has('POST', '/api/v1/webhooks/{id}/rotate-secret')) await call('POST', `/api/v1/webhooks/${hook.json.id}/rotate-secret`, { token: allKey })
  }
  if (has('POST', '/api/v1/risk/kill-switch')) {
    // An invalid action only: engaging the switch here would pause the tenant for the tests below.
    await call('POST', '/api/v1/risk/kill-switch', { token: allKey, body: { action: 'EXPLODE' } })
  }
})

test('every documented GET answers as documented, whoever asks', async () => {
  const viewerEmail = 'viewer@acme.test'
  const made = await cli(['user', 'create', viewerEmail, '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'viewer-password-1',
  })
  assert.is(made.code, 0, made.stderr)
  const viewer = await login(server, viewerEmail, 'viewer-password-1')
  const loginRes = await call('POST', '/api/v1/auth/login', { body: { email: viewerEmail, password: 'viewer-password-1' } })
  assert.is(loginRes.status, 200)
  const callers: [string, string | undefined][] = [
    ['owner', acme.jwt],
    ['viewer', viewer],
    ['all-scopes key', allKey],
    ['SIGNAL tenant', small.jwt],
    ['nobody', undefined],
  ]
  let ok = 0
  for (const o of oracle.ops.filter((o) => o.method === 'GET')) {
    // Real ids where the collections list some: /x/{id}/y/{sub} takes the first id of GET /x, then
    // the first of GET /x/ID/y; a fake id (and a documented 404) otherwise.
    let path = o.path
    for (let at = path.indexOf('/{'); at >= 0; at = path.indexOf('/{')) {
      const list = await api('GET', path.slice(0, at), { token: acme.jwt })
      const id = list.status === 200 && Array.isArray(list.json) && typeof list.json[0]?.id === 'string' ? list.json[0].id : FAKE_ID
      path = path.replace(/\{\w+\}/, id)
    }
    for (const [who, token] of callers) {
      const res = await call('GET', path, { token })
      assert.ok(res.status < 500, `${who}: GET ${path}: ${res.text}`)
      if (res.status === 200) ok++
    }
  }
  assert.ok(ok >= oracle.ops.filter((o) => o.method === 'GET' && !o.params.length).length, `${ok} successful GETs`)
})

test.run()
