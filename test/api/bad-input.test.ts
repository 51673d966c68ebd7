// Hundreds of malformed requests, generated from the OpenAPI document with a seeded generator, against
// a live server: broken JSON, wrong types, huge numbers, long strings, hostile unicode, SQL fragments,
// path tricks, bad headers and credentials, bad queries. Never a 5xx; every refusal is a problem+json
// with a code from the closed list; afterwards the server is healthy and no tenant data has changed.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'
import Ajv2020Module from 'ajv/dist/2020.js'
import { ERROR_CODES } from '../../src/http/errors.ts'
import { SCOPES } from '../../src/auth/scopes.ts'
import { openTestDatabase } from '../support/database.ts'
import { cli, client, login, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { fill, operations, type Operation } from '../support/openapi.ts'
import { rawExchange, utf8Bytes, wire } from '../support/raw-http.ts'
import { prng } from '../../src/shared/prng.ts'

const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as typeof Ajv2020Module.default

const test = suite('api: bad input')
const SEED = 0xb01d
const FAKE_ID = 'xyz_01M80000000000000000000000'
const BODY_LIMIT = 64 * 1024

let server: Server
let api: ReturnType<typeof client>
let port: number
let acme: TenantFixture
let globex: TenantFixture
let viewerJwt: string
let doc: any
let ops: Operation[]
let secret: Buffer
let claims: { sub: string; tid: string }
const keys: Record<'all' | 'signals' | 'revoked' | 'expired' | 'globex', string> = {} as never
let globexTokenId: string
let before: unknown
let sent = 0

// ---------------------------------------------------------------- deterministic generator

const rng = prng(SEED)
const pick = <T>(items: readonly T[]): T => items[Math.floor(rng() * items.length)]
const pickSome = <T>(items: readonly T[], n: number): T[] => {
  const pool = [...items]
  const out: T[] = []
  while (out.length < n && pool.length) out.push(pool.splice(Math.floor(rng() * pool.length), 1)[0])
  return out
}

/** Hostile strings: unicode edge cases, NUL, SQL and injection fragments, sizes around the limits. */
const NOISE = [
  '🚀💥🔥',
  '\ud800',
  'x\udfffy',
  '\u202Eevil\u202C',
  'a\u0000b',
  '\u0000',
  "' OR 1=1 --",
  '; DROP TABLE tenants; --',
  '1; SELECT * FROM api_keys',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a Log4Shell probe, sent as plain text on purpose
  '${jndi:ldap://x/a}',
  '%s%s%n%x',
  'ＡＢＣ１２３',
  'e\u0301\u0301\u0301',
  '\uFEFF',
  '\r\nX-Injected: 1',
  '__proto__',
  'constructor',
  ' ',
  '',
  'null',
  'true',
  '0',
  '-1',
  '١٢٣',
  'ǅ',
  'x'.repeat(10_000),
]
const LONG = 'A'.repeat(100 * 1024)

const BROKEN_JSON = [
  '{',
  '}',
  '{"a":',
  '{"a" 1}',
  "{'a': 1}",
  '{"a": 1,}',
  '[1, 2',
  'NaN',
  '{"a": NaN}',
  '{"a": Infinity}',
  '{"a": undefined}',
  '{"a": 0x10}',
  '{"a": 01}',
  '{"a": .5}',
  '{"a": +1}',
  '// c\n{}',
  '{"a": 1} {"b": 2}',
  '{"a": "\\x41"}',
  '{"a": "\\u12"}',
  '"unterminated',
  '\uFEFF',
  '\uFEFF\uFEFF{}',
  '{"a":"b"',
  'tru',
  'nul',
  '{"a": "line\nbreak"}',
  '{"\u0000": 1',
  '{"a": [}',
]

// ---------------------------------------------------------------- credentials

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
function base62(n: number, width: number): string {
  let out = ''
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out
    n = Math.floor(n / 62)
  }
  return out
}
/** A well-formed key with a correct checksum that the server never issued. */
function unknownKey(): string {
  let body = 'sk_live_'
  for (let i = 0; i < 32; i++) body += pick([...BASE62])
  return body + base62(crc32(body), 6)
}

function jwt(header: Record<string, unknown>, payload: Record<string, unknown>, key: Buffer | string = secret, alg = 'sha256'): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url')
  const data = `${enc(header)}.${enc(payload)}`
  return `${data}.${createHmac(alg, key).update(data).digest('base64url')}`
}

function sessionPayload(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000)
  return {
    iss: 'bulwark',
    aud: 'bulwark-api',
    sub: claims.sub,
    tid: claims.tid,
    role: 'owner',
    email: acme.ownerEmail,
    iat: now,
    exp: now + 600,
    jti: 'j-1',
    ...overrides,
  }
}

