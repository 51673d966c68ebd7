// The tenant's venue account through the real API, the real ccxt and the test venue: a key is
// checked against the venue before it is stored, a key that can withdraw is refused, the secret is
// stored sealed and never answered or logged, and only an owner or admin session may connect.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cli, login, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { startVenue, venueKey, type Venue } from '../support/venue/index.ts'
import { checkedClient, withDb } from '../trading/market.ts'

const test = suite('venue: accounts')
let venue: Venue
let server: Server
let api: Awaited<ReturnType<typeof checkedClient>>
let acme: TenantFixture
let zeta: TenantFixture
const good = venueKey('acme', 'acme')
const withdrawing = venueKey('withdraws', 'acme')

function connect(token: string, body: Record<string, unknown>) {
  return api('PUT', '/api/v1/venue', { token, body })
}

test.before(async () => {
  venue = await startVenue()
  await venue.addKey({ ...good, restrictions: { enableWithdrawals: false } })
  await venue.addKey({ ...withdrawing, restrictions: { enableWithdrawals: true } })
  await venue.setBalances({ USDT: 10_000 }, 'acme')
  server = await startServer({ args: ['--venue-url', venue.url, '--ca-file', venue.caFile] })
  api = await checkedClient(server)
  acme = await tenantFixture(server, 'acme')
  zeta = await tenantFixture(server, 'zeta')
})
test.after(async () => {
  await server.stop()
  await venue.close()
})

test('PUT checks the key against the venue and stores it sealed; GET shows the hint, never the secret', async () => {
  assert.equal((await api('GET', '/api/v1/venue', { token: acme.jwt })).json.status, 'DISCONNECTED')
  const res = await connect(acme.jwt, { exchange: 'binance', api_key: good.apiKey, api_secret: good.secret })
  assert.is(res.status, 200, res.text)
  assert.equal(
    { ...res.json, checked_at: 'x', connected_at: 'x' },
    {
      exchange: 'binance',
      api_key_hint: `...${good.apiKey.slice(-4)}`,
      status: 'CONNECTED',
      checked_at: 'x',
      can_trade: true,
      can_withdraw: false,
      connected_at: 'x',
      connected_by: acme.ownerEmail,
    },
  )
  // The venue was asked: the account was read with the key, and so were its restrictions.
  const asked = (await venue.requests()).map((r) => `${r.method} ${r.path}`)
  assert.ok(asked.includes('GET /api/v3/account'), asked.join(', '))
  assert.ok(asked.includes('GET /sapi/v1/account/apiRestrictions'), asked.join(', '))
  const got = await api('GET', '/api/v1/venue', { token: await acme.key(['risk:read']) })
  assert.is(got.json.api_key_hint, res.json.api_key_hint)
  assert.not.ok(got.text.includes(good.secret) || got.text.includes(good.apiKey))
  // At rest: neither the key nor the secret appears in the database file's rows, nor in the log.
  const row = (await withDb(server, (db) => db.get<Record<string, string>>('SELECT * FROM venue_accounts')))!
  assert.not.ok(JSON.stringify(row).includes(good.secret) || JSON.stringify(row).includes(good.apiKey))
  assert.match(row.secret_sealed, /^v1\./)
  assert.not.ok(server.output().includes(good.secret))
  // Another tenant sees its own: nothing.
  assert.is((await api('GET', '/api/v1/venue', { token: zeta.jwt })).json.status, 'DISCONNECTED')
})

test('refusals: a key that can withdraw (422 venue_key_unsafe), a wrong secret (422 venue_rejected), bad input, nothing stored', async () => {
  const unsafe = await connect(zeta.jwt, { exchange: 'binance', api_key: withdrawing.apiKey, api_secret: withdrawing.secret })
  assert.is(unsafe.status, 422)
  assert.is(unsafe.json.code, 'venue_key_unsafe')
  assert.match(unsafe.json.detail, /can withdraw funds/)
  const wrong = await connect(zeta.jwt, {
    exchange: 'binance',
    api_key: good.apiKey,
    api_secret: `${good.secret.slice(0, -1)}${good.secret.endsWith('0') ? '1' : '0'}`,
  })
  assert.is(wrong.status, 422, wrong.text)
  assert.is(wrong.json.code, 'venue_rejected')
  assert.match(wrong.json.detail, /^binance refused the key: -1022 Signature for this request is not valid\.$/)
  for (const [body, field] of [
    [{ exchange: 'binance', api_key: good.apiKey }, 'api_secret'],
    [{ exchange: 'Bin ance', api_key: good.apiKey, api_secret: good.secret }, 'exchange'],
    [{ exchange: 'notanexchange', api_key: good.apiKey, api_secret: good.secret }, 'exchange'],
  ] as const) {
    const res = await connect(zeta.jwt, body)
    assert.is(res.status, 400, res.text)
    assert.ok(
      res.json.errors.some((e: { field: string }) => e.field === field),
      res.text,
    )
  }
  assert.is((await api('GET', '/api/v1/venue', { token: zeta.jwt })).json.status, 'DISCONNECTED')
})

