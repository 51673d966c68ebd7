// The optional external OpenID Connect issuer (SPEC section 3): a real HTTPS identity provider on
// 127.0.0.1 (test CA, trusted by the server through NODE_EXTRA_CA_CERTS) serving discovery and a
// JWKS, RS256 and ES256 access tokens signed with jose, the user matched by e-mail. Happy, error
// and security cases: wrong issuer, audience, algorithm, key, expired, tampered, unknown e-mail,
// unverified e-mail, an unreachable provider (503, never a 500) and bad flags.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createServer, type Server as HttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose'
import { cli, client, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { makeTestCa } from '../webhooks/receiver.ts'

const test = suite('api: external OIDC issuer')
const AUDIENCE = 'bulwark-desk'
let idp: HttpsServer
let issuer: string
let server: Server
let plain: Server
let acme: TenantFixture
let api: ReturnType<typeof client>
let jwksFetches = 0
let caFile: string
let answering = true
const published: JWK[] = []
const rsa: { privateKey?: CryptoKey } = {}
const ec: { privateKey?: CryptoKey } = {}
const stranger: { privateKey?: CryptoKey } = {}

async function token(
  options: {
    key?: CryptoKey
    alg?: string
    kid?: string
    iss?: string
    aud?: string
    email?: string
    exp?: number | string
    extra?: Record<string, unknown>
  } = {},
): Promise<string> {
  const alg = options.alg ?? 'RS256'
  return new SignJWT({ email: options.email ?? acme.ownerEmail, ...options.extra })
    .setProtectedHeader({ alg, kid: options.kid ?? (alg === 'ES256' ? 'ec-1' : 'rsa-1'), typ: 'JWT' })
    .setIssuer(options.iss ?? issuer)
    .setAudience(options.aud ?? AUDIENCE)
    .setSubject('idp-user-42')
    .setIssuedAt()
    .setExpirationTime(options.exp ?? '5m')
    .sign(options.key ?? (alg === 'ES256' ? ec.privateKey! : rsa.privateKey!))
}

test.before(async () => {
  const ca = makeTestCa('oidc')
  caFile = ca.caFile
  for (const [target, alg, kid] of [
    [rsa, 'RS256', 'rsa-1'],
    [ec, 'ES256', 'ec-1'],
    [stranger, 'RS256', 'rsa-1'],
  ] as const) {
    const pair = await generateKeyPair(alg, { extractable: true })
    target.privateKey = pair.privateKey
    if (target !== stranger) published.push({ ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' })
  }
  idp = createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
    if (!answering) {
      res.writeHead(503).end()
      return
    }
    const base = `https://127.0.0.1:${(idp.address() as AddressInfo).port}`
    if (req.url === '/realms/desk/.well-known/openid-configuration') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: `${base}/realms/desk`, jwks_uri: `${base}/realms/desk/certs` }))
    } else if (req.url === '/realms/desk/certs') {
      jwksFetches++
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }))
    } else {
      res.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve))
  issuer = `https://127.0.0.1:${(idp.address() as AddressInfo).port}/realms/desk`
  server = await startServer({ args: ['--oidc-issuer', issuer, '--oidc-audience', AUDIENCE], env: { NODE_EXTRA_CA_CERTS: ca.caFile } })
  plain = await startServer({ env: { NODE_EXTRA_CA_CERTS: ca.caFile } })
  api = client(server)
  acme = await tenantFixture(server, 'acme')
  await tenantFixture(server, 'globex')
})

test.after(async () => {
  await Promise.all([server.stop(), plain.stop()])
  idp.close()
})

test('RS256 and ES256 access tokens act as the local user with that e-mail, keys fetched once', async () => {
  for (const alg of ['RS256', 'ES256']) {
    const res = await api('GET', '/api/v1/workspace', { token: await token({ alg }) })
    assert.is(res.status, 200, `${alg}: ${res.text}`)
    assert.is(res.json.slug, 'acme', alg)
  }
  // The owner's role comes from the local user: writes that need owner or admin pass.
  const put = await api('PUT', '/api/v1/workspace/models', { token: await token(), body: { model_ids: ['trend-follower'] } })
  assert.is(put.status, 200, put.text)
  // A session-only route accepts it as a user session.
  assert.is((await api('GET', '/api/v1/auth/api-tokens', { token: await token({ alg: 'ES256' }) })).status, 200)
  for (let i = 0; i < 10; i++) assert.is((await api('GET', '/api/v1/models', { token: await token() })).status, 200)
  assert.is(jwksFetches, 1, 'the JWKS is cached')
})