/** Authorization header values that must all be refused with 401. */
function badAuthorizations(): [string, string][] {
  const hs = { alg: 'HS256', typ: 'JWT' }
  const now = Math.floor(Date.now() / 1000)
  const parts = acme.jwt.split('.')
  const forged = JSON.parse(Buffer.from(parts[1], 'base64url').toString())
  forged.tid = 'ten_01M80000000000000000000000'
  return [
    ['empty', ''],
    ['scheme only', 'Bearer'],
    ['scheme and space', 'Bearer x y'],
    ['basic', `Basic ${Buffer.from('owner@acme.test:pw').toString('base64')}`],
    ['token scheme', `Token ${keys.all}`],
    ['tab separator', `Bearer\t${keys.all}`],
    ['double space', `Bearer  ${keys.all}`],
    ['two credentials', `Bearer ${keys.all} ${keys.all}`],
    ['quoted', `Bearer "${keys.all}"`],
    ['bad checksum', `Bearer ${keys.all.slice(0, -1)}${keys.all.endsWith('A') ? 'B' : 'A'}`],
    ['unknown key', `Bearer ${unknownKey()}`],
    ['truncated key', `Bearer ${keys.all.slice(0, 20)}`],
    ['test key', `Bearer sk_test_${'a'.repeat(38)}`],
    ['revoked key', `Bearer ${keys.revoked}`],
    ['expired key', `Bearer ${keys.expired}`],
    ['over 4096 chars', `Bearer ${'a'.repeat(5000)}`],
    ['4096 chars', `Bearer ${'a'.repeat(4096)}`],
    ['sql', "Bearer ' OR 1=1 --"],
    [
      'alg none',
      `Bearer ${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(sessionPayload())).toString('base64url')}.`,
    ],
    ['wrong secret', `Bearer ${jwt(hs, sessionPayload(), 'not-the-secret')}`],
    ['HS512 with the real secret', `Bearer ${jwt({ alg: 'HS512', typ: 'JWT' }, sessionPayload(), secret, 'sha512')}`],
    ['expired session', `Bearer ${jwt(hs, sessionPayload({ iat: now - 7200, exp: now - 3600 }))}`],
    ['wrong issuer', `Bearer ${jwt(hs, sessionPayload({ iss: 'evil' }))}`],
    ['wrong audience', `Bearer ${jwt(hs, sessionPayload({ aud: 'other-api' }))}`],
    ['unknown user', `Bearer ${jwt(hs, sessionPayload({ sub: 'usr_01M80000000000000000000000' }))}`],
    ['other tenant claim', `Bearer ${jwt(hs, sessionPayload({ tid: 'ten_01M80000000000000000000000' }))}`],
    ['missing jti', `Bearer ${jwt(hs, { ...sessionPayload(), jti: undefined })}`],
    ['tampered payload', `Bearer ${parts[0]}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${parts[2]}`],
    ['signature stripped', `Bearer ${parts[0]}.${parts[1]}.`],
    ['latin1 bytes', 'Bearer sk_live_\u00e9\u00e9\u00e9'],
  ]
}

// ---------------------------------------------------------------- schema-driven bad values

const requestAjv = new Ajv2020({ strict: false, allowUnionTypes: true, validateFormats: true })
// As lenient as the server (offsets allowed), so "ajv refuses it" means "the server must refuse it".
requestAjv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/)
requestAjv.addFormat('date', /^\d{4}-\d{2}-\d{2}$/)
requestAjv.addFormat('email', /^[^\s@]{1,64}@[^\s@]{1,255}$/)
requestAjv.addFormat('uri', /^[a-z][a-z0-9+.-]*:/i)

const RAW = '"__raw_json__"'
interface BadValue {
  value: unknown
  text?: string
} // text: JSON text that JS cannot produce (1e309)

function typesOf(schema: any): string[] {
  return Array.isArray(schema.type) ? schema.type : [schema.type]
}

/** Values the schema refuses: wrong types, out-of-range and non-finite numbers, enum/pattern misses. */
function badValues(schema: any): BadValue[] {
  const types = typesOf(schema)
  const accepts = (t: string) => types.includes(t) || (t === 'integer' && types.includes('number'))
  const out: BadValue[] = []
  const samples: Record<string, unknown> = {
    string: pick(NOISE.filter((n) => n.length < 200)),
    integer: 7,
    number: 1.5,
    boolean: true,
    array: [],
    object: {},
    null: null,
  }
  for (const [t, v] of Object.entries(samples)) if (!accepts(t)) out.push({ value: v })
  if (types.includes('string')) {
    const strings = schema.maxLength !== undefined ? ['x'.repeat(schema.maxLength + 1), pick(NOISE) + 'x'.repeat(schema.maxLength)] : []
    if (schema.enum || schema.pattern || schema.format) strings.push(...pickSome(NOISE, 4), `${String(schema.enum?.[0] ?? 'x').toLowerCase()} `)
    out.push(...strings.map((value) => ({ value })))
  }
  if (types.includes('integer') || types.includes('number')) {
    out.push({ value: 0, text: '1e309' }, { value: 0, text: '-1e309' }, { value: 0, text: '18446744073709551616' }, { value: String(schema.minimum ?? 1) })
    if (schema.minimum !== undefined) out.push({ value: schema.minimum - 1 })
    if (schema.exclusiveMinimum !== undefined) out.push({ value: schema.exclusiveMinimum }, { value: 0, text: '1e-400' })
    if (schema.maximum !== undefined) out.push({ value: schema.maximum * 2 + 1 })
    if (types.includes('integer') && !types.includes('number')) out.push({ value: 2.5 }, { value: 2 ** 53 + 2 })
  }
  if (types.includes('array')) {
    const item = schema.items?.enum?.[0] ?? 'zz-not-valid-'
    if (schema.minItems) out.push({ value: [] })
    if (schema.maxItems !== undefined) out.push({ value: Array.from({ length: schema.maxItems + 1 }, (_, i) => `${item}${i}`) })
    if (schema.uniqueItems && schema.items?.enum) out.push({ value: [item, item] })
    if (schema.items)
      out.push(
        ...badValues(schema.items)
          .slice(0, 4)
          .map((b) => ({ value: [b.value], text: b.text && `[${b.text}]` })),
      )
    out.push({ value: 0, text: `${'['.repeat(30_000)}${']'.repeat(30_000)}` })
  }
  if (types.includes('object') && schema.additionalProperties === false) out.push({ value: { [pick(NOISE) || 'k']: 1 } })
  return out
}

/** A body the schema accepts, as a starting point that each case breaks in one place. */
function example(schema: any): unknown {
  const t = typesOf(schema)[0]
  if (schema.enum) return schema.enum[0]
  if (t === 'string')
    return schema.format === 'date-time'
      ? '2099-01-01T00:00:00Z'
      : schema.format === 'date'
        ? '2099-01-01'
        : schema.format === 'email'
          ? 'a@b.test'
          : schema.format === 'uri'
            ? 'https://example.test/hook'
            : 'x'.repeat(Math.max(1, schema.minLength ?? 1))
  if (t === 'integer' || t === 'number') return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1)
  if (t === 'boolean') return false
  if (t === 'array') return schema.minItems ? [example(schema.items)] : []
  if (t === 'object') return Object.fromEntries((schema.required ?? []).map((k: string) => [k, example(schema.properties[k])]))
  return null
}