test('a venue that is down is 503 venue_unavailable with Retry-After, and nothing is stored', async () => {
  await venue.down()
  try {
    const res = await connect(zeta.jwt, { exchange: 'binance', api_key: good.apiKey, api_secret: good.secret })
    assert.is(res.status, 503, res.text)
    assert.is(res.json.code, 'venue_unavailable')
    assert.ok(res.headers.get('retry-after'))
  } finally {
    await venue.up()
  }
  assert.is((await api('GET', '/api/v1/venue', { token: zeta.jwt })).json.status, 'DISCONNECTED')
})

test('who may connect: an owner or admin session; API keys, viewers and no credential may not', async () => {
  const body = { exchange: 'binance', api_key: good.apiKey, api_secret: good.secret }
  assert.is((await api('PUT', '/api/v1/venue', { body })).status, 401)
  const key = await connect(await acme.key(['risk:admin']), body)
  assert.is(key.status, 403)
  assert.is(key.json.code, 'session_required')
  const made = await cli(['user', 'create', 'viewer@acme.test', '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'viewer-password-123',
  })
  assert.is(made.code, 0, made.stderr)
  const viewer = await login(server, 'viewer@acme.test', 'viewer-password-123')
  const refused = await connect(viewer, body)
  assert.is(refused.status, 403)
  assert.is(refused.json.code, 'forbidden_role')
  assert.is((await api('DELETE', '/api/v1/venue', { token: viewer })).status, 403)
  assert.is((await api('GET', '/api/v1/venue', { token: await acme.key(['trades:read']) })).status, 403)
})

test('DELETE disconnects and forgets the credentials; a second DELETE is 404', async () => {
  const res = await api('DELETE', '/api/v1/venue', { token: acme.jwt })
  assert.is(res.status, 200)
  assert.is(res.json.status, 'CONNECTED', 'the answer is the account as it was')
  assert.is((await api('GET', '/api/v1/venue', { token: acme.jwt })).json.status, 'DISCONNECTED')
  assert.is((await withDb(server, (db) => db.get<{ n: number }>('SELECT count(*) AS n FROM venue_accounts')))!.n, 0)
  const again = await api('DELETE', '/api/v1/venue', { token: acme.jwt })
  assert.is(again.status, 404)
  assert.is(again.json.code, 'not_found')
})

test('the CLI connects with the secret on stdin, shows the account and disconnects; a withdrawing key exits 1', async () => {
  const flags = ['--venue-url', venue.url, '--ca-file', venue.caFile]
  const unsafe = await cli(['venue', 'connect', '--tenant', 'zeta', '--exchange', 'binance', '--api-key', withdrawing.apiKey, ...flags], {
    dataDir: server.dataDir,
    input: `${withdrawing.secret}\n`,
  })
  assert.is(unsafe.code, 1)
  assert.match(unsafe.stderr, /^error: this binance key can withdraw funds/)
  const noSecret = await cli(['venue', 'connect', '--tenant', 'zeta', '--exchange', 'binance', '--api-key', good.apiKey, ...flags], { dataDir: server.dataDir })
  assert.is(noSecret.code, 2)
  const made = await cli(['venue', 'connect', '--tenant', 'zeta', '--exchange', 'binance', '--api-key', good.apiKey, ...flags], {
    dataDir: server.dataDir,
    input: `${good.secret}\n`,
  })
  assert.is(made.code, 0, made.stderr)
  assert.match(made.stdout, new RegExp(`^zeta: binance CONNECTED, key \\.\\.\\.${good.apiKey.slice(-4)}, can_trade=true can_withdraw=false`))
  assert.not.ok(made.stdout.includes(good.secret) || made.stderr.includes(good.secret))
  assert.is((await api('GET', '/api/v1/venue', { token: zeta.jwt })).json.connected_by, 'operator@localhost')
  const shown = await cli(['venue', 'show', '--tenant', 'zeta'], { dataDir: server.dataDir })
  assert.is(shown.stdout, made.stdout)
  const gone = await cli(['venue', 'disconnect', '--tenant', 'zeta'], { dataDir: server.dataDir })
  assert.is(gone.code, 0, gone.stderr)
  assert.is((await cli(['venue', 'show', '--tenant', 'zeta'], { dataDir: server.dataDir })).stdout, 'zeta: no venue connected\n')
  assert.is((await cli(['venue', 'show', '--tenant', 'nobody'], { dataDir: server.dataDir })).code, 1)
})

test.run()
