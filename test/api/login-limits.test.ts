// Login limits per (address, e-mail) and per address: somebody else's failures never lock a user
// out. Behind --trusted-proxy, the address is the first untrusted hop of X-Forwarded-For, read from
// the right; from anyone else the header is ignored.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cli, client, startServer, tenantFixture, type Res, type Server, type TenantFixture } from '../support/harness.ts'

const test = suite('api: login limits')
let server: Server
let login: (email: string, password: string, forwardedFor?: string) => Promise<Res>
let acme: TenantFixture

/**
 * Windows are whole minutes: a burst starts with at least 20 s of its window left, so it cannot
 * reset mid-burst (32 logins, each a scrypt, take seconds on a loaded 2-core machine running other
 * test files beside this one).
 */
async function freshWindow(): Promise<void> {
  const probe = await login('window@probe.test', 'x', '192.0.2.250')
  const reset = Number(probe.headers.get('ratelimit-reset'))
  if (reset < 20) await new Promise((r) => setTimeout(r, reset * 1000 + 200))
}

test.before(async () => {
  // 3 a minute per (address, e-mail), so 30 per address; the test client's loopback is a proxy.
  server = await startServer({ args: ['--login-rate-limit', '3', '--trusted-proxy', '127.0.0.1/32', '--trusted-proxy', '10.0.0.0/8'] })
  acme = await tenantFixture(server, 'acme')
  login = (email, password, forwardedFor) =>
    client(server)('POST', '/api/v1/auth/login', { body: { email, password }, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} })
})
test.after(async () => {
  await server.stop()
})

test("another e-mail's failures from the same address do not lock the owner out", async () => {
  await freshWindow()
  const attacker = '198.51.100.7'
  const failures = []
  for (let i = 0; i < 10; i++) failures.push(await login('someone-else@acme.test', 'wrong', attacker))
  assert.equal(
    failures.slice(0, 3).map((r) => r.status),
    [401, 401, 401],
  )
  assert.ok(failures.slice(3).every((r) => r.status === 429 && r.json.code === 'rate_limited'))
  assert.match(failures[9].json.detail, /for this e-mail from this address/)
  assert.ok(Number(failures[9].headers.get('retry-after')) > 0)
  // The owner, from that same address, still signs in.
  const owner = await login(acme.ownerEmail, acme.password, attacker)
  assert.is(owner.status, 200, owner.text)
  // E-mails are one budget whatever their case.
  assert.is((await login('SOMEONE-ELSE@acme.test', 'wrong', attacker)).status, 429)
})

test('one address is limited across e-mails too', async () => {
  await freshWindow()
  const sprayer = '198.51.100.8'
  const results = []
  for (let i = 0; i < 32; i++) results.push(await login(`user${i}@spray.test`, 'wrong', sprayer))
  assert.ok(
    results.slice(0, 30).every((r) => r.status === 401),
    'thirty distinct e-mails are tried',
  )
  assert.equal(
    results.slice(30).map((r) => r.status),
    [429, 429],
  )
  assert.match(results[31].json.detail, /from this address/)
  // Another address is not affected, even for the same e-mails.
  assert.is((await login('user0@spray.test', 'wrong', '198.51.100.9')).status, 401)
})

test('X-Forwarded-For: the first untrusted hop from the right; a forged left part changes nothing', async () => {
  await freshWindow()
  // 10.0.0.9 is a trusted proxy too, so the client is the hop before it.
  const hit = (left: string) => login('xff@acme.test', 'wrong', `${left}, 203.0.113.77, 10.0.0.9`)
  const first = [await hit('6.6.6.6'), await hit('7.7.7.7'), await hit('8.8.8.8')]
  assert.ok(first.every((r) => r.status === 401))
  // Rotating the forged part does not buy new attempts: the address is 203.0.113.77 each time.
  assert.is((await hit('9.9.9.9')).status, 429)
  assert.is((await login('xff@acme.test', 'wrong', '203.0.113.77')).status, 429)
  assert.is((await login('xff@acme.test', 'wrong', '203.0.113.78')).status, 401)
})

test('without --trusted-proxy, X-Forwarded-For is ignored', async () => {
  const plain = await startServer({ args: ['--login-rate-limit', '2'], dataDir: `${server.dataDir}-plain` })
  try {
    const attempt = (xff: string) =>
      client(plain)('POST', '/api/v1/auth/login', { body: { email: 'a@b.test', password: 'x' }, headers: { 'x-forwarded-for': xff } })
    let first = await attempt('1.1.1.1')
    const reset = Number(first.headers.get('ratelimit-reset'))
    if (reset < 5) {
      await new Promise((r) => setTimeout(r, reset * 1000 + 200))
      first = await attempt('1.1.1.1')
    }
    const results = [first, await attempt('2.2.2.2'), await attempt('3.3.3.3')]
    assert.equal(
      results.map((r) => r.status),
      [401, 401, 429],
      'every attempt counted against the socket address',
    )
  } finally {
    await plain.stop()
  }
})

test('a bad --trusted-proxy exits 2 with a one-line error', async () => {
  for (const bad of ['10.0.0.0/33', 'proxy.lan', '::1/129']) {
    const res = await cli(['serve', '--port', '0', '--trusted-proxy', bad], { dataDir: `${server.dataDir}-bad` })
    assert.is(res.code, 2, res.stderr)
    assert.match(res.stderr, /--trusted-proxy/)
  }
})

test.run()