const KNOWN_BODIES: Record<string, unknown> = {
  'POST /api/v1/auth/login': { email: 'owner@acme.test', password: 'wrong-password' },
  'POST /api/v1/auth/api-tokens': { name: 'bot', scopes: ['signals:read'] },
  'PUT /api/v1/workspace/models': { model_ids: ['trend-follower'] },
  'PATCH /api/v1/risk/profile': { max_open_trades: 3 },
}

/** A query value as the server sees it: numbers and booleans are converted from the text first. */
function asQueried(schema: any, text: string): unknown {
  const types = typesOf(schema)
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(text)) return Number(text)
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true'
  return text
}

// ---------------------------------------------------------------- cases and their checks

interface Case {
  label: string
  method: string
  path: string
  token?: string
  headers?: Record<string, string>
  body?: string
  raw?: Buffer // sent as is on a bare socket
  expect?: number[]
  codes?: string[]
  mayClose?: boolean // the server may drop the connection without an answer
}

interface Answer {
  status: number
  header(name: string): string | null
  text: string
  json: any
}

async function send(c: Case): Promise<Answer> {
  sent++
  if (c.raw) {
    const a = await rawExchange(port, c.raw)
    return { status: a.status, header: (n) => a.headers.get(n.toLowerCase()) ?? null, text: a.body, json: a.json }
  }
  const headers: Record<string, string> = { ...c.headers }
  if (c.token !== undefined) headers.authorization = c.token.startsWith('=') ? c.token.slice(1) : `Bearer ${c.token}`
  const res = await fetch(server.url + c.path, { method: c.method, headers, body: c.body })
  const text = await res.text()
  let json: unknown
  try {
    json = text ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: res.status, header: (n) => res.headers.get(n), text, json }
}

function checkAnswer(c: Case, a: Answer): void {
  const where = `${c.label}: ${c.method} ${c.path.slice(0, 100)} -> ${a.status} ${a.text.slice(0, 300)}`
  if (a.status === 0) {
    assert.ok(c.mayClose, `${where}: no answer`)
    return
  }
  assert.ok(a.status < 500, `${where}: server error`)
  if (c.expect) assert.ok(c.expect.includes(a.status), `${where}: expected ${c.expect.join('|')}`)
  assert.ok(a.header('x-request-id'), `${where}: X-Request-Id`)
  if (a.status < 400) return
  assert.match(a.header('content-type') ?? '', /^application\/problem\+json/, where)
  if (c.method === 'HEAD') return
  const p = a.json
  assert.ok(p && typeof p === 'object', `${where}: problem body`)
  assert.type(p.detail, 'string', where)
  assert.ok(p.detail.length > 0, `${where}: empty detail`)
  assert.ok(Object.hasOwn(ERROR_CODES, p.code), `${where}: code ${p.code} not in the closed list`)
  assert.is(ERROR_CODES[p.code as keyof typeof ERROR_CODES][0], a.status, `${where}: status of ${p.code}`)
  assert.is(p.status, a.status, where)
  assert.is(p.request_id, a.header('x-request-id'), where)
  assert.not.match(a.text, /\bat .+\.(ts|js|mjs):\d+/, `${where}: stack trace in body`)
  if (c.codes) assert.ok(c.codes.includes(p.code), `${where}: expected code ${c.codes.join('|')}`)
  if (a.status === 401) assert.match(a.header('www-authenticate') ?? '', /^Bearer/, where)
  if (a.status === 405) assert.ok(a.header('allow'), `${where}: Allow`)
  if (a.status === 429) assert.ok(a.header('retry-after'), `${where}: Retry-After`)
}

/** Runs every case and reports every failure at once, not just the first. */
async function runAll(cases: Case[]): Promise<void> {
  const failures: string[] = []
  for (const c of cases) {
    try {
      checkAnswer(c, await send(c))
    } catch (err) {
      failures.push((err as Error).message)
    }
  }
  assert.equal(failures.length, 0, `${failures.length} of ${cases.length} cases failed:\n${failures.slice(0, 40).join('\n')}`)
}

/** What no rejected request may change. */
async function tenantState(): Promise<unknown> {
  const strip = (tokens: any[]) => tokens.map(({ last_used_at: _l, ...rest }) => rest)
  const get = async (path: string, token: string) => {
    const res = await api('GET', path, { token })
    assert.is(res.status, 200, `${path}: ${res.text}`)
    return res.json
  }
  return {
    profile: await get('/api/v1/risk/profile', acme.jwt),
    workspace: await get('/api/v1/workspace', acme.jwt),
    tokens: strip(await get('/api/v1/auth/api-tokens?limit=1000', acme.jwt)),
    incidents: await get('/api/v1/risk/incidents/export', acme.jwt),
    globexProfile: await get('/api/v1/risk/profile', globex.jwt),
    globexTokens: strip(await get('/api/v1/auth/api-tokens?limit=1000', globex.jwt)),
    users: await readUsers(),
  }
}

async function readUsers(): Promise<unknown[]> {
  const db = await openTestDatabase(server.dataDir, { readonly: true })
  try {
    return await db.all('SELECT id, email, role FROM users ORDER BY id')
  } finally {
    await db.close()
  }
}

function bodyOps(): Operation[] {
  return ops.filter((o) => o.op.requestBody)
}

function tokenFor(o: Operation): string | undefined {
  return Array.isArray(o.op.security) && o.op.security.length === 0 ? undefined : acme.jwt
}

// ---------------------------------------------------------------- setup

