// Alert hooks (SPEC 16) through the real server: made by an owner or admin session, the secret shown
// once (and in an idempotent replay), listed and revoked without it, each with an absolute URL built
// from --public-url (a second server) or else the address the request reached; refused with the
// field named, for an unknown model, for a SIGNAL plan, for LIVE without a venue, to API keys and
// viewers, and across tenants; what arrived at a hook listed newest first (rows written here with
// plain SQL, as the receiver records them, and alerts sent to a hook's url as TradingView sends
// them); the log purged after the retention; the secret nowhere in the database or the log in clear.
import { request as httpRequest } from 'node:http'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { alertPurges } from '../../src/alerts/retention.ts'
import { openStore } from '../../src/store/open-store.ts'
import { runPurges } from '../../src/store/retention.ts'
import type { TestDatabase } from '../support/database.ts'
import { cli, databaseUrlFor, login, startServer, tempDir, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { checkedClient, importCloses, withDb } from '../trading/market.ts'

const test = suite('api: alert hooks')
let server: Server
let api: Awaited<ReturnType<typeof checkedClient>>
let acme: TenantFixture
let zeta: TenantFixture
let small: TenantFixture
/** Every secret any test was shown: none may be at rest or in the log. */
const shown: string[] = []
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const FIELDS = ['created_at', 'id', 'max_age_seconds', 'mode', 'model_id', 'name', 'refused_count', 'revoked_at', 'source_cidrs', 'url']

async function create(tenant: TenantFixture, body: Record<string, unknown>, headers: Record<string, string> = {}, on = api) {
  const res = await on('POST', '/api/v1/alert-hooks', { token: tenant.jwt, body, headers })
  assert.is(res.status, 200, res.text)
  shown.push(res.json.secret)
  return res.json
}

const list = async (tenant: TenantFixture, query = '') => {
  const res = await api('GET', `/api/v1/alert-hooks${query}`, { token: tenant.jwt })
  assert.is(res.status, 200, res.text)
  return res
}

const tenantId = async (tenant: TenantFixture): Promise<string> => (await api('GET', '/api/v1/auth/session', { token: tenant.jwt })).json.tenant_id

/** A GET with a Host header of our choosing (fetch sets its own). */
function getWithHost(path: string, host: string, token: string): Promise<{ status: number; json: any }> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${token}`, host }
    const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end()
  })
}

test.before(async () => {
  server = await startServer()
  api = await checkedClient(server)
  acme = await tenantFixture(server, 'acme')
  zeta = await tenantFixture(server, 'zeta')
  small = await tenantFixture(server, 'small', 'SIGNAL')
})
test.after(async () => {
  await server?.stop()
})

test('POST answers the hook with its secret and URL once; GET lists and shows it without the secret', async () => {
  const before = Date.now()
  const made = await create(acme, { name: 'tv btc', mode: 'PAPER' })
  assert.equal(Object.keys(made).sort(), [...FIELDS, 'secret'].sort())
  assert.match(made.id, /^ahk_[0-9A-HJKMNP-TV-Z]{26}$/)
  assert.match(made.secret, /^[0-9a-f]{64}$/)
  const { id: _id, secret: _secret, created_at: _at, ...rest } = made
  assert.equal(rest, {
    name: 'tv btc',
    url: `${server.url}/hooks/alerts/${made.id}`,
    mode: 'PAPER',
    model_id: null,
    max_age_seconds: 60,
    source_cidrs: [],
    revoked_at: null,
    refused_count: 0,
  })
  assert.match(made.created_at, ISO)
  assert.ok(Date.parse(made.created_at) >= before - 1000 && Date.parse(made.created_at) <= Date.now() + 1000)

  const full = await create(acme, {
    name: 'tv eth',
    mode: 'PAPER',
    model_id: 'trend-follower',
    max_age_seconds: 300,
    source_cidrs: ['52.89.214.238', '34.212.75.30/32', '2001:db8::/32'],
  })
  assert.is(full.model_id, 'trend-follower')
  assert.is(full.max_age_seconds, 300)
  assert.equal(full.source_cidrs, ['52.89.214.238', '34.212.75.30/32', '2001:db8::/32'])
  // The bounds of max_age_seconds are accepted; [] is any source, as absent is.
  assert.is((await create(acme, { name: 'short', mode: 'PAPER', max_age_seconds: 5, source_cidrs: [] })).source_cidrs.length, 0)
  assert.is((await create(acme, { name: 'long', mode: 'PAPER', max_age_seconds: 86_400, model_id: null })).max_age_seconds, 86_400)

  const got = await list(acme)
  assert.equal(
    got.json.map((h: { name: string }) => h.name),
    ['long', 'short', 'tv eth', 'tv btc'],
    'newest first',
  )
  const { secret, ...withoutSecret } = made
  assert.equal(got.json[3], withoutSecret)
  assert.not.ok(
    shown.some((s) => got.text.includes(s)),
    'no secret in the list',
  )
  const one = await api('GET', `/api/v1/alert-hooks/${full.id}`, { token: acme.jwt })
  assert.is(one.status, 200, one.text)
  const { secret: _, ...fullWithout } = full
  assert.equal(one.json, fullWithout)
  assert.is.not(secret, full.secret, 'each hook its own secret')
})

test("without --public-url the URL is the address the request reached: its Host header, else the server's own", async () => {
  const [hook] = (await list(acme)).json
  const named = await getWithHost(`/api/v1/alert-hooks/${hook.id}`, 'Bulwark.LAN:8080', acme.jwt)
  assert.is(named.status, 200)
  assert.is(named.json.url, `http://bulwark.lan:8080/hooks/alerts/${hook.id}`)
  const v6 = await getWithHost('/api/v1/alert-hooks', '[fd00::5]:9000', acme.jwt)
  assert.is(v6.json[0].url, `http://[fd00::5]:9000/hooks/alerts/${hook.id}`)
  // Not a host: the server's own address instead of what was sent.
  const odd = await getWithHost(`/api/v1/alert-hooks/${hook.id}`, 'evil.test/x?y', acme.jwt)
  assert.is(odd.status, 200)
  assert.is(odd.json.url, `${server.url}/hooks/alerts/${hook.id}`)
})

