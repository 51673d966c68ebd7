// Gateway keys (SPEC 14) through the real server: created by an owner or admin session of a tenant
// whose Binance venue is connected (the test venue, through PUT /api/v1/venue and the real ccxt),
// shown once (and in an idempotent replay), listed without secrets, revoked at once; refused without
// a venue, to API keys and viewers, and across tenants; the key and the secret are nowhere in the
// database or the server's log, and findGatewayKey (what the Binance dialect checks signatures
// with) finds the live key with its secret and nothing after revocation.
import { createHash } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { findGatewayKey } from '../../src/gateway/keys.ts'
import { openStore } from '../../src/store/open-store.ts'
import { openSecretBox } from '../../src/store/secret-box.ts'
import type { Store } from '../../src/store/store.ts'
import type { TestDatabase } from '../support/database.ts'
import { cli, databaseUrlFor, login, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { startVenue, venueKey, type Venue } from '../support/venue/index.ts'
import { checkedClient, withDb } from '../trading/market.ts'

const test = suite('api: gateway keys')
let venue: Venue
let server: Server
let api: Awaited<ReturnType<typeof checkedClient>>
let acme: TenantFixture
let zeta: TenantFixture
let nova: TenantFixture
let store: Store
/** Every key and secret any test was shown: none may be at rest or in the log. */
const shown: string[] = []

const KEY = /^[0-9A-Za-z]{64}$/
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

async function connectVenue(tenant: TenantFixture): Promise<void> {
  const key = venueKey(tenant.slug, tenant.slug)
  await venue.addKey({ ...key, restrictions: { enableWithdrawals: false } })
  await venue.setBalances({ USDT: 1000 }, tenant.slug)
  const res = await api('PUT', '/api/v1/venue', { token: tenant.jwt, body: { exchange: 'binance', api_key: key.apiKey, api_secret: key.secret } })
  assert.is(res.status, 200, res.text)
}

async function create(tenant: TenantFixture, name: string, headers: Record<string, string> = {}) {
  const res = await api('POST', '/api/v1/gateway/keys', { token: tenant.jwt, body: { name }, headers })
  assert.is(res.status, 200, res.text)
  shown.push(res.json.api_key, res.json.api_secret)
  return res.json as { id: string; name: string; api_key: string; api_secret: string; created_at: string }
}

const list = async (tenant: TenantFixture, query = '') => {
  const res = await api('GET', `/api/v1/gateway/keys${query}`, { token: tenant.jwt })
  assert.is(res.status, 200, res.text)
  return res
}

const box = () => openSecretBox(server.dataDir)

test.before(async () => {
  venue = await startVenue()
  server = await startServer({ args: ['--venue-url', venue.url, '--ca-file', venue.caFile] })
  api = await checkedClient(server)
  acme = await tenantFixture(server, 'acme')
  zeta = await tenantFixture(server, 'zeta')
  nova = await tenantFixture(server, 'nova')
  await connectVenue(acme)
  await connectVenue(zeta)
  store = await openStore({ dataDir: server.dataDir, databaseUrl: await databaseUrlFor(server.dataDir) })
})
test.after(async () => {
  await store?.close()
  await server?.stop()
  await venue?.close()
})

test('POST answers the key and the secret once; GET lists it without them; findGatewayKey finds it with its secret', async () => {
  const before = Date.now()
  const made = await create(acme, 'freqtrade main')
  assert.equal(Object.keys(made).sort(), ['api_key', 'api_secret', 'created_at', 'id', 'name'])
  assert.match(made.id, /^gwk_[0-9A-HJKMNP-TV-Z]{26}$/)
  assert.is(made.name, 'freqtrade main')
  assert.match(made.api_key, KEY)
  assert.match(made.api_secret, KEY)
  assert.is.not(made.api_key, made.api_secret)
  assert.match(made.created_at, ISO)
  assert.ok(Date.parse(made.created_at) >= before - 1000 && Date.parse(made.created_at) <= Date.now() + 1000, made.created_at)

  const got = await list(acme)
  assert.equal(got.json, [{ id: made.id, name: 'freqtrade main', api_key_prefix: made.api_key.slice(0, 8), created_at: made.created_at, revoked_at: null }])
  assert.not.ok(got.text.includes(made.api_key) || got.text.includes(made.api_secret))

  assert.equal(await findGatewayKey(store.read, made.api_key, box()), { id: made.id, tenantId: await tenantId(acme), name: made.name, secret: made.api_secret })
  assert.is(await findGatewayKey(store.read, made.api_secret, box()), undefined, 'the secret is no key')
  assert.is(await findGatewayKey(store.read, `${made.api_key.slice(0, -1)}${made.api_key.endsWith('A') ? 'B' : 'A'}`, box()), undefined)
  assert.is(await findGatewayKey(store.read, '', box()), undefined)
  assert.is(await findGatewayKey(store.read, `${made.api_key}x`, box()), undefined)

  // Two keys are two keys.
  const second = await create(acme, 'jesse')
  assert.is.not(second.api_key, made.api_key)
  assert.is.not(second.api_secret, made.api_secret)
  assert.equal(
    (await list(acme)).json.map((k: { id: string }) => k.id),
    [second.id, made.id],
    'newest first',
  )
})

async function tenantId(tenant: TenantFixture): Promise<string> {
  return (await api('GET', '/api/v1/auth/session', { token: tenant.jwt })).json.tenant_id
}

test('DELETE revokes at once (findGatewayKey finds nothing), answers the record, and again changes nothing', async () => {
  const made = await create(acme, 'to revoke')
  assert.ok(await findGatewayKey(store.read, made.api_key, box()))
  const res = await api('DELETE', `/api/v1/gateway/keys/${made.id}`, { token: acme.jwt })
  assert.is(res.status, 200, res.text)
  assert.is(res.json.id, made.id)
  assert.is(res.json.api_key_prefix, made.api_key.slice(0, 8))
  assert.match(res.json.revoked_at, ISO)
  assert.not.ok(res.text.includes(made.api_secret) || res.text.includes(made.api_key))
  assert.is(await findGatewayKey(store.read, made.api_key, box()), undefined, 'revoked: the next request is refused')
  const again = await api('DELETE', `/api/v1/gateway/keys/${made.id}`, { token: acme.jwt })
  assert.is(again.status, 200, again.text)
  assert.equal(again.json, res.json, 'the first revocation stands')
  const listed = (await list(acme)).json.find((k: { id: string }) => k.id === made.id)
  assert.equal(listed, res.json)
  for (const id of ['gwk_01M80000000000000000000000', 'tok_01M80000000000000000000000', 'nope', 'gwk_%2F..']) {
    const missing = await api('DELETE', `/api/v1/gateway/keys/${id}`, { token: acme.jwt })
    assert.is(missing.status, 404, `${id}: ${missing.text}`)
    assert.is(missing.json.code, 'not_found')
  }
})

test('an Idempotency-Key replays the first answer, secret included, and creates one key', async () => {
  const count = async () => (await list(acme, '?limit=1000')).json.length
  const before = await count()
  const first = await create(acme, 'replayed', { 'idempotency-key': 'gw-create-1' })
  const replay = await api('POST', '/api/v1/gateway/keys', { token: acme.jwt, body: { name: 'replayed' }, headers: { 'idempotency-key': 'gw-create-1' } })
  assert.is(replay.status, 200, replay.text)
  assert.is(replay.headers.get('idempotent-replayed'), 'true')
  assert.equal(replay.json, first)
  assert.is(await count(), before + 1)
  const conflict = await api('POST', '/api/v1/gateway/keys', { token: acme.jwt, body: { name: 'other' }, headers: { 'idempotency-key': 'gw-create-1' } })
  assert.is(conflict.status, 409, conflict.text)
  assert.is(conflict.json.code, 'idempotency_conflict')
  // Stored sealed: the kept answer holds neither the key nor the secret in clear.
  const kept = await withDb(server, (db) => everyValue(db))
  assert.not.ok(kept.includes(first.api_secret) || kept.includes(first.api_key))
})

test('without a connected Binance venue: 409 venue_not_connected, nothing stored; the venue disconnected, existing keys stay listed', async () => {
  const res = await api('POST', '/api/v1/gateway/keys', { token: nova.jwt, body: { name: 'bot' } })
  assert.is(res.status, 409, res.text)
  assert.is(res.json.code, 'venue_not_connected')
  assert.is(res.json.detail, 'the gateway needs a connected binance venue: connect one with PUT /api/v1/venue first')
  assert.equal((await list(nova)).json, [])
  // A venue on another exchange is no Binance venue (the test venue speaks Binance only: the row is written here).
  const novaId = await tenantId(nova)
  await withDb(
    server,
    (db) =>
      db.run(
        `INSERT INTO venue_accounts (tenant_id, exchange, api_key_hint, api_key_sealed, secret_sealed, password_sealed, status, can_trade, can_withdraw, checked_at, connected_at, connected_by)
        VALUES (?, 'kraken', '...abcd', 'v1.x', 'v1.x', NULL, 'CONNECTED', 1, 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 'owner@nova.test')`,
        [novaId],
      ),
    false,
  )
  const kraken = await api('POST', '/api/v1/gateway/keys', { token: nova.jwt, body: { name: 'bot' } })
  assert.is(kraken.status, 409, kraken.text)
  assert.is(kraken.json.code, 'venue_not_connected')
  assert.is(kraken.json.detail, "the gateway speaks binance's API and needs a binance venue; this tenant's venue is kraken")
  assert.equal((await list(nova)).json, [])
  await withDb(server, (db) => db.run('DELETE FROM venue_accounts WHERE tenant_id = ?', [novaId]), false)
})

test('bad input: 400 with the field and a precise detail; unknown fields and bad JSON refused', async () => {
  const cases: [unknown, string, RegExp][] = [
    [{}, 'name', /required/],
    [{ name: '' }, 'name', /at least 1 character/],
    [{ name: 'x'.repeat(101) }, 'name', /at most 100 characters/],
    [{ name: 42 }, 'name', /string/],
  ]
  for (const [body, field, message] of cases) {
    const res = await api('POST', '/api/v1/gateway/keys', { token: acme.jwt, body })
    assert.is(res.status, 400, res.text)
    assert.is(res.json.code, 'validation_failed', res.text)
    assert.is(res.json.errors.length, 1, res.text)
    assert.is(res.json.errors[0].field, field, res.text)
    assert.match(res.json.errors[0].message, message, res.text)
    assert.ok(res.json.detail.includes(field), res.text)
  }
  const unknown = await api('POST', '/api/v1/gateway/keys', { token: acme.jwt, body: { name: 'bot', secret: 'mine' } })
  assert.is(unknown.status, 400, unknown.text)
  assert.is(unknown.json.code, 'unknown_field')
  assert.match(unknown.json.detail, /secret/)
  const broken = await api('POST', '/api/v1/gateway/keys', { token: acme.jwt, raw: '{"name":', headers: { 'content-type': 'application/json' } })
  assert.is(broken.status, 400)
  assert.is(broken.json.code, 'invalid_json')
  const limit = await api('GET', '/api/v1/gateway/keys?limit=0', { token: acme.jwt })
  assert.is(limit.status, 400)
  assert.is(limit.json.errors[0].field, 'limit')
  // The longest name is fine.
  assert.is((await create(acme, 'n'.repeat(100))).name, 'n'.repeat(100))
})

test('who may: an owner or admin session; no credential 401, an API key (any scope) 403 session_required, a viewer 403 forbidden_role', async () => {
  const [made] = (await list(acme)).json
  const routes: [string, string, unknown][] = [
    ['POST', '/api/v1/gateway/keys', { name: 'bot' }],
    ['GET', '/api/v1/gateway/keys', undefined],
    ['DELETE', `/api/v1/gateway/keys/${made.id}`, undefined],
  ]
  const key = await acme.key(['signals:read', 'trades:read', 'orders:write', 'risk:read', 'risk:admin', 'webhooks:write'])
  const userMade = await cli(['user', 'create', 'viewer@acme.test', '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'viewer-password-gateway',
  })
  assert.is(userMade.code, 0, userMade.stderr)
  const viewer = await login(server, 'viewer@acme.test', 'viewer-password-gateway')
  const adminMade = await cli(['user', 'create', 'admin@acme.test', '--tenant', 'acme', '--role', 'admin', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'admin-password-gateway',
  })
  assert.is(adminMade.code, 0, adminMade.stderr)
  const admin = await login(server, 'admin@acme.test', 'admin-password-gateway')
  for (const [method, path, body] of routes) {
    const none = await api(method, path, { body })
    assert.is(none.status, 401, `${method} ${path}`)
    assert.is(none.json.code, 'unauthenticated')
    const byKey = await api(method, path, { token: key, body })
    assert.is(byKey.status, 403, `${method} ${path}: ${byKey.text}`)
    assert.is(byKey.json.code, 'session_required')
    const byViewer = await api(method, path, { token: viewer, body })
    assert.is(byViewer.status, 403, `${method} ${path}: ${byViewer.text}`)
    assert.is(byViewer.json.code, 'forbidden_role')
    // A gateway key is no API key either.
    const byGatewayKey = await api(method, path, { token: made.api_key_prefix.padEnd(64, 'A'), body })
    assert.is(byGatewayKey.status, 401, `${method} ${path}`)
  }
  // An admin may do all three.
  const byAdmin = await api('POST', '/api/v1/gateway/keys', { token: admin, body: { name: 'admin bot' } })
  assert.is(byAdmin.status, 200, byAdmin.text)
  shown.push(byAdmin.json.api_key, byAdmin.json.api_secret)
  assert.is((await api('GET', '/api/v1/gateway/keys', { token: admin })).json[0].id, byAdmin.json.id)
  assert.is((await api('DELETE', `/api/v1/gateway/keys/${byAdmin.json.id}`, { token: admin })).status, 200)
  // The key itself as a bearer credential: refused.
  const asBearer = await api('GET', '/api/v1/models', { token: byAdmin.json.api_key })
  assert.is(asBearer.status, 401)
})

test("tenant isolation: another tenant neither lists nor revokes a tenant's keys (404), and its own are its own", async () => {
  const mine = await create(acme, 'acme only')
  const theirs = await create(zeta, 'zeta only')
  const zetaList = (await list(zeta)).json
  assert.equal(
    zetaList.map((k: { id: string }) => k.id),
    [theirs.id],
  )
  assert.not.ok((await list(acme)).json.some((k: { id: string }) => k.id === theirs.id))
  const revoke = await api('DELETE', `/api/v1/gateway/keys/${mine.id}`, { token: zeta.jwt })
  assert.is(revoke.status, 404, revoke.text)
  assert.is(revoke.json.code, 'not_found')
  assert.is((await list(acme)).json.find((k: { id: string }) => k.id === mine.id).revoked_at, null)
  const found = await findGatewayKey(store.read, mine.api_key, box())
  assert.is(found?.id, mine.id, 'still live')
  assert.is(found?.tenantId, await tenantId(acme))
  assert.is((await findGatewayKey(store.read, theirs.api_key, box()))?.tenantId, await tenantId(zeta))
})

test('pages: ?limit with Link rel="next", newest first', async () => {
  const all = (await list(zeta, '?limit=1000')).json
  await create(zeta, 'page 2')
  await create(zeta, 'page 3')
  const first = await list(zeta, '?limit=2')
  assert.is(first.json.length, 2)
  const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')
  assert.ok(link, first.headers.get('link') ?? 'no Link')
  const next = await list(zeta, link![1].slice('/api/v1/gateway/keys'.length))
  assert.equal(
    [...first.json, ...next.json].map((k: { name: string }) => k.name),
    ['page 3', 'page 2', ...all.map((k: { name: string }) => k.name)],
  )
  assert.is(next.headers.get('link'), null)
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

test('at rest and in the log: no key and no secret in clear; the hash of the key, the secret sealed', async () => {
  assert.ok(shown.length >= 10, `${shown.length} keys and secrets shown`)
  const { rows, all } = await withDb(server, async (db) => ({
    rows: await db.all<{ api_key_prefix: string; api_key_hash: string; secret_sealed: string }>('SELECT * FROM gateway_keys'),
    all: await everyValue(db),
  }))
  for (const value of shown) assert.not.ok(all.includes(value), 'a key or secret in the database')
  const keys = shown.filter((_, i) => i % 2 === 0)
  for (const key of keys) {
    const row = rows.find((r) => r.api_key_hash === createHash('sha256').update(key).digest('hex'))
    assert.ok(row, 'found by the SHA-256 of the key')
    assert.is(row!.api_key_prefix, key.slice(0, 8))
    assert.match(row!.secret_sealed, /^v1\./)
  }
  const log = server.output()
  for (const value of shown) assert.not.ok(log.includes(value), 'a key or secret in the log')
  assert.ok(log.includes('/api/v1/gateway/keys'), 'the requests were logged')
})

test.run()
