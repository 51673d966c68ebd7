// The OpenAPI 3.1 document, built from the same route entries the server runs, so the document
// and the server cannot disagree on paths, methods, parameters or schemas.
import { defineRoute, Raw, type RouteSpec } from './route.ts'
import type { ErrorCode } from '../shared/errors.ts'
import { ERROR_CODES } from './errors.ts'
import type { Schema } from './schema.ts'
import { VERSION } from '../version.ts'

/** JSON Schema 2020-12 as OpenAPI 3.1 wants it: `nullable` becomes a type union. */
function toJsonSchema(schema: Schema): Record<string, unknown> {
  const { nullable, ...rest } = schema as Schema & { nullable?: boolean }
  const out: Record<string, unknown> = { ...rest }
  if (schema.type === 'array') out.items = toJsonSchema(schema.items)
  if (schema.type === 'object') {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, toJsonSchema(v)]))
    if (typeof schema.additionalProperties === 'object') out.additionalProperties = toJsonSchema(schema.additionalProperties)
  }
  if (nullable) out.type = [schema.type, 'null']
  if (nullable && 'enum' in out && Array.isArray(out.enum)) out.enum = [...out.enum, null]
  return out
}

const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code', 'request_id'],
  additionalProperties: false,
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string', minLength: 1 },
    code: { type: 'string', enum: Object.keys(ERROR_CODES) },
    request_id: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'message'],
        additionalProperties: false,
        properties: { field: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
}

/**
 * Every problem code an operation can answer: what the pipeline answers for a route of this kind
 * (src/http/server.ts, src/auth/guard.ts, src/http/body.ts, src/http/idempotency.ts) and the
 * route's own `errors`. 405 is left out on purpose: it answers a method a path has no operation
 * for, so no operation can answer it; the Allow header names the methods the path does have.
 */
function problemCodes(spec: RouteSpec): Set<ErrorCode> {
  // Any request can lack its Host header or carry an unknown query parameter, and meet a bug.
  const codes = new Set<ErrorCode>(['validation_failed', 'unknown_field', 'internal'])
  // A path parameter that is not valid percent-encoding names no resource.
  if (spec.path.includes('/:')) codes.add('not_found')
  // A body is read for every operation but a GET: one that takes none still refuses any other than {}.
  if (spec.body || spec.method !== 'GET') for (const code of ['invalid_json', 'payload_too_large', 'unsupported_media_type'] as const) codes.add(code)
  if (spec.access !== 'public') {
    // service_unavailable: a token of the OIDC provider whose signing keys cannot be fetched.
    for (const code of ['unauthenticated', 'rate_limited', 'service_unavailable'] as const) codes.add(code)
    // API keys are refused before their scopes are looked at; a viewer's session where `write` says so.
    if (spec.access.sessionOnly) codes.add('session_required')
    else if (spec.access.scopes?.length) codes.add('insufficient_scope')
    if (spec.access.write) codes.add('forbidden_role')
    if (spec.method === 'POST') codes.add('idempotency_conflict')
  }
  // A change runs in a write transaction (with Idempotency-Key, so does any authenticated POST),
  // which gives up when another process keeps the lock (src/store/sqlite/engine.ts).
  const idempotent = spec.method === 'POST' && spec.access !== 'public'
  if ((spec.method !== 'GET' && spec.transaction !== false) || idempotent) codes.add('database_busy')
  // On PostgreSQL (SPEC 15) any route that reads or writes may find the database gone: within 5 s.
  codes.add('database_unavailable')
  for (const entry of spec.errors ?? []) if (typeof entry === 'string') codes.add(entry)
  return codes
}