test('with --public-url (a path prefix kept, the trailing slash dropped) every URL is built from it, whatever the Host', async () => {
  const other = await startServer({ args: ['--public-url', 'https://Alerts.Example.com/bulwark/'] })
  try {
    const otherApi = await checkedClient(other)
    const owner = await tenantFixture(other, 'proxied')
    const made = await create(owner, { name: 'behind caddy', mode: 'PAPER' }, {}, otherApi)
    assert.is(made.url, `https://alerts.example.com/bulwark/hooks/alerts/${made.id}`)
    const listed = await otherApi('GET', '/api/v1/alert-hooks', { token: owner.jwt })
    assert.is(listed.json[0].url, made.url)
  } finally {
    await other.stop()
  }
})

test('--public-url and BULWARK_PUBLIC_URL are checked at start: exit 2 with one line naming them', async () => {
  const cases: [string, RegExp][] = [
    ['alerts.example.com', /^error: --public-url must be an absolute http\(s\) URL such as https:\/\/alerts\.example\.com$/],
    ['ftp://alerts.example.com', /^error: --public-url must be an absolute http\(s\) URL/],
    ['https://alerts.example.com/?a=1', /^error: --public-url takes a scheme, a host, a port and a path prefix only/],
    ['https://alerts.example.com/#top', /^error: --public-url takes a scheme/],
    ['https://user:pw@alerts.example.com', /^error: --public-url takes a scheme/],
  ]
  for (const [bad, line] of cases) {
    const res = await cli(['serve', '--port', '0', '--public-url', bad], { dataDir: tempDir() })
    assert.is(res.code, 2, `${bad}: ${res.stderr}`)
    assert.match(res.stderr.split('\n')[0], line, bad)
  }
  const env = await cli(['serve', '--port', '0'], { dataDir: tempDir(), env: { BULWARK_PUBLIC_URL: 'not a url' } })
  assert.is(env.code, 2, env.stderr)
  assert.match(env.stderr.split('\n')[0], /^error: BULWARK_PUBLIC_URL must be an absolute http\(s\) URL/)
})

