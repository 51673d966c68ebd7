// The hot read path reuses API key lookups and signal answers while the database is unchanged. These
// tests change the database behind the server's back (another process, as the CLI or the publisher
// does) and through the API, and expect the very next request to see it: no stale answer, and a
// revoked or expired key is refused at once.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openTestDatabase } from '../support/database.ts'
import { client, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'

const test = suite('api: freshness of reused answers')
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture

/** One statement on its own connection, as another process would run it; it must change one row. */
async function sql(text: string, ...params: unknown[]): Promise<void> {
  const db = await openTestDatabase(server.dataDir)
  try {
    assert.is((await db.run(text, params)).changes, 1, text)
  } finally {
    await db.close()
  }
}

const ZEROS = '0'.repeat(64)

function insertSignal(i: number): Promise<void> {
  return sql(
    // Placeholder links (chain_seq, zero hashes): new signals must carry them (sql/013); the chain is test/signals/chain.test.ts's.
    `INSERT INTO signals (id, model_id, pair, action, direction, entry_price, as_of, created_at, model_version, model_hash, chain_seq, prev_hash, hash)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, '1.0.0', ?, ?, ?, ?)`,
    `sig_01M9${String(i).padStart(2, '0')}00000000000000000000`,
    'trend-follower',
    'BTC/USDT',
    'HOLD',
    'HOLD',
    100 + i,
    `2026-09-${String(1 + i).padStart(2, '0')}`,
    `2026-09-${String(1 + i).padStart(2, '0')}T00:05:00.000Z`,
    ZEROS,
    i + 1,
    ZEROS,
    ZEROS,
  )
}

test.before(async () => {
  server = await startServer()
  api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  assert.is((await api('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: ['trend-follower'] } })).status, 200)
})
test.after(async () => {
  await server.stop()
})

test('signals written by another process show on the very next request', async () => {
  const key = await acme.key(['signals:read'])
  for (let i = 0; i < 3; i++) {
    const before = await api('GET', '/api/v1/signals?limit=2', { token: key })
    assert.is(before.json.length, Math.min(i, 2))
    assert.is((await api('GET', '/api/v1/signals?limit=2', { token: key })).text, before.text, 'repeated answer is the same')
    await insertSignal(i)
    const after = await api('GET', '/api/v1/signals?limit=2', { token: key })
    assert.is(after.json.length, Math.min(i + 1, 2))
    assert.is(after.json[0].id, `sig_01M9${String(i).padStart(2, '0')}00000000000000000000`)
  }
  const paged = await api('GET', '/api/v1/signals?limit=2', { token: key })
  assert.match(paged.headers.get('link') ?? '', /rel="next"/, 'Link survives reuse')
})

test('a workspace change through the API changes the signals answer at once', async () => {
  const key = await acme.key(['signals:read'])
  assert.ok((await api('GET', '/api/v1/signals', { token: key })).json.length > 0)
  assert.is((await api('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: ['mean-reversion'] } })).status, 200)
  assert.equal((await api('GET', '/api/v1/signals', { token: key })).json, [])
  assert.is((await api('GET', '/api/v1/signals?model_id=trend-follower', { token: key })).status, 404)
  assert.is((await api('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: ['trend-follower'] } })).status, 200)
  assert.is((await api('GET', '/api/v1/signals?model_id=trend-follower', { token: key })).status, 200)
})

test('a key revoked or expired by another process is refused on the very next request', async () => {
  const revoked = await acme.key(['signals:read'])
  const expiring = await acme.key(['signals:read'])
  for (const key of [revoked, expiring]) assert.is((await api('GET', '/api/v1/signals', { token: key })).status, 200)
  await sql('UPDATE api_keys SET revoked_at = ? WHERE prefix = ?', new Date().toISOString(), revoked.slice(0, 12))
  await sql('UPDATE api_keys SET expires_at = ? WHERE prefix = ?', '2020-01-01T00:00:00.000Z', expiring.slice(0, 12))
  for (const key of [revoked, expiring]) {
    const res = await api('GET', '/api/v1/signals', { token: key })
    assert.is(res.status, 401)
    assert.is(res.json.code, 'unauthenticated')
  }
})

test('scope changes and revocation through the API apply to the very next request', async () => {
  const created = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'short', scopes: ['signals:read'] } })
  const key = created.json.token
  assert.is((await api('GET', '/api/v1/signals', { token: key })).status, 200)
  assert.is((await api('GET', '/api/v1/trades', { token: key })).status, 403)
  await sql('UPDATE api_keys SET scopes = ? WHERE id = ?', JSON.stringify(['signals:read', 'trades:read']), created.json.id)
  assert.is((await api('GET', '/api/v1/trades', { token: key })).status, 200, 'a scope change in the database applies at once')
  assert.is((await api('DELETE', `/api/v1/auth/api-tokens/${created.json.id}`, { token: acme.jwt })).status, 200)
  assert.is((await api('GET', '/api/v1/signals', { token: key })).status, 401)
})

test.run()