test.before(async () => {
  server = await startServer({ args: ['--rate-limit', '1000000', '--login-rate-limit', '1000000'] })
  port = Number(new URL(server.url).port)
  api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  globex = await tenantFixture(server, 'globex', 'SIGNAL')
  const made = await cli(['user', 'create', 'viewer@acme.test', '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'viewer-pass-123',
  })
  assert.is(made.code, 0, made.stderr)
  viewerJwt = await login(server, 'viewer@acme.test', 'viewer-pass-123')
  secret = Buffer.from(readFileSync(join(server.dataDir, 'jwt-signing.key'), 'utf8').trim(), 'base64')
  const payload = JSON.parse(Buffer.from(acme.jwt.split('.')[1], 'base64url').toString())
  claims = { sub: payload.sub, tid: payload.tid }
  keys.all = await acme.key([...SCOPES])
  keys.signals = await acme.key(['signals:read'])
  keys.revoked = await acme.key(['signals:read'])
  keys.expired = await acme.key(['signals:read'])
  keys.globex = await globex.key(['signals:read'])
  const tokens = (await api('GET', '/api/v1/auth/api-tokens', { token: acme.jwt })).json
  const byPrefix = (key: string) => tokens.find((t: any) => t.prefix === key.slice(0, 12)).id
  assert.is((await api('DELETE', `/api/v1/auth/api-tokens/${byPrefix(keys.revoked)}`, { token: acme.jwt })).status, 200)
  const db = await openTestDatabase(server.dataDir)
  assert.is((await db.run('UPDATE api_keys SET expires_at = ? WHERE id = ?', ['2020-01-01T00:00:00.000Z', byPrefix(keys.expired)])).changes, 1)
  await db.close()
  globexTokenId = (await api('GET', '/api/v1/auth/api-tokens', { token: globex.jwt })).json[0].id
  assert.is((await api('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: ['trend-follower', 'mean-reversion'] } })).status, 200)
  assert.is((await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 4 } })).status, 200)
  doc = (await api('GET', '/api/v1/openapi.json')).json
  ops = operations(doc)
  before = await tenantState()
})
test.after(async () => {
  await server.stop()
})

// ---------------------------------------------------------------- the cases

test('bodies: wrong types, huge numbers, long strings, hostile unicode, unknown and missing fields', async () => {
  const cases: Case[] = []
  for (const o of bodyOps()) {
    const schema = o.op.requestBody.content['application/json'].schema
    const base = (KNOWN_BODIES[`${o.method} ${o.path}`] ?? example(schema)) as Record<string, unknown>
    const path = fill(o.path, FAKE_ID)
    const token = tokenFor(o)
    const add = (label: string, text: string, extra: Partial<Case> = {}) => {
      const idem: Record<string, string> = o.method === 'POST' && token && rng() < 0.3 ? { 'idempotency-key': `bad-input-${cases.length}` } : {}
      cases.push({
        label,
        method: o.method,
        path,
        token,
        body: text,
        headers: { 'content-type': pick(['application/json', 'application/json; charset=utf-8', 'Application/JSON']), ...idem },
        expect: Buffer.byteLength(text) > BODY_LIMIT ? [413] : [400],
        codes: Buffer.byteLength(text) > BODY_LIMIT ? ['payload_too_large'] : ['validation_failed', 'unknown_field', 'invalid_json'],
        ...extra,
      })
    }
    const refused = (body: unknown) => !requestAjv.validate(schema, body)
    for (const [name, sub] of Object.entries<any>(schema.properties ?? {})) {
      for (const bad of badValues(sub)) {
        const body = { ...base, [name]: bad.text ? '__raw_json__' : bad.value }
        if (!bad.text && !refused(body)) continue
        add(`${name} = ${(bad.text ?? JSON.stringify(bad.value) ?? '').slice(0, 40)}`, JSON.stringify(body).replace(RAW, bad.text ?? RAW))
      }
      add(`${name} too long to fit`, JSON.stringify({ ...base, [name]: LONG }))
    }
    for (const name of schema.required ?? []) {
      const { [name]: _gone, ...rest } = base
      add(`without ${name}`, JSON.stringify(rest))
    }
    for (const noise of pickSome(NOISE, 6)) add(`unknown field ${JSON.stringify(noise).slice(0, 30)}`, JSON.stringify({ ...base, [noise || 'empty']: noise }))
    add('__proto__ field', JSON.stringify(base).replace(/^\{/, '{"__proto__": {"admin": true}, '))
    add('constructor field', JSON.stringify({ ...base, constructor: { prototype: { admin: true } } }))
    for (const top of [[], [base], 'text', 42, null, true]) add(`top-level ${JSON.stringify(top).slice(0, 30)}`, JSON.stringify(top))
    for (const text of BROKEN_JSON) add(`broken JSON ${JSON.stringify(text).slice(0, 30)}`, text, { codes: ['invalid_json'] })
    add('byte order mark before an empty object', '\uFEFF{}', { codes: ['validation_failed', 'unknown_field'] })
    add('empty body', '', { codes: ['validation_failed', 'invalid_json'] })
    add('whitespace body', ' \n\t ', { codes: ['invalid_json'] })
    add(
      'duplicate keys, last one bad',
      JSON.stringify(base)
        .replace(/^\{/, `{"${Object.keys(base)[0] ?? 'a'}": [[]], `)
        .replace(/\}$/, `, "${Object.keys(base)[0] ?? 'a'}": {"deep": [1]}}`),
    )
    add('deeply nested', `{"${Object.keys(schema.properties ?? { a: 1 })[0]}": ${'['.repeat(30_000)}${']'.repeat(30_000)}}`)
    add('over the limit', JSON.stringify({ ...base, padding: LONG }))
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'application/json-patch+json',
      'text/json',
      'application/xml',
      '*/*',
    ]) {
      cases.push({
        label: `content-type ${type}`,
        method: o.method,
        path,
        token,
        body: JSON.stringify(base),
        headers: { 'content-type': type },
        expect: [415],
        codes: ['unsupported_media_type'],
      })
    }
    cases.push({ label: 'no content-type', method: o.method, path, token, body: JSON.stringify(base), expect: [415] })
    const auth = token ? [['Authorization', `Bearer ${token}`] as [string, string]] : []
    cases.push({
      label: 'invalid UTF-8',
      method: o.method,
      path,
      raw: wire(
        o.method,
        path,
        [...auth, ['Content-Type', 'application/json']],
        Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0xff, 0x22, 0x7d]),
      ),
      expect: [400],
      codes: ['invalid_json'],
    })
    cases.push({
      label: 'chunked over the limit',
      method: o.method,
      path,
      raw: wire(
        o.method,
        path,
        [...auth, ['Content-Type', 'application/json'], ['Transfer-Encoding', 'chunked']],
        `${(70_000).toString(16)}\r\n${'{'.padEnd(70_000, ' ')}\r\n0\r\n\r\n`,
      ),
      expect: [413],
    })
    cases.push({
      label: 'declared length over the limit',
      method: o.method,
      path,
      raw: wire(o.method, path, [...auth, ['Content-Type', 'application/json'], ['Content-Length', '1000000000']], '{}'),
      expect: [413],
    })
    cases.push({
      label: 'empty chunked body',
      method: o.method,
      path,
      raw: wire(o.method, path, [...auth, ['Content-Type', 'application/json'], ['Transfer-Encoding', 'chunked']], '0\r\n\r\n'),
      expect: [400],
    })
    if (o.method === 'POST' && token) {
      for (const key of ['', 'x'.repeat(256), 'has space', 'tab\there', 'ключ'.normalize(), '\u00e9t\u00e9']) {
        const bytes = utf8Bytes(key)
        cases.push({
          label: `Idempotency-Key ${JSON.stringify(key).slice(0, 20)}`,
          method: o.method,
          path,
          raw: wire(o.method, path, [...auth, ['Content-Type', 'application/json'], ['Idempotency-Key', bytes]], JSON.stringify(base)),
          expect: [400],
        })
      }
    }
  }
  // Semantic refusals of otherwise well-formed bodies.
  cases.push({
    label: 'expires_at in the past',
    method: 'POST',
    path: '/api/v1/auth/api-tokens',
    token: acme.jwt,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'old', scopes: ['signals:read'], expires_at: '2001-01-01T00:00:00Z' }),
    expect: [400],
  })
  cases.push({
    label: 'unknown model',
    method: 'PUT',
    path: '/api/v1/workspace/models',
    token: acme.jwt,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model_ids: ['no-such-model'] }),
    expect: [400, 404],
  })
  cases.push({
    label: 'over the plan',
    method: 'PUT',
    path: '/api/v1/workspace/models',
    token: globex.jwt,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model_ids: ['trend-follower', 'mean-reversion'] }),
    expect: [409],
    codes: ['plan_limit_exceeded'],
  })
  cases.push({
    label: 'empty patch',
    method: 'PATCH',
    path: '/api/v1/risk/profile',
    token: acme.jwt,
    headers: { 'content-type': 'application/json' },
    body: '{}',
    expect: [400],
  })
  for (const email of ["' OR 1=1 --@x", 'owner@acme.test\u0000', 'OWNER@ACME.TEST ', 'a@b; DROP TABLE users']) {
    cases.push({
      label: `login as ${JSON.stringify(email)}`,
      method: 'POST',
      path: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: "' OR ''='" }),
      expect: [400, 401],
    })
  }
  assert.ok(cases.length >= 250, `${cases.length} body cases`)
  await runAll(cases)
})