test('DELETE revokes, answers the record, and again changes nothing; unknown ids are 404', async () => {
  const made = await create(acme, { name: 'to revoke', mode: 'PAPER' })
  const res = await api('DELETE', `/api/v1/alert-hooks/${made.id}`, { token: acme.jwt })
  assert.is(res.status, 200, res.text)
  assert.is(res.json.id, made.id)
  assert.is(res.json.url, made.url)
  assert.match(res.json.revoked_at, ISO)
  assert.not.ok(res.text.includes(made.secret))
  const again = await api('DELETE', `/api/v1/alert-hooks/${made.id}`, { token: acme.jwt })
  assert.is(again.status, 200, again.text)
  assert.equal(again.json, res.json, 'the first revocation stands')
  assert.equal(
    (await list(acme)).json.find((h: { id: string }) => h.id === made.id),
    res.json,
  )
  for (const id of ['ahk_01M80000000000000000000000', 'gwk_01M80000000000000000000000', 'nope']) {
    for (const [method, path] of [
      ['DELETE', `/api/v1/alert-hooks/${id}`],
      ['GET', `/api/v1/alert-hooks/${id}`],
      ['GET', `/api/v1/alert-hooks/${id}/alerts`],
    ]) {
      const missing = await api(method, path, { token: acme.jwt })
      assert.is(missing.status, 404, `${method} ${path}: ${missing.text}`)
      assert.is(missing.json.code, 'not_found')
    }
  }
})

test('an Idempotency-Key replays the first answer, secret included, and creates one hook', async () => {
  const count = async () => (await list(acme, '?limit=1000')).json.length
  const before = await count()
  const body = { name: 'replayed', mode: 'PAPER' }
  const first = await create(acme, body, { 'idempotency-key': 'ahk-create-1' })
  const replay = await api('POST', '/api/v1/alert-hooks', { token: acme.jwt, body, headers: { 'idempotency-key': 'ahk-create-1' } })
  assert.is(replay.status, 200, replay.text)
  assert.is(replay.headers.get('idempotent-replayed'), 'true')
  assert.equal(replay.json, first)
  assert.is(await count(), before + 1)
  const conflict = await api('POST', '/api/v1/alert-hooks', {
    token: acme.jwt,
    body: { ...body, name: 'other' },
    headers: { 'idempotency-key': 'ahk-create-1' },
  })
  assert.is(conflict.status, 409, conflict.text)
  assert.is(conflict.json.code, 'idempotency_conflict')
})

test('bad input: 400 validation_failed naming the field with a precise detail; unknown fields refused', async () => {
  const cases: [unknown, string, RegExp][] = [
    [{ mode: 'PAPER' }, 'name', /required/],
    [{ name: '', mode: 'PAPER' }, 'name', /at least 1 character/],
    [{ name: 'x'.repeat(101), mode: 'PAPER' }, 'name', /at most 100 characters/],
    [{ name: 'tv' }, 'mode', /required/],
    [{ name: 'tv', mode: 'paper' }, 'mode', /one of PAPER, LIVE/],
    [{ name: 'tv', mode: 'PAPER', max_age_seconds: 4 }, 'max_age_seconds', />= 5/],
    [{ name: 'tv', mode: 'PAPER', max_age_seconds: 86_401 }, 'max_age_seconds', /<= 86400/],
    [{ name: 'tv', mode: 'PAPER', max_age_seconds: 1.5 }, 'max_age_seconds', /integer/],
    [{ name: 'tv', mode: 'PAPER', max_age_seconds: '60' }, 'max_age_seconds', /number/],
    [{ name: 'tv', mode: 'PAPER', model_id: 'no-such-model' }, 'model_id', /^unknown model "no-such-model"; see GET \/api\/v1\/models$/],
    [{ name: 'tv', mode: 'PAPER', source_cidrs: '52.89.214.238' }, 'source_cidrs', /array/],
    [{ name: 'tv', mode: 'PAPER', source_cidrs: ['52.89.214.238', 'tradingview'] }, 'source_cidrs[1]', /^"tradingview" is not an IPv4 or IPv6 address or CIDR/],
    [{ name: 'tv', mode: 'PAPER', source_cidrs: ['10.0.0.0/33'] }, 'source_cidrs[0]', /"10\.0\.0\.0\/33" is not/],
    [{ name: 'tv', mode: 'PAPER', source_cidrs: ['fd00::/129'] }, 'source_cidrs[0]', /is not/],
    [{ name: 'tv', mode: 'PAPER', source_cidrs: ['10.0.0.0/8/8'] }, 'source_cidrs[0]', /is not/],
    [{ name: 'tv', mode: 'PAPER', source_cidrs: [' 10.0.0.1'] }, 'source_cidrs[0]', /is not/],
    [{ name: 'tv', mode: 'PAPER', source_cidrs: Array(65).fill('10.0.0.1') }, 'source_cidrs', /at most 64 items/],
  ]
  const before = (await list(acme, '?limit=1000')).json.length
  for (const [body, field, message] of cases) {
    const res = await api('POST', '/api/v1/alert-hooks', { token: acme.jwt, body })
    assert.is(res.status, 400, res.text)
    assert.is(res.json.code, 'validation_failed', res.text)
    assert.is(res.json.errors.length, 1, res.text)
    assert.is(res.json.errors[0].field, field, res.text)
    assert.match(res.json.errors[0].message, message, res.text)
    assert.ok(res.json.detail.startsWith(field), res.text)
  }
  const unknown = await api('POST', '/api/v1/alert-hooks', { token: acme.jwt, body: { name: 'tv', mode: 'PAPER', secret: 'mine' } })
  assert.is(unknown.status, 400, unknown.text)
  assert.is(unknown.json.code, 'unknown_field')
  assert.match(unknown.json.detail, /secret/)
  const limit = await api('GET', '/api/v1/alert-hooks?limit=0', { token: acme.jwt })
  assert.is(limit.status, 400)
  assert.is(limit.json.errors[0].field, 'limit')
  assert.is((await list(acme, '?limit=1000')).json.length, before, 'nothing stored')
})