test('the local HS256 session keeps working next to the issuer', async () => {
  assert.is((await api('GET', '/api/v1/workspace', { token: acme.jwt })).status, 200)
})

test('wrong issuer, audience, expiry, key, algorithm or a tampered payload is 401', async () => {
  const cases: Record<string, string> = {
    'wrong issuer': await token({ iss: 'https://evil.example.com/realms/desk' }),
    'wrong audience': await token({ aud: 'someone-else' }),
    expired: await token({ exp: Math.floor(Date.now() / 1000) - 120 }),
    'signed by a key the issuer never published (same kid)': await token({ key: stranger.privateKey }),
    'unknown kid': await token({ kid: 'rsa-9' }),
    'unverified e-mail': await token({ extra: { email_verified: false } }),
  }
  const good = await token()
  const [h, p, s] = good.split('.')
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString())
  cases['tampered payload'] = [h, Buffer.from(JSON.stringify({ ...claims, email: 'owner@globex.test' })).toString('base64url'), s].join('.')
  cases['alg none'] = [Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url'), p, ''].join('.')
  cases['RS256 header on an ES256 signature'] = (() => {
    const [, ep, es] = good.split('.')
    return [Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'ec-1' })).toString('base64url'), ep, es].join('.')
  })()
  for (const [label, bad] of Object.entries(cases)) {
    const res = await api('GET', '/api/v1/workspace', { token: bad })
    assert.is(res.status, 401, `${label}: ${res.text}`)
    assert.is(res.json.code, 'unauthenticated', label)
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/)
  }
})

test('a valid token for an e-mail no local user has is 401, never another tenant', async () => {
  const res = await api('GET', '/api/v1/workspace', { token: await token({ email: 'nobody@elsewhere.test' }) })
  assert.is(res.status, 401)
  assert.match(res.json.detail, /no user of this service/)
})

test('a server started without --oidc-issuer refuses the same tokens', async () => {
  const res = await client(plain)('GET', '/api/v1/models', { token: await token() })
  assert.is(res.status, 401)
})

test('an unreachable provider is 503 problem+json with Retry-After, and recovers', async () => {
  const fresh = await startServer({
    args: ['--oidc-issuer', issuer, '--oidc-audience', AUDIENCE],
    env: { NODE_EXTRA_CA_CERTS: makeTestCa('oidc-other').caFile },
  })
  try {
    // This server does not trust the provider's CA: discovery fails, nothing is half-known.
    const res = await client(fresh)('GET', '/api/v1/models', { token: await token() })
    assert.is(res.status, 503, res.text)
    assert.is(res.json.code, 'service_unavailable')
    assert.is(res.headers.get('retry-after'), '30')
    assert.is(res.headers.get('content-type'), 'application/problem+json')
    assert.not.match(fresh.output(), /"status":500/)
  } finally {
    await fresh.stop()
  }
  // A provider that answers 503: refused for now (the failure kept for 5 s), accepted once it is back.
  answering = false
  const other = await startServer({ args: ['--oidc-issuer', issuer, '--oidc-audience', AUDIENCE], env: { NODE_EXTRA_CA_CERTS: caFile } })
  try {
    await tenantFixture(other, 'acme') // the same owner e-mail in this server's own data dir
    assert.is((await client(other)('GET', '/api/v1/models', { token: await token() })).status, 503)
    assert.is((await client(other)('GET', '/api/v1/models', { token: await token() })).status, 503, 'the failure is kept a few seconds')
    answering = true
    let status = 0
    for (let i = 0; i < 100 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 200))
      status = (await client(other)('GET', '/api/v1/models', { token: await token() })).status
      assert.ok(status === 503 || status === 200, String(status))
    }
    assert.is(status, 200, 'accepted once the provider is back')
  } finally {
    answering = true
    await other.stop()
  }
})

test('bad OIDC flags exit 2 with the reason', async () => {
  for (const [args, reason] of [
    [['--oidc-issuer', 'https://login.example.com'], /go together/],
    [['--oidc-audience', 'x'], /go together/],
    [['--oidc-issuer', 'http://login.example.com', '--oidc-audience', 'x'], /https/],
    [['--oidc-issuer', 'not a url', '--oidc-audience', 'x'], /not a URL/],
  ] as const) {
    const res = await cli(['serve', '--port', '0', ...args])
    assert.is(res.code, 2, `${args.join(' ')}: ${res.stderr}`)
    assert.match(res.stderr, reason)
  }
})

test.run()