test('credentials: every malformed, forged, revoked or expired Authorization is 401', async () => {
  const shapes = badAuthorizations()
  const cases: Case[] = []
  for (const o of ops.filter((o) => !(Array.isArray(o.op.security) && o.op.security.length === 0))) {
    const path = fill(o.path, FAKE_ID)
    const body = o.op.requestBody
      ? JSON.stringify(KNOWN_BODIES[`${o.method} ${o.path}`] ?? example(o.op.requestBody.content['application/json'].schema))
      : undefined
    const headers: Record<string, string> = body ? { 'content-type': 'application/json' } : {}
    cases.push({ label: 'no credential', method: o.method, path, headers, body, expect: [401], codes: ['unauthenticated'] })
    for (const [label, value] of pickSome(shapes, 10)) {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the range is "anything outside ASCII"
      const latin1 = /[^\x00-\x7f]/.test(value)
      if (latin1)
        cases.push({ label, method: o.method, path, raw: wire(o.method, path, [['Authorization', value], ...Object.entries(headers)], body), expect: [401] })
      else cases.push({ label, method: o.method, path, token: `=${value}`, headers, body, expect: [401], codes: ['unauthenticated'] })
    }
  }
  for (const [label, value] of shapes) {
    cases.push({
      label: `${label} (raw)`,
      method: 'GET',
      path: '/api/v1/workspace',
      raw: wire('GET', '/api/v1/workspace', [['Authorization', utf8Bytes(value)]]),
      expect: [401],
    })
  }
  cases.push({
    label: 'utf-8 bytes in the key',
    method: 'GET',
    path: '/api/v1/workspace',
    raw: wire('GET', '/api/v1/workspace', [['Authorization', utf8Bytes('Bearer sk_live_ключ🚀')]]),
    expect: [401],
  })
  await runAll(cases)
})