test('LIVE needs a venue (409 venue_not_connected), orders need the EXECUTE plan (403 plan_forbids); nothing stored', async () => {
  const live = await api('POST', '/api/v1/alert-hooks', { token: zeta.jwt, body: { name: 'live', mode: 'LIVE' } })
  assert.is(live.status, 409, live.text)
  assert.is(live.json.code, 'venue_not_connected')
  assert.is(live.json.detail, 'a LIVE hook places LIVE orders, which need a venue: connect one with PUT /api/v1/venue')
  const signal = await api('POST', '/api/v1/alert-hooks', { token: small.jwt, body: { name: 'paper', mode: 'PAPER' } })
  assert.is(signal.status, 403, signal.text)
  assert.is(signal.json.code, 'plan_forbids')
  assert.is(signal.json.detail, 'plan SIGNAL does not allow orders; an alert hook places orders and needs the EXECUTE plan')
  assert.equal((await list(zeta)).json, [])
  assert.equal((await list(small)).json, [])
  // With a venue (its row written here: the venue itself is no business of this test), LIVE is made.
  const id = await tenantId(zeta)
  await withDb(
    server,
    (db) =>
      db.run(
        `INSERT INTO venue_accounts (tenant_id, exchange, api_key_hint, api_key_sealed, secret_sealed, password_sealed, status, can_trade, can_withdraw, checked_at, connected_at, connected_by)
        VALUES (?, 'binance', '...abcd', 'v1.x', 'v1.x', NULL, 'CONNECTED', 1, 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'owner@zeta.test')`,
        [id],
      ),
    false,
  )
  try {
    const made = await create(zeta, { name: 'live', mode: 'LIVE' })
    assert.is(made.mode, 'LIVE')
  } finally {
    await withDb(server, (db) => db.run('DELETE FROM venue_accounts WHERE tenant_id = ?', [id]), false)
  }
})

