// Text in, text stored, text hashed: one sequence of code points. A seeded property test pushes
// random Unicode, ill-formed included, through every text field that reaches a hash (the kill
// switch's reason lands in the incident chain) and through the other free-text fields, then
// recomputes the chain with its own few lines. Ill-formed text is 400 naming the field, and
// nothing of the request is written.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { request as httpRequest } from 'node:http'
import { prng } from '../../src/shared/prng.ts'
import { incidentHash } from '../support/incident-oracle.ts'
import { cli, client, startServer, tenantFixture, type Res, type Server, type TenantFixture } from '../support/harness.ts'

const test = suite('api: unicode in, unicode stored, unicode hashed')
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture
let admin: string
const random = prng(0x5eed_0009)

/** Pieces random strings are made of: plain, astral, combining, noncharacters, and the bad ones. */
const PIECES = [
  'a',
  'Z',
  '7',
  ' ',
  '-',
  'é',
  'ß',
  'Ω',
  '€',
  '中',
  '\u0301',
  '\uFEFF',
  '\uFFFE',
  '\uFFFF',
  '\u2028',
  '\t',
  '"',
  '\\',
  '😀',
  '𝔘',
  '\u{10FFFF}', // astral: surrogate pairs in UTF-16
  '\uD800',
  '\uDBFF',
  '\uDC00',
  '\uDFFF',
  '\uDC00\uD800', // unpaired or reversed surrogates
  '\u0000',
]

function randomText(): string {
  let text = ''
  const length = 1 + Math.floor(random() * 12)
  for (let i = 0; i < length; i++) text += PIECES[Math.floor(random() * PIECES.length)]
  return text
}

/** The test's own reading of "well-formed, no NUL": every surrogate paired, high then low. */
function acceptable(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit === 0) return false
    if (unit >= 0xdc00 && unit <= 0xdfff) return false
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      i++
    }
  }
  return true
}

function assertRefused(res: Res, field: string): void {
  assert.is(res.status, 400, res.text)
  assert.is(res.json.code, 'validation_failed')
  assert.is(res.json.errors[0].field, field)
  assert.match(res.json.detail, /Unicode|NUL/)
}

test.before(async () => {
  // Loopback port 9 is allowed as a webhook target so that webhooks can be made; nothing listens there.
  server = await startServer({ args: ['--webhook-allow-cidr', '127.0.0.1/32'] })
  api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  admin = await acme.key(['risk:admin', 'risk:read', 'orders:write'])
})
test.after(async () => {
  await server.stop()
})

test('kill switch reasons: random text, the chain verifies by an independent recomputation', async () => {
  const sent: string[] = []
  for (let i = 0; i < 120; i++) {
    const reason = randomText()
    const body = i % 2 === 0 ? { action: 'PAUSE', pause: true, reason } : { action: 'RESUME', pause: false, reason }
    const res = await api('POST', '/api/v1/risk/kill-switch', { token: admin, body })
    if (acceptable(reason)) {
      assert.is(res.status, 200, `${JSON.stringify(reason)}: ${res.text}`)
      sent.push(reason)
    } else {
      assertRefused(res, 'reason')
    }
  }
  assert.ok(sent.length > 20 && sent.length < 100, `a mix of good and bad text (${sent.length} good)`)
  const chain = (await api('GET', '/api/v1/risk/incidents/export', { token: admin })).json as Record<string, any>[]
  // What is answered is what was sent, code point for code point.
  const reasons = chain.filter((i) => i.action !== 'RISK_LIMIT_BREACHED').map((i) => i.reason.replace(/^(PAUSE|RESUME): /, ''))
  assert.equal(reasons.slice(-sent.length), sent)
  let prev = '0'.repeat(64)
  for (const incident of chain) {
    const hash = incidentHash(prev, incident)
    assert.is(incident.prev_hash, prev)
    assert.is(incident.hash, hash, `hash of ${incident.id}`)
    prev = hash
  }
  const verified = await api('GET', '/api/v1/risk/incidents/verify', { token: admin })
  assert.equal([verified.json.valid, verified.json.head_hash], [true, prev])
  const offline = await cli(['incidents', 'verify', '--tenant', 'acme'], { dataDir: server.dataDir })
  assert.is(offline.code, 0, offline.stdout + offline.stderr)
})

test('every other free-text field: ill-formed is refused with its name, well-formed comes back unchanged', async () => {
  for (let i = 0; i < 40; i++) {
    const text = randomText()
    const token = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: text, scopes: ['signals:read'] } })
    const hook = await api('POST', '/api/v1/webhooks', { token: acme.jwt, body: { url: 'https://127.0.0.1:9/never', description: text } })
    if (acceptable(text)) {
      assert.is(token.status, 200, token.text)
      assert.is(token.json.name, text)
      const listed = (await api('GET', '/api/v1/auth/api-tokens', { token: acme.jwt })).json.find((t: any) => t.id === token.json.id)
      assert.is(listed.name, text)
      assert.is(hook.status, 200, hook.text)
      assert.is((await api('GET', `/api/v1/webhooks/${hook.json.id}`, { token: acme.jwt })).json.description, text)
    } else {
      assertRefused(token, 'name')
      assertRefused(hook, 'description')
    }
  }
  // Fields that are patterns or ids are refused for their text first, with their own name.
  assertRefused(await api('POST', '/api/v1/orders', { token: admin, body: { pair: 'BTC/\uD800', side: 'BUY', type: 'MARKET', quantity: 1 } }), 'pair')
  assertRefused(await api('POST', '/api/v1/risk/kill-switch', { token: admin, body: { action: 'PAUSE', pause: true, model_id: 'trend\u0000' } }), 'model_id')
  assertRefused(await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'ok', scopes: ['signals:read\uDFFF'] } }), 'scopes[0]')
})

test('field names, query strings and raw bytes follow the same rule', async () => {
  const key = await api('POST', '/api/v1/risk/kill-switch', {
    token: admin,
    raw: '{"action":"PAUSE","pause":true,"\\ud800":1}',
    headers: { 'content-type': 'application/json' },
  })
  assert.is(key.status, 400)
  assert.is(key.json.code, 'validation_failed')
  assert.match(key.json.errors[0].message, /field name/)
  assertRefused(await api('GET', '/api/v1/trades?pair=BTC%2FUSDT%00', { token: acme.jwt }), 'pair')
  assertRefused(await api('GET', '/api/v1/signals?since=2026-01-01%00', { token: acme.jwt }), 'since')
  // A surrogate sent as raw UTF-8 bytes (CESU-8) is not UTF-8 at all: refused before parsing.
  const raw = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const payload = Buffer.concat([Buffer.from('{"action":"PAUSE","pause":true,"reason":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')])
    const req = httpRequest(
      `${server.url}/api/v1/risk/kill-switch`,
      { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', 'content-length': payload.length } },
      (res) => {
        let body = ''
        res.on('data', (d) => (body += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
  assert.is(raw.status, 400)
  assert.is(JSON.parse(raw.body).code, 'invalid_json')
  // None of these wrote anything: the chain still verifies and ends where it ended.
  assert.is((await api('GET', '/api/v1/risk/incidents/verify', { token: admin })).json.valid, true)
})

test.run()
