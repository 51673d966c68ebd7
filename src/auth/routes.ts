import { defineRoute, type RouteSpec } from '../http/route.ts'
import { DomainError, notFound, validationError } from '../shared/errors.ts'
import { listPage, pageQuery } from '../http/pagination.ts'
import { parseDateTime } from '../shared/dates.ts'
import { isId } from '../store/ids.ts'
import { decodeJwt } from 'jose'
import { findTenantById } from '../tenants/tenants.ts'
import { ROLES, findUserWithHash, type Role } from '../tenants/users.ts'
import { apiKeyFields, apiKeySchema, createApiKey, listApiKeys, revokeApiKey, type ApiKey, type ApiKeyRecord } from './api-keys.ts'
import { dummyHash, verifyPassword } from './passwords.ts'
import { SCOPES } from './scopes.ts'
import { SESSION_SECONDS, type Sessions } from './sessions.ts'

/** POST /auth/login, issuing sessions of this data dir. */
function postAuthLogin(sessions: Sessions): RouteSpec {
  return defineRoute({
    method: 'POST',
    path: '/api/v1/auth/login',
    summary: 'Exchanges e-mail and password for a one-hour session JWT',
    tag: 'auth',
    access: 'public',
    errors: ['unauthenticated', 'rate_limited'], // rate_limited: the pipeline limits login attempts (src/http/server.ts)
    body: {
      type: 'object',
      required: ['email', 'password'],
      additionalProperties: false,
      properties: { email: { type: 'string', maxLength: 320, format: 'email' }, password: { type: 'string', minLength: 1, maxLength: 1024 } },
    },
    response: {
      type: 'object',
      required: ['access_token', 'token_type', 'expires_in'],
      additionalProperties: false,
      properties: { access_token: { type: 'string' }, token_type: { type: 'string', enum: ['Bearer'] }, expires_in: { type: 'integer' } },
    },
    transaction: false,
    handler: async (ctx) => {
      const user = await findUserWithHash(ctx.db, ctx.body.email.toLowerCase())
      const ok = await verifyPassword(ctx.body.password, user?.password_hash ?? (await dummyHash()))
      if (!user || !ok) throw new DomainError('unauthenticated', 'e-mail or password is wrong')
      const accessToken = await sessions.issue({ sub: user.id, tid: user.tenant_id, role: user.role, email: user.email })
      return { access_token: accessToken, token_type: 'Bearer' as const, expires_in: SESSION_SECONDS }
    },
  })
}

function publicRecord(record: ApiKeyRecord): ApiKey {
  const { tenant_id: _t, created_by: _c, ...rest } = record
  return rest
}

const tokenAccess = { sessionOnly: true, write: true } as const

const postAuthApiTokens = defineRoute({
  method: 'POST',
  path: '/api/v1/auth/api-tokens',
  summary: 'Creates a scoped API key; the full key is in this response only',
  tag: 'auth',
  access: tokenAccess,
  errors: ['validation_failed'],
  body: {
    type: 'object',
    required: ['name', 'scopes'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100 },
      scopes: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: SCOPES } },
      expires_at: { type: 'string', format: 'date-time', nullable: true },
    },
  },
  response: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'name', 'token', 'prefix', 'scopes', 'created_at', 'expires_at'],
    properties: { ...apiKeyFields, token: { type: 'string', description: 'sk_live_...; shown here and in an idempotent replay within 24 h, never again' } },
  },
  sealOnReplay: true,
  handler: async (ctx) => {
    const expiresAt = ctx.body.expires_at ? parseDateTime(ctx.body.expires_at) : null
    if (expiresAt && !expiresAt.ok) throw validationError('expires_at', expiresAt.reason)
    if (expiresAt && expiresAt.ms <= ctx.now.getTime()) throw validationError('expires_at', `must be in the future; it is ${expiresAt.iso}`)
    const { record, token } = await createApiKey(ctx.tx, {
      tenantId: ctx.principal.tenantId,
      createdBy: ctx.principal.userId,
      name: ctx.body.name,
      scopes: ctx.body.scopes,
      expiresAt: expiresAt?.iso ?? null,
    })
    return {
      id: record.id,
      name: record.name,
      token,
      prefix: record.prefix,
      scopes: record.scopes,
      created_at: record.created_at,
      expires_at: record.expires_at,
    }
  },
})

const getAuthApiTokens = defineRoute({
  method: 'GET',
  path: '/api/v1/auth/api-tokens',
  summary: "The tenant's API keys (never the keys themselves), newest first",
  tag: 'auth',
  access: tokenAccess,
  errors: ['validation_failed'],
  query: pageQuery,
  response: { type: 'array', items: apiKeySchema },
  handler: async (ctx) => {
    return (await listPage(ctx, (before, limit) => listApiKeys(ctx.db, ctx.principal.tenantId, before, limit))).map(publicRecord)
  },
})

const deleteAuthApiTokensId = defineRoute({
  method: 'DELETE',
  path: '/api/v1/auth/api-tokens/:id',
  summary: 'Revokes an API key at once',
  tag: 'auth',
  access: tokenAccess,
  errors: ['not_found'],
  response: apiKeySchema,
  handler: async (ctx) => {
    const id = ctx.params.id
    const record = isId('tok', id) ? await revokeApiKey(ctx.tx, ctx.principal.tenantId, id, ctx.now) : undefined
    if (!record) throw notFound(`API token ${id.slice(0, 40)}`)
    return publicRecord(record)
  },
})

// What a client (the console) needs to know of its own session: the role is read from the database
// on every request (a changed role applies at once), so the token's role claim may be stale.
const getAuthSession = defineRoute({
  method: 'GET',
  path: '/api/v1/auth/session',
  summary: "The caller's session: e-mail, role (as it is now), tenant and when the token expires",
  tag: 'auth',
  access: { sessionOnly: true },
  response: {
    type: 'object',
    required: ['email', 'role', 'tenant_id', 'tenant_slug', 'expires_at'],
    additionalProperties: false,
    properties: {
      email: { type: 'string' },
      role: { type: 'string', enum: ROLES, description: 'viewer may only read; owner and admin may change' },
      tenant_id: { type: 'string' },
      tenant_slug: { type: 'string' },
      expires_at: { type: 'string', format: 'date-time', nullable: true, description: "the token's exp (null for a token without one)" },
    },
  },
  handler: async (ctx) => {
    // The guard has verified this token; only its expiry is read again here.
    const token = /^Bearer (.+)$/i.exec(ctx.req.headers.authorization ?? '')?.[1] ?? ''
    const exp = decodeJwt(token).exp
    return {
      email: ctx.principal.email,
      role: ctx.principal.role as Role,
      tenant_id: ctx.principal.tenantId,
      tenant_slug: (await findTenantById(ctx.db, ctx.principal.tenantId))?.slug ?? '',
      expires_at: exp === undefined ? null : new Date(exp * 1000).toISOString(),
    }
  },
})

/** This feature's routes, in the order the router tries them. */
export function authRoutes(sessions: Sessions): RouteSpec[] {
  return [postAuthLogin(sessions), getAuthSession, postAuthApiTokens, getAuthApiTokens, deleteAuthApiTokensId]
}