test('who may: hooks need an owner or admin session; the alert log also takes an API key with trades:read', async () => {
  const [hook] = (await list(acme)).json
  const manage: [string, string, unknown][] = [
    ['POST', '/api/v1/alert-hooks', { name: 'bot', mode: 'PAPER' }],
    ['GET', '/api/v1/alert-hooks', undefined],
    ['GET', `/api/v1/alert-hooks/${hook.id}`, undefined],
    ['DELETE', `/api/v1/alert-hooks/${hook.id}`, undefined],
  ]
  const allKey = await acme.key(['signals:read', 'trades:read', 'orders:write', 'risk:read', 'risk:admin', 'webhooks:write'])
  const readKey = await acme.key(['trades:read'])
  const otherKey = await acme.key(['signals:read', 'orders:write', 'webhooks:write'])
  for (const role of ['viewer', 'admin']) {
    const made = await cli(['user', 'create', `${role}@acme.test`, '--tenant', 'acme', '--role', role, '--password-stdin'], {
      dataDir: server.dataDir,
      input: `${role}-password-alerts`,
    })
    assert.is(made.code, 0, made.stderr)
  }
  const viewer = await login(server, 'viewer@acme.test', 'viewer-password-alerts')
  const admin = await login(server, 'admin@acme.test', 'admin-password-alerts')
  const log = `/api/v1/alert-hooks/${hook.id}/alerts`
  for (const [method, path, body] of [...manage, ['GET', log, undefined] as [string, string, unknown]]) {
    const none = await api(method, path, { body })
    assert.is(none.status, 401, `${method} ${path}`)
    assert.is(none.json.code, 'unauthenticated')
    const byViewer = await api(method, path, { token: viewer, body })
    assert.is(byViewer.status, 403, `${method} ${path}: ${byViewer.text}`)
    assert.is(byViewer.json.code, 'forbidden_role')
  }
  for (const [method, path, body] of manage) {
    const byKey = await api(method, path, { token: allKey, body })
    assert.is(byKey.status, 403, `${method} ${path}: ${byKey.text}`)
    assert.is(byKey.json.code, 'session_required')
  }
  const byOther = await api('GET', log, { token: otherKey })
  assert.is(byOther.status, 403, byOther.text)
  assert.is(byOther.json.code, 'insufficient_scope')
  for (const token of [readKey, allKey, admin, acme.jwt]) assert.is((await api('GET', log, { token })).status, 200)
  // An admin does all of it.
  const byAdmin = await create({ ...acme, jwt: admin }, { name: 'admin hook', mode: 'PAPER' })
  assert.is((await api('GET', '/api/v1/alert-hooks', { token: admin })).json[0].id, byAdmin.id)
  assert.is((await api('DELETE', `/api/v1/alert-hooks/${byAdmin.id}`, { token: admin })).status, 200)
  // The secret is no credential of the API.
  assert.is((await api('GET', '/api/v1/models', { token: byAdmin.secret })).status, 401)
})

test("tenant isolation: another tenant's hooks are 404 to read, revoke or read the log of, and never listed", async () => {
  const mine = await create(acme, { name: 'acme only', mode: 'PAPER' })
  const theirs = await create(zeta, { name: 'zeta only', mode: 'PAPER' })
  assert.not.ok((await list(zeta)).json.some((h: { id: string }) => h.id === mine.id))
  assert.not.ok((await list(acme)).json.some((h: { id: string }) => h.id === theirs.id))
  for (const [method, path] of [
    ['GET', `/api/v1/alert-hooks/${mine.id}`],
    ['DELETE', `/api/v1/alert-hooks/${mine.id}`],
    ['GET', `/api/v1/alert-hooks/${mine.id}/alerts`],
  ]) {
    const res = await api(method, path, { token: zeta.jwt })
    assert.is(res.status, 404, `${method} ${path}: ${res.text}`)
    assert.is(res.json.code, 'not_found')
  }
  const zetaKey = await zeta.key(['trades:read'])
  assert.is((await api('GET', `/api/v1/alert-hooks/${mine.id}/alerts`, { token: zetaKey })).status, 404)
  assert.is((await api('GET', `/api/v1/alert-hooks/${mine.id}`, { token: acme.jwt })).json.revoked_at, null, 'still live')
})

/** Writes what arrived, as the receiver records it (sql/021's columns), behind the server's back. */
async function arrived(db: TestDatabase, rows: (string | null)[][]) {
  for (const row of rows) {
    await db.run(
      'INSERT INTO alerts (id, hook_id, tenant_id, alert_id, received_at, outcome, code, reason, order_id, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      row,
    )
  }
}