test('permissions: wrong scope, viewer role, API key on session routes, other tenant ids', async () => {
  const json = { 'content-type': 'application/json' }
  const cases: Case[] = [
    {
      label: 'viewer changes risk',
      method: 'PATCH',
      path: '/api/v1/risk/profile',
      token: viewerJwt,
      headers: json,
      body: '{"max_open_trades": 9}',
      expect: [403],
      codes: ['forbidden_role'],
    },
    {
      label: 'viewer with an owner role claim',
      method: 'PATCH',
      path: '/api/v1/risk/profile',
      token: jwt(
        { alg: 'HS256', typ: 'JWT' },
        sessionPayload({ sub: JSON.parse(Buffer.from(viewerJwt.split('.')[1], 'base64url').toString()).sub, role: 'owner' }),
      ),
      headers: json,
      body: '{"max_open_trades": 9}',
      expect: [403],
      codes: ['forbidden_role'],
    },
    { label: 'viewer sets models', method: 'PUT', path: '/api/v1/workspace/models', token: viewerJwt, headers: json, body: '{"model_ids": []}', expect: [403] },
    {
      label: 'viewer creates a key',
      method: 'POST',
      path: '/api/v1/auth/api-tokens',
      token: viewerJwt,
      headers: json,
      body: '{"name": "v", "scopes": ["risk:admin"]}',
      expect: [403],
    },
    {
      label: 'signals key changes risk',
      method: 'PATCH',
      path: '/api/v1/risk/profile',
      token: keys.signals,
      headers: json,
      body: '{"max_open_trades": 9}',
      expect: [403],
      codes: ['insufficient_scope'],
    },
    {
      label: 'all-scope key sets models',
      method: 'PUT',
      path: '/api/v1/workspace/models',
      token: keys.all,
      headers: json,
      body: '{"model_ids": []}',
      expect: [403],
      codes: ['session_required'],
    },
    {
      label: 'all-scope key creates a key',
      method: 'POST',
      path: '/api/v1/auth/api-tokens',
      token: keys.all,
      headers: json,
      body: '{"name": "k", "scopes": ["risk:admin"]}',
      expect: [403],
      codes: ['session_required'],
    },
    {
      label: 'all-scope key revokes a key',
      method: 'DELETE',
      path: `/api/v1/auth/api-tokens/${globexTokenId}`,
      token: keys.all,
      expect: [403],
      codes: ['session_required'],
    },
    {
      label: "other tenant's key id",
      method: 'DELETE',
      path: `/api/v1/auth/api-tokens/${globexTokenId}`,
      token: acme.jwt,
      expect: [404],
      codes: ['not_found'],
    },
    {
      label: "other tenant's key id, lower case",
      method: 'DELETE',
      path: `/api/v1/auth/api-tokens/${globexTokenId.toLowerCase()}`,
      token: acme.jwt,
      expect: [404],
    },
    { label: 'viewer revokes', method: 'DELETE', path: `/api/v1/auth/api-tokens/${globexTokenId}`, token: viewerJwt, expect: [403, 404] },
    { label: 'inactive model filter', method: 'GET', path: '/api/v1/signals?model_id=breakout-momentum', token: keys.all, expect: [404] },
  ]
  for (const id of [
    'tok_',
    'tok_01M8',
    `${globexTokenId}0`,
    `${globexTokenId} `,
    "tok_' OR 1=1 --",
    'tok_%F0%9F%9A%80',
    '%00',
    'tok_01M80000000000000000000000%00',
    '..%2F..%2Fhealth',
    '*',
    '%2A',
    '-1',
    '0',
    'null',
    'undefined',
    'a'.repeat(4000),
  ]) {
    cases.push({
      label: `token id ${id.slice(0, 30)}`,
      method: 'DELETE',
      path: `/api/v1/auth/api-tokens/${id.replace(/ /g, '%20').replace(/'/g, '%27')}`,
      token: acme.jwt,
      expect: [404],
    })
  }
  await runAll(cases)
})

