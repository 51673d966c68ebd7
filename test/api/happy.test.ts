// Happy paths of every foundation route, through a real server and the real CLI.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHash } from 'node:crypto'
import { openTestDatabase } from '../support/database.ts'
import { client, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'

const test = suite('api: happy paths')
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture

test.before(async () => {
  server = await startServer()
  api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
})
test.after(async () => {
  await server.stop()
})

test('health is public and names the version', async () => {
  const res = await api('GET', '/api/v1/health')
  assert.is(res.status, 200)
  assert.is(res.json.status, 'HEALTHY')
  assert.match(res.json.version, /^\d+\.\d+\.\d+$/)
  assert.ok(res.headers.get('x-request-id'))
})

test('an incoming X-Request-Id is echoed', async () => {
  const res = await api('GET', '/api/v1/health', { headers: { 'x-request-id': 'trace-abc.123' } })
  assert.is(res.headers.get('x-request-id'), 'trace-abc.123')
})

test('models: the catalogue with parameters and a recomputable hash', async () => {
  const key = await acme.key(['signals:read'])
  const res = await api('GET', '/api/v1/models', { token: key })
  assert.is(res.status, 200)
  assert.ok(res.json.length >= 2)
  for (const m of res.json) {
    assert.match(m.id, /^[a-z0-9]+(-[a-z0-9]+)*$/)
    assert.is(m.status, 'FORWARD_PAPER')
    assert.is(m.mode, 'PAPER')
    assert.ok(m.universe.length >= 5)
    for (const asset of m.universe) assert.match(asset, /^[A-Z0-9]+$/, 'asset symbols, as the description says')
    assert.is(m.quote_asset, 'USDT')
    assert.equal(
      m.pairs,
      m.universe.map((asset: string) => `${asset}/USDT`),
    )
    // Independent canonical JSON: keys sorted at every level, no spaces.
    const sortKeys = (v: any): any =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sortKeys(v[k])]),
          )
        : v
    const expected = createHash('sha256')
      .update(JSON.stringify(sortKeys({ id: m.id, version: m.version, parameters: m.parameters })))
      .digest('hex')
    assert.is(m.hash, expected, `hash of ${m.id}`)
  }
})

test('workspace: read, then set active models with a session', async () => {
  let res = await api('GET', '/api/v1/workspace', { token: acme.jwt })
  assert.is(res.status, 200)
  assert.is(res.json.slug, 'acme')
  assert.is(res.json.plan, 'EXECUTE')
  assert.equal(res.json.active_model_ids, [])
  assert.equal(res.json.limits, { max_active_models: 5, orders_allowed: true })
  res = await api('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: ['trend-follower', 'mean-reversion'] } })
  assert.is(res.status, 200)
  assert.equal(res.json.active_model_ids, ['mean-reversion', 'trend-follower'])
  const key = await acme.key(['signals:read'])
  res = await api('GET', '/api/v1/workspace', { token: key })
  assert.equal(res.json.active_model_ids, ['mean-reversion', 'trend-follower'])
})

test('signals: only active models, filters and cursor pagination with Link', async () => {
  // Rows written straight into the real database, as the publisher will.
  const db = await openTestDatabase(server.dataDir)
  // Placeholder links (chain_seq, zero hashes): new signals must carry them (sql/013); the chain is test/signals/chain.test.ts's.
  const zeros = '0'.repeat(64)
  const models = ['trend-follower', 'mean-reversion', 'breakout-momentum']
  await db.exec('BEGIN')
  for (let i = 0; i < 30; i++) {
    const model = models[i % 3]
    const id = `sig_01M8${String(i).padStart(2, '0')}00000000000000000000`
    await db.run(
      `INSERT INTO signals (id, model_id, pair, action, direction, entry_price, as_of, created_at, model_version, model_hash, chain_seq, prev_hash, hash)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, '1.0.0', ?, ?, ?, ?)`,
      [
        id,
        model,
        i % 2 ? 'BTC/USDT' : 'ETH/USDT',
        'ENTER_LONG',
        'LONG',
        100 + i,
        `2026-10-${String(1 + i).padStart(2, '0')}`,
        `2026-10-${String(1 + i).padStart(2, '0')}T00:05:00.000Z`,
        zeros,
        i + 1,
        zeros,
        zeros,
      ],
    )
  }
  await db.exec('COMMIT')
  await db.close()
  const key = await acme.key(['signals:read'])
  let res = await api('GET', '/api/v1/signals', { token: key })
  assert.is(res.status, 200)
  assert.is(res.json.length, 20, 'breakout-momentum is not active, so its 10 signals are hidden')
  assert.ok(res.json.every((s: any) => s.model_id !== 'breakout-momentum'))
  const ids = res.json.map((s: any) => s.id)
  assert.equal(ids, [...ids].sort().reverse(), 'newest first')

  res = await api('GET', '/api/v1/signals?model_id=trend-follower&pair=BTC/USDT', { token: key })
  assert.ok(res.json.length > 0)
  assert.ok(res.json.every((s: any) => s.model_id === 'trend-follower' && s.pair === 'BTC/USDT'))

  res = await api('GET', '/api/v1/signals?since=2026-10-25', { token: key })
  assert.ok(res.json.every((s: any) => s.created_at >= '2026-10-25'))
  assert.ok(res.json.length > 0)

  const seen: string[] = []
  let path: string | null = '/api/v1/signals?limit=7'
  let pages = 0
  while (path) {
    res = await api('GET', path, { token: key })
    assert.is(res.status, 200)
    seen.push(...res.json.map((s: any) => s.id))
    const link = res.headers.get('link')
    path = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : null
    pages++
  }
  assert.is(pages, 3)
  assert.equal(seen, ids)
})

test('trades: an empty ledger is an empty array', async () => {
  const key = await acme.key(['trades:read'])
  const res = await api('GET', '/api/v1/trades?status=OPEN', { token: key })
  assert.is(res.status, 200)
  assert.equal(res.json, [])
})

test('risk profile: read with a key, change with a session, incident recorded and chained', async () => {
  const key = await acme.key(['risk:read'])
  let res = await api('GET', '/api/v1/risk/profile', { token: key })
  assert.is(res.status, 200)
  assert.is(res.json.max_open_trades, 5)
  assert.is(res.json.max_exposure_usd, 10000)
  assert.is(res.json.trading_paused, false)
  res = await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 8, max_exposure_usd: 25000.5 } })
  assert.is(res.status, 200)
  assert.is(res.json.max_open_trades, 8)
  assert.is(res.json.max_exposure_usd, 25000.5)
  res = await api('GET', '/api/v1/risk/incidents', { token: key })
  assert.is(res.json[0].action, 'RISK_PROFILE_UPDATED')
  assert.is(res.json[0].actor, acme.ownerEmail)
  assert.match(res.json[0].timestamp, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/)
  res = await api('GET', '/api/v1/risk/incidents/verify', { token: key })
  assert.is(res.json.valid, true)
  assert.is(res.json.count, 1)
})