test('GET .../alerts: what arrived, newest first, paged, with outcome, code, reason, order and message; only that hook of that tenant', async () => {
  const hook = await create(acme, { name: 'logged', mode: 'PAPER' })
  const other = await create(acme, { name: 'quiet', mode: 'PAPER' })
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)
  await importCloses(server, [['BTC/USDT', yesterday, 60_000]])
  const order = await api('POST', '/api/v1/orders', { token: acme.jwt, body: { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', notional_usd: 100 } })
  assert.is(order.status, 200, order.text)
  const acmeId = await tenantId(acme)
  const message = (id: string) => JSON.stringify({ id, pair: 'BTCUSDT', side: 'buy', quantity: 0.001, timestamp: '2026-11-27T10:00:00Z' })
  const ids = ['alr_01M8A000000000000000000001', 'alr_01M8A000000000000000000002', 'alr_01M8A000000000000000000003', 'alr_01M8A000000000000000000004']
  await withDb(
    server,
    (db) =>
      arrived(db, [
        [ids[0], hook.id, acmeId, 'o-1', '2026-11-27T10:00:00.400Z', 'ACCEPTED', null, null, order.json.id, message('o-1')],
        [ids[1], hook.id, acmeId, 'o-1', '2026-11-27T10:00:01.000Z', 'DUPLICATE', null, null, order.json.id, message('o-1')],
        [
          ids[2],
          hook.id,
          acmeId,
          'o-2',
          '2026-11-27T10:05:00.000Z',
          'REFUSED',
          'alert_stale',
          'timestamp: 2026-11-27T09:00:00Z is older than 60 s',
          null,
          message('o-2'),
        ],
        [ids[3], other.id, acmeId, 'q-1', '2026-11-27T10:06:00.000Z', 'REFUSED', 'trading_paused', 'trading is paused', null, message('q-1')],
      ]),
    false,
  )
  const res = await api('GET', `/api/v1/alert-hooks/${hook.id}/alerts`, { token: acme.jwt })
  assert.is(res.status, 200, res.text)
  assert.equal(res.json, [
    {
      id: ids[2],
      hook_id: hook.id,
      alert_id: 'o-2',
      received_at: '2026-11-27T10:05:00.000Z',
      outcome: 'REFUSED',
      code: 'alert_stale',
      reason: 'timestamp: 2026-11-27T09:00:00Z is older than 60 s',
      order_id: null,
      message: message('o-2'),
    },
    {
      id: ids[1],
      hook_id: hook.id,
      alert_id: 'o-1',
      received_at: '2026-11-27T10:00:01.000Z',
      outcome: 'DUPLICATE',
      code: null,
      reason: null,
      order_id: order.json.id,
      message: message('o-1'),
    },
    {
      id: ids[0],
      hook_id: hook.id,
      alert_id: 'o-1',
      received_at: '2026-11-27T10:00:00.400Z',
      outcome: 'ACCEPTED',
      code: null,
      reason: null,
      order_id: order.json.id,
      message: message('o-1'),
    },
  ])
  const page = await api('GET', `/api/v1/alert-hooks/${hook.id}/alerts?limit=2`, { token: acme.jwt })
  assert.equal(
    page.json.map((a: { id: string }) => a.id),
    [ids[2], ids[1]],
  )
  const link = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')
  assert.ok(link, page.headers.get('link') ?? 'no Link')
  const next = await api('GET', link![1], { token: acme.jwt })
  assert.equal(
    next.json.map((a: { id: string }) => a.id),
    [ids[0]],
  )
  assert.is(next.headers.get('link'), null)
  // A revoked hook's log stays readable.
  assert.is((await api('DELETE', `/api/v1/alert-hooks/${other.id}`, { token: acme.jwt })).status, 200)
  const revokedLog = await api('GET', `/api/v1/alert-hooks/${other.id}/alerts`, { token: acme.jwt })
  assert.equal(
    revokedLog.json.map((a: { code: string }) => a.code),
    ['trading_paused'],
  )
})

test("end to end: the hook's url takes the console's TradingView message as TradingView fills it in; the log shows what became of each", async () => {
  const hook = await create(acme, { name: 'end to end', mode: 'PAPER', max_age_seconds: 60 })
  const template = `{"secret":"${hook.secret}","id":"{{strategy.order.id}}-{{timenow}}","pair":"{{ticker}}","side":"{{strategy.order.action}}","quantity":{{strategy.order.contracts}},"timestamp":"{{timenow}}"}`
  const fire = (at: Date, secret = hook.secret) =>
    fetch(hook.url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: template
        .replace(hook.secret, secret)
        .replaceAll('{{strategy.order.id}}', 'Long')
        .replaceAll('{{timenow}}', `${at.toISOString().slice(0, 19)}Z`)
        .replaceAll('{{ticker}}', 'BTCUSDT')
        .replaceAll('{{strategy.order.action}}', 'buy')
        .replaceAll('{{strategy.order.contracts}}', '0.001'),
    }).then(async (res) => ({ status: res.status, json: await res.json() }))
  const now = new Date()
  const placed = await fire(now)
  assert.is(placed.status, 200, JSON.stringify(placed.json))
  assert.match(placed.json.order_id, /^ord_/)
  const again = await fire(now)
  assert.equal(again, { status: 200, json: { duplicate: true, order_id: placed.json.order_id } })
  const stale = await fire(new Date(now.getTime() - 120_000))
  assert.is(stale.status, 400)
  assert.is(stale.json.code, 'alert_stale')
  const wrong = await fire(now, 'f'.repeat(64))
  assert.is(wrong.status, 401)
  assert.is(wrong.json.code, 'alert_unauthorized')

  const log = await api('GET', `/api/v1/alert-hooks/${hook.id}/alerts`, { token: acme.jwt })
  assert.is(log.status, 200, log.text)
  assert.equal(
    log.json.map((a: any) => [a.outcome, a.code, a.order_id]),
    [
      ['REFUSED', 'alert_stale', null],
      ['DUPLICATE', null, placed.json.order_id],
      ['ACCEPTED', null, placed.json.order_id],
    ],
  )
  assert.is(log.json[0].reason, stale.json.detail)
  assert.is(log.json[2].alert_id, `Long-${now.toISOString().slice(0, 19)}Z`)
  assert.not.ok(log.text.includes(hook.secret), 'the log keeps the message without its secret')
  assert.is((await api('GET', `/api/v1/alert-hooks/${hook.id}`, { token: acme.jwt })).json.refused_count, 1, 'the wrong secret, counted')
  // Revoked, the URL answers 404.
  assert.is((await api('DELETE', `/api/v1/alert-hooks/${hook.id}`, { token: acme.jwt })).status, 200)
  assert.is((await fire(new Date())).status, 404)
})

test('retention: alertPurges deletes what arrived before --retention-days, accepted or refused alike, and keeps the rest', async () => {
  const hook = await create(acme, { name: 'purged', mode: 'PAPER' })
  const acmeId = await tenantId(acme)
  const days = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString()
  const rows: [string, string][] = [
    ['alr_01M8B000000000000000000001', days(31)],
    ['alr_01M8B000000000000000000002', days(30.01)],
    ['alr_01M8B000000000000000000003', days(29.9)],
    ['alr_01M8B000000000000000000004', days(0)],
  ]
  await withDb(
    server,
    (db) =>
      arrived(
        db,
        rows.map(([id, at], i) => [id, hook.id, acmeId, `p-${i}`, at, i % 2 ? 'REFUSED' : 'DUPLICATE', null, null, null, '{}']),
      ),
    false,
  )
  const store = await openStore({ dataDir: server.dataDir, databaseUrl: await databaseUrlFor(server.dataDir) })
  let outcome: [Record<string, number>, Error | undefined] | undefined
  try {
    await runPurges(
      store,
      alertPurges,
      Date.now(),
      30,
      () => false,
      (counts, error) => {
        outcome = [counts, error]
      },
    )
  } finally {
    await store.close()
  }
  assert.equal(outcome, [{ alerts: 2 }, undefined])
  const left = await withDb(server, (db) => db.all<{ id: string }>('SELECT id FROM alerts WHERE hook_id = ? ORDER BY id', [hook.id]))
  assert.equal(
    left.map((r) => r.id),
    [rows[2][0], rows[3][0]],
  )
})

/** Every value of every row of every table, as one text. */
async function everyValue(db: TestDatabase): Promise<string> {
  const tables =
    db.engine === 'sqlite'
      ? await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'")
      : await db.all<{ name: string }>('SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()')
  let text = ''
  for (const { name } of tables) text += JSON.stringify(await db.all(`SELECT * FROM "${name}"`))
  return text
}

test('at rest and in the log: no secret in clear (sealed, the idempotent replay too); the requests were logged', async () => {
  assert.ok(shown.length >= 10, `${shown.length} secrets shown`)
  const { sealed, all } = await withDb(server, async (db) => ({
    sealed: await db.all<{ secret_sealed: string }>('SELECT secret_sealed FROM alert_hooks'),
    all: await everyValue(db),
  }))
  for (const secret of shown) assert.not.ok(all.includes(secret), 'a secret in the database')
  assert.ok(sealed.length >= shown.length - 1)
  for (const row of sealed) assert.match(row.secret_sealed, /^v1\./)
  const log = server.output()
  for (const secret of shown) assert.not.ok(log.includes(secret), 'a secret in the log')
  assert.ok(log.includes('/api/v1/alert-hooks'), 'the requests were logged')
})

test.run()