test('queries: bad limits and cursors, bad filters, unknown and repeated parameters', async () => {
  const cases: Case[] = []
  const LIMITS = [
    '0',
    '-1',
    '1001',
    '1e309',
    '18446744073709551616',
    '1.5',
    'abc',
    '',
    '0x10',
    ' 5',
    '+5',
    '５',
    'NaN',
    'Infinity',
    '-0',
    '1e3',
    "1' OR 1=1 --",
    '10%00',
  ]
  const CURSORS = [
    'not-a-cursor',
    '%ZZ',
    "' OR 1=1 --",
    Buffer.from("sig_' OR 1=1 --").toString('base64url'),
    Buffer.from('~').toString('base64url'),
    'x'.repeat(201),
    '🚀',
    '\u0000',
    Buffer.from('sig_01M8000000000000000000000').toString('base64url'),
    '====',
    Buffer.from('SIG_01M80000000000000000000000').toString('base64url'),
  ]
  // Percent-encodes the UTF-8 bytes (lone surrogates become U+FFFD), except a deliberate bad escape.
  const enc = (v: string) =>
    v === '%ZZ'
      ? v
      : [...Buffer.from(v, 'utf8')]
          .map((b) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`))
          .join('')
  for (const o of ops) {
    const path = fill(o.path, FAKE_ID)
    const token = tokenFor(o)
    const params = (o.op.parameters ?? []).filter((p: any) => p.in === 'query')
    const body = o.op.requestBody
      ? JSON.stringify(KNOWN_BODIES[`${o.method} ${o.path}`] ?? example(o.op.requestBody.content['application/json'].schema))
      : undefined
    const headers: Record<string, string> | undefined = body ? { 'content-type': 'application/json' } : undefined
    const add = (label: string, query: string, expect: number[] = [400, 404], codes?: string[]) =>
      cases.push({ label, method: o.method, path: `${path}?${query}`, token, body, headers, expect, codes })
    for (const name of pickSome(
      ['colour', '__proto__', 'constructor', 'toString', 'a[b]', 'LIMIT', 'limit ', '%00', '🚀', "' OR 1=1 --", 'x'.repeat(1000)],
      4,
    )) {
      add(`unknown parameter ${name.slice(0, 20)}`, `${enc(name)}=1`, [400], ['unknown_field'])
    }
    for (const p of params) {
      const schema = p.schema
      const values =
        p.name === 'limit'
          ? pickSome(LIMITS, 10)
          : p.name === 'cursor'
            ? CURSORS
            : badValues(schema)
                .map((b) => (typeof b.value === 'string' ? b.value : (b.text ?? JSON.stringify(b.value))))
                .filter((v) =>
                  schema.type === 'string' && !schema.enum && !schema.pattern && schema.maxLength ? true : !requestAjv.validate(schema, asQueried(schema, v)),
                )
      for (const v of values) add(`${p.name}=${v.slice(0, 30)}`, `${p.name}=${enc(v)}`)
      add(`${p.name} twice`, `${p.name}=1&${p.name}=2`, [400])
      add(`${p.name} as array`, `${p.name}[]=1`, [400])
    }
  }
  assert.ok(cases.length >= 100, `${cases.length} query cases`)
  await runAll(cases)
})

test('paths and targets: traversal, double slashes, bad percent encodings, NUL, overlong ids, absolute form', async () => {
  const targets: [string, number[] | undefined][] = [
    ['/api/v1/../../etc/passwd', [404]],
    ['/api/v1/%2e%2e/%2e%2e/etc/passwd', [404]],
    ['/api/v1/models/..%2f..%2f..%2fetc%2fpasswd', [404]],
    ['//api/v1/models', [404]],
    ['/api/v1//models', [404]],
    ['/api//v1/models', [404]],
    ['/api/v1/models%00', [404]],
    ['/api/v1/models/%00', [404]],
    ['/api/v1/auth/api-tokens/%ZZ', [404, 405]],
    ['/api/v1/auth/api-tokens/%', [404, 405]],
    ['/api/v1/auth/api-tokens/%00', [404, 405]],
    ['/api/v1/auth/api-tokens/%ED%A0%80', [404, 405]],
    ['/api/v1/auth/api-tokens/%C0%AE%C0%AE', [404, 405]],
    [`/api/v1/auth/api-tokens/${'A'.repeat(8000)}`, [404, 405]],
    [`/api/v1/auth/api-tokens/${'%41'.repeat(2000)}`, [404, 405]],
    ['/api/v1/auth/api-tokens/tok_01M80000000000000000000000/extra', [404]],
    ['http://localhost/api/v1/health', undefined],
    ['http://evil.example/api/v1/models', undefined],
    ['*', [404]],
    ['api/v1/health', [400, 404]],
    ['/api/v1/health#frag', undefined],
    ['/API/V1/HEALTH', [404]],
    ['/api/v1/health;jsessionid=1', [404]],
    ['/api/v1\\health', undefined],
    ['/%61pi/v1/health', undefined],
    ['/api/v1/health?%ZZ=1', [400]],
    ['/api/v1/health?x=%00', [400]],
    ['/.env', [404]],
    ['/.git/config', [404]],
    ['/api/v1/signals?limit=%FF%FE', [400]],
    ['/api/v1/signals?%ZZ', [400]],
    [`/api/v1/${'a/'.repeat(2000)}`, [404]],
    ['/api/v2/health', [404]],
    ['/api/v1/risk/incidents/verify/../export', undefined],
    ['/api/v1/workspace/models/', undefined],
    [`/api/v1/${utf8Bytes('héalth')}`, [400, 404]],
    [`/api/v1/signals?pair=${utf8Bytes('BTC/USDT🚀')}`, [400]],
    ['/api/v1/signals?pair=BTC%2FUSDT%27%20OR%201%3D1%20--', [400]],
  ]
  const cases: Case[] = []
  for (const [target, expect] of targets) {
    for (const method of ['GET', 'DELETE', 'POST', 'HEAD']) {
      const body = method === 'POST' ? '{}' : undefined
      const headers: [string, string][] = [['Authorization', `Bearer ${acme.jwt}`], ...(body ? [['Content-Type', 'application/json'] as [string, string]] : [])]
      // A method the route lacks is 405 before anything else looks at the target's meaning.
      cases.push({
        label: `target ${target.slice(0, 60)}`,
        method,
        path: target,
        raw: wire(method, target, headers, body),
        expect: expect && (method === 'GET' ? expect : [...expect, 400, 405]),
      })
    }
  }
  cases.push({
    label: 'request line over the header limit',
    method: 'GET',
    path: '/api/v1/auth/api-tokens/AAAA...',
    raw: wire('GET', `/api/v1/auth/api-tokens/${'A'.repeat(20_000)}`),
    expect: [400, 404, 414, 431].filter((s) => s < 500),
  })
  await runAll(cases)
})

test('headers and framing: broken HTTP, odd methods, content-type and length tricks, request ids', async () => {
  const auth: [string, string] = ['Authorization', `Bearer ${acme.jwt}`]
  const json: [string, string] = ['Content-Type', 'application/json']
  const patch = '/api/v1/risk/profile'
  const raw = (label: string, bytes: Buffer | string, expect?: number[], extra: Partial<Case> = {}): Case => ({
    label,
    method: 'RAW',
    path: label,
    raw: Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'latin1'),
    expect,
    ...extra,
  })
  const cases: Case[] = [
    raw('Content-Length not a number', wire('PATCH', patch, [auth, json, ['Content-Length', 'abc']], '{}'), [400]),
    raw('two different Content-Lengths', wire('PATCH', patch, [auth, json, ['Content-Length', '2'], ['Content-Length', '3']], '{}'), [400]),
    raw(
      'Content-Length and chunked',
      wire('PATCH', patch, [auth, json, ['Content-Length', '2'], ['Transfer-Encoding', 'chunked']], '2\r\n{}\r\n0\r\n\r\n'),
      [400],
    ),
    raw('Transfer-Encoding gzip', wire('PATCH', patch, [auth, json, ['Transfer-Encoding', 'gzip']], '{}'), [400, 415]),
    raw('bad chunk size', wire('PATCH', patch, [auth, json, ['Transfer-Encoding', 'chunked']], 'zz\r\n{}\r\n0\r\n\r\n'), [400], { mayClose: true }),
    raw('negative Content-Length', wire('PATCH', patch, [auth, json, ['Content-Length', '-1']], '{}'), [400]),
    raw('huge Content-Length', wire('PATCH', patch, [auth, json, ['Content-Length', '99999999999999999999999']], '{}'), [400, 413]),
    raw('obs-fold header', `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Long: a\r\n  b\r\nConnection: close\r\n\r\n`, [200, 400]),
    raw('NUL in a header', `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\nConnection: close\r\n\r\n`, [400]),
    raw('space in a header name', `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\nConnection: close\r\n\r\n`, [400]),
    raw('header without colon', `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nnocolon\r\nConnection: close\r\n\r\n`, [400]),
    raw(
      '20 KB header',
      wire('GET', '/api/v1/health', [['X-Big', 'b'.repeat(20_000)]]),
      [400, 431].filter((s) => s < 500),
    ),
    raw('bare LF line endings', `GET /api/v1/health HTTP/1.1\nHost: x\nConnection: close\n\n`, [200, 400]),
    raw('no Host on HTTP/1.1', wire('GET', '/api/v1/health', [], undefined, { host: false }), [400]),
    raw('HTTP/1.0 without Host', wire('GET', '/api/v1/health', [], undefined, { host: false, version: 'HTTP/1.0' }), [200]),
    raw('HTTP/2.0 request line', wire('GET', '/api/v1/health', [], undefined, { version: 'HTTP/2.0' }), [200, 400]),
    raw('HTTP/9.9 request line', wire('GET', '/api/v1/health', [], undefined, { version: 'HTTP/9.9' }), [400]),
    raw('unknown method', wire('FOO', '/api/v1/health'), [400, 405]),
    raw('lower-case method', wire('get', '/api/v1/health'), [400, 405]),
    raw('method with NUL', Buffer.from('GE\u0000T /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'), [400]),
    raw('garbage', Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a]), [400], { mayClose: true }),
    raw('empty request line', '\r\n\r\nGET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', [200, 400]),
    raw('duplicate Authorization, good first', wire('GET', '/api/v1/workspace', [auth, ['Authorization', 'Bearer nope']]), [200, 400, 401]),
    raw('duplicate Authorization, bad first', wire('GET', '/api/v1/workspace', [['Authorization', 'Bearer nope'], auth]), [400, 401]),
    raw('duplicate Content-Type', wire('PATCH', patch, [auth, ['Content-Type', 'text/plain'], json], '{"max_open_trades": "x"}'), [400, 415]),
    raw(
      'Idempotency-Key twice',
      wire('POST', '/api/v1/auth/api-tokens', [auth, json, ['Idempotency-Key', 'a'], ['Idempotency-Key', 'b']], '{"name": "x", "scopes": ["nope"]}'),
      [400],
    ),
    raw('Expect: 100-continue', wire('PATCH', patch, [auth, json, ['Expect', '100-continue']], '{"max_open_trades": 0}'), [400]),
    raw('Expect: something else', wire('PATCH', patch, [auth, json, ['Expect', 'teapot']], '{"max_open_trades": 0}'), [400]),
    raw('body on GET', wire('GET', '/api/v1/models', [auth, json], '{"broken": '), [200]),
    raw('OPTIONS *', wire('OPTIONS', '*'), [404, 405]),
    raw('CONNECT-less TRACE', wire('TRACE', '/api/v1/health'), [405]),
    raw('PROPFIND', wire('PROPFIND', '/api/v1/workspace', [auth]), [400, 405]),
    raw('OPTIONS on a route', wire('OPTIONS', '/api/v1/signals', [auth]), [405]),
  ]
  for (const id of ['', 'x'.repeat(200), '🚀', 'a b', '<script>', '../../etc', '\u0000'.replace('\u0000', '%00')]) {
    cases.push({
      label: `X-Request-Id ${JSON.stringify(id).slice(0, 20)}`,
      method: 'GET',
      path: '/api/v1/health',
      raw: wire('GET', '/api/v1/health', [['X-Request-Id', utf8Bytes(id)]]),
      expect: [200],
    })
  }
  for (const type of [
    'application/json; charset=utf-16',
    'application/json;;',
    'APPLICATION/JSON ; charset=UTF-8',
    'application/json\u00e9',
    ' application/json',
    'application/ json',
  ]) {
    cases.push(raw(`content-type ${JSON.stringify(type)}`, wire('PATCH', patch, [auth, ['Content-Type', type]], '{"max_open_trades": -5}'), [400, 415]))
  }
  await runAll(cases)
  // Request ids that are not safe to echo are replaced.
  const odd = await rawExchange(port, wire('GET', '/api/v1/health', [['X-Request-Id', '<script>']]))
  assert.match(odd.headers.get('x-request-id') ?? '', /^req_/)
})

test('a client that stops half way through a body leaves the server unharmed', async () => {
  for (let i = 0; i < 5; i++) {
    const head = wire(
      'PATCH',
      '/api/v1/risk/profile',
      [
        ['Authorization', `Bearer ${acme.jwt}`],
        ['Content-Type', 'application/json'],
        ['Content-Length', '100'],
      ],
      '{"max_open_trades": 9',
    )
    const a = await rawExchange(port, head, { closeAfterMs: 150 })
    assert.is(a.status, 0, 'no answer before the body is complete')
  }
  const res = await api('GET', '/api/v1/health')
  assert.is(res.status, 200)
})

test('afterwards: alive, healthy, nothing changed, nothing logged as an error', async () => {
  assert.ok(sent >= 500, `${sent} malformed requests sent`)
  assert.is(server.process.exitCode, null, 'server still running')
  const health = await api('GET', '/api/v1/health')
  assert.is(health.status, 200)
  assert.is(health.json.status, 'HEALTHY')
  assert.equal(await tenantState(), before)
  assert.is((await api('GET', '/api/v1/signals', { token: keys.globex })).status, 200, "the other tenant's key still works")
  assert.is((await api('GET', '/api/v1/risk/incidents/verify', { token: acme.jwt })).json.valid, true)
  const errors = server
    .output()
    .split('\n')
    .filter((line) => /"level":"error"/.test(line))
  assert.equal(errors, [], 'no unhandled error in the server log')
})

test.run()