test('api tokens: create shows the key once, list never does, revoke stops it', async () => {
  let res = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'bot', scopes: ['signals:read', 'trades:read'] } })
  assert.is(res.status, 200)
  const created = res.json
  assert.match(created.token, /^sk_live_[0-9A-Za-z]{38}$/)
  assert.is(created.prefix, created.token.slice(0, 12))
  assert.equal(created.scopes, ['signals:read', 'trades:read'])
  res = await api('GET', '/api/v1/auth/api-tokens', { token: acme.jwt })
  const listed = res.json.find((t: any) => t.id === created.id)
  assert.ok(listed)
  assert.not.ok('token' in listed)
  assert.not.ok(res.text.includes(created.token))
  // Only a hash is stored.
  const db = await openTestDatabase(server.dataDir, { readonly: true })
  const row = await db.get('SELECT * FROM api_keys WHERE id = ?', [created.id])
  await db.close()
  assert.is(row.key_hash, createHash('sha256').update(created.token).digest('hex'))
  assert.not.ok(JSON.stringify(row).includes(created.token))

  res = await api('GET', '/api/v1/signals', { token: created.token })
  assert.is(res.status, 200)
  res = await api('DELETE', `/api/v1/auth/api-tokens/${created.id}`, { token: acme.jwt })
  assert.is(res.status, 200)
  assert.ok(res.json.revoked_at)
  res = await api('GET', '/api/v1/signals', { token: created.token })
  assert.is(res.status, 401)
})

test('Idempotency-Key replays the first answer, the key included, and stores the key only sealed', async () => {
  const body = { name: 'idem', scopes: ['signals:read'] }
  const first = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body, headers: { 'idempotency-key': 'k-1' } })
  const second = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body, headers: { 'idempotency-key': 'k-1' } })
  assert.is(first.status, 200)
  assert.is(second.status, 200)
  assert.is(second.json.id, first.json.id)
  // A client that lost the first answer learns its key from the replay, and the key works.
  assert.is(second.json.token, first.json.token)
  assert.is((await api('GET', '/api/v1/models', { token: second.json.token })).status, 200)
  assert.is(second.headers.get('idempotent-replayed'), 'true')
  // Nowhere in the database is the key in the clear.
  const db = await openTestDatabase(server.dataDir, { readonly: true })
  const stored = await db.all<{ body: string }>('SELECT body FROM idempotency_keys')
  await db.close()
  assert.ok(stored.length >= 1)
  for (const row of stored) assert.not.ok(row.body.includes(first.json.token), 'no stored answer holds the key')
  assert.not.ok(
    stored.some((row) => row.body.includes(first.json.token.slice(8, 40))),
    'not even its random part',
  )
  const list = await api('GET', '/api/v1/auth/api-tokens', { token: acme.jwt })
  assert.is(list.json.filter((t: any) => t.name === 'idem').length, 1, 'created once')
  const conflict = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { ...body, name: 'other' }, headers: { 'idempotency-key': 'k-1' } })
  assert.is(conflict.status, 409)
  assert.is(conflict.json.code, 'idempotency_conflict')
})

test('openapi document is served', async () => {
  const res = await api('GET', '/api/v1/openapi.json')
  assert.is(res.status, 200)
  assert.is(res.json.openapi, '3.1.0')
})

test.run()