const RETRY_AFTER = { 'Retry-After': { required: true, description: 'seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } } }
const CHALLENGE = { 'WWW-Authenticate': { required: true, description: 'Bearer realm="bulwark", or the scope an API key lacks', schema: { type: 'string' } } }

/** One response per error status, its description naming the codes it carries, its schema only them. */
function errorResponses(spec: RouteSpec): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>()
  // In the closed list's order, so that descriptions read the same in every operation.
  const codes = problemCodes(spec)
  for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
    if (codes.has(code)) byStatus.set(ERROR_CODES[code][0], [...(byStatus.get(ERROR_CODES[code][0]) ?? []), code])
  }
  const own = (spec.errors ?? []).filter((entry) => typeof entry !== 'string')
  const statuses = [...new Set([...byStatus.keys(), ...own.map((o) => o.status)])].sort((a, b) => a - b)
  const responses: Record<string, unknown> = {}
  for (const status of statuses) {
    const problems = byStatus.get(status)
    const mine = own.filter((o) => o.status === status)
    const content: Record<string, unknown> = {}
    if (problems) {
      const schema = { allOf: [{ $ref: '#/components/schemas/Problem' }, { properties: { status: { const: status }, code: { enum: problems } } }] }
      content['application/problem+json'] = { schema }
    }
    if (mine.length && spec.response) content['application/json'] = { schema: toJsonSchema(spec.response) }
    const headers = status === 401 ? CHALLENGE : (status === 429 || status === 503) && !mine.length ? RETRY_AFTER : undefined
    responses[status] = {
      description: [...(problems ? [problems.join(', ')] : []), ...mine.map((o) => o.description)].join('; '),
      ...(headers ? { headers } : {}),
      content,
    }
  }
  return responses
}

function operation(spec: RouteSpec): Record<string, unknown> {
  const parameters: unknown[] = []
  for (const match of spec.path.matchAll(/:(\w+)/g)) parameters.push({ name: match[1], in: 'path', required: true, schema: { type: 'string' } })
  for (const [name, schema] of Object.entries(spec.query ?? {})) parameters.push({ name, in: 'query', required: false, schema: toJsonSchema(schema) })
  if (spec.method === 'POST' && spec.access !== 'public') {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'same key and body within 24 h replays the first answer; another body is 409',
      schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
    })
  }
  const ok = spec.response
    ? { description: 'OK', content: { 'application/json': { schema: toJsonSchema(spec.response) } } }
    : { description: 'OK', content: { [spec.contentType ?? 'text/plain']: {} } }
  return {
    summary: spec.summary,
    tags: [spec.tag],
    operationId: `${spec.method.toLowerCase()}${spec.path.replace(/[/:]+(\w)/g, (_, c: string) => c.toUpperCase()).replace(/[^A-Za-z0-9]/g, '')}`,
    security: spec.access === 'public' ? [] : [{ bearer: [] }],
    ...(spec.access !== 'public' && typeof spec.access === 'object' && spec.access.scopes ? { 'x-scopes': spec.access.scopes } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(spec.body ? { requestBody: { required: true, content: { 'application/json': { schema: toJsonSchema(spec.body) } } } } : {}),
    responses: { 200: ok, ...errorResponses(spec) },
  }
}

function openApiDocument(routes: RouteSpec[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const spec of routes) {
    if (spec.hidden) continue
    const path = spec.path.replace(/:(\w+)/g, '{$1}')
    paths[path] ??= {}
    paths[path][spec.method.toLowerCase()] = operation(spec)
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Bulwark API', version: VERSION, description: 'Signals, trades and risk control for one self-hosted tenant fleet.' },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: { Problem: problemSchema },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key (sk_live_...), a session JWT from POST /api/v1/auth/login, or, when serve runs with --oidc-issuer, an RS256/ES256 access token of that OpenID Connect provider',
        },
      },
    },
  }
}

/** GET /api/v1/openapi.json, describing `routes` (the app's whole list, this route included). */
export function openApiRoute(routes: () => RouteSpec[]): RouteSpec {
  let cached: string | undefined
  return defineRoute({
    method: 'GET',
    path: '/api/v1/openapi.json',
    summary: 'This OpenAPI 3.1 document',
    tag: 'system',
    access: 'public',
    response: { type: 'object', properties: {}, additionalProperties: true },
    handler: () => {
      cached ??= JSON.stringify(openApiDocument(routes()))
      return new Raw(200, 'application/json; charset=utf-8', cached)
    },
  })
}
