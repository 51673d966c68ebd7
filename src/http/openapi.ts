// The OpenAPI 3.1 document, built from the same route entries the server runs, so the document
// and the server cannot disagree on paths, methods, parameters or schemas.
import { defineRoute, Raw, routes, type RouteSpec } from './route.ts'
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
    type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string', minLength: 1 },
    code: { type: 'string', enum: Object.keys(ERROR_CODES) }, request_id: { type: 'string' },
    errors: { type: 'array', items: { type: 'object', required: ['field', 'message'], additionalProperties: false, properties: { field: { type: 'string' }, message: { type: 'string' } } } },
  },
}

function operation(spec: RouteSpec): Record<string, unknown> {
  const parameters: unknown[] = []
  for (const match of spec.path.matchAll(/:(\w+)/g)) parameters.push({ name: match[1], in: 'path', required: true, schema: { type: 'string' } })
  for (const [name, schema] of Object.entries(spec.query ?? {})) parameters.push({ name, in: 'query', required: false, schema: toJsonSchema(schema) })
  if (spec.method === 'POST' && spec.access !== 'public') {
    parameters.push({ name: 'Idempotency-Key', in: 'header', required: false, description: 'same key and body within 24 h replays the first answer; another body is 409', schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' } })
  }
  const errors: Record<string, unknown> = {}
  const statuses = new Set([400, 404, 500])
  if (spec.access !== 'public') [401, 403, 429].forEach((s) => statuses.add(s))
  if (spec.body) [413, 415].forEach((s) => statuses.add(s))
  const problem = { description: 'problem details (RFC 9457)', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } }
  for (const status of [...statuses].sort()) errors[status] = problem
  // Route-specific refusals (409 plan_limit_exceeded, 422 risk_limit_exceeded, ...) share the shape.
  errors.default = problem
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
    responses: { 200: ok, ...errors },
  }
}

export function openApiDocument(): Record<string, unknown> {
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
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key (sk_live_...), a session JWT from POST /api/v1/auth/login, or, when serve runs with --oidc-issuer, an RS256/ES256 access token of that OpenID Connect provider' } },
    },
  }
}

let cached: string | undefined
defineRoute({
  method: 'GET',
  path: '/api/v1/openapi.json',
  summary: 'This OpenAPI 3.1 document',
  tag: 'system',
  access: 'public',
  response: { type: 'object', properties: {}, additionalProperties: true },
  handler: () => {
    cached ??= JSON.stringify(openApiDocument())
    return new Raw(200, 'application/json; charset=utf-8', cached)
  },
})
