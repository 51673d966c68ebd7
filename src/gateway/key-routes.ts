// The gateway's keys over the API (SPEC 14): POST, GET and DELETE /api/v1/gateway/keys. Like API
// keys (src/auth/routes.ts), a session of an owner or admin only (an API key is 403
// session_required, a viewer 403 forbidden_role), the key and secret answered once (sealed for an
// idempotent replay), revocation answered with the record and harmless twice.
import { defineRoute, type RouteSpec } from '../http/route.ts'
import { listPage, pageQuery } from '../http/pagination.ts'
import { notFound } from '../shared/errors.ts'
import { isId } from '../store/ids.ts'
import type { SecretBox } from '../store/secret-box.ts'
import { createdGatewayKeySchema, createGatewayKey, gatewayKeyName, gatewayKeySchema, listGatewayKeys, revokeGatewayKey } from './keys.ts'

const access = { sessionOnly: true, write: true } as const

/** This feature's routes; secrets are sealed in `secrets`. */
export function gatewayKeyRoutes(secrets: () => SecretBox): RouteSpec[] {
  const postGatewayKeys = defineRoute({
    method: 'POST',
    path: '/api/v1/gateway/keys',
    summary:
      "Creates a key for a bot behind the gateway (/gateway/binance): api_key and api_secret, shown in this response only; needs the tenant's Binance venue connected",
    tag: 'gateway',
    access,
    errors: ['validation_failed', 'venue_not_connected'],
    body: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: gatewayKeyName } },
    response: createdGatewayKeySchema,
    sealOnReplay: true,
    handler: (ctx) => createGatewayKey(ctx.tx, ctx.principal.tenantId, ctx.body.name, secrets(), ctx.now),
  })

  const getGatewayKeys = defineRoute({
    method: 'GET',
    path: '/api/v1/gateway/keys',
    summary: "The tenant's gateway keys, revoked ones too (never the keys or their secrets), newest first",
    tag: 'gateway',
    access,
    errors: ['validation_failed'],
    query: pageQuery,
    response: { type: 'array', items: gatewayKeySchema },
    handler: (ctx) => listPage(ctx, (before, limit) => listGatewayKeys(ctx.db, ctx.principal.tenantId, before, limit)),
  })

  const deleteGatewayKeysId = defineRoute({
    method: 'DELETE',
    path: '/api/v1/gateway/keys/:id',
    summary: 'Revokes a gateway key at once: the next request signed with it is refused (-2015)',
    tag: 'gateway',
    access,
    errors: ['not_found'],
    response: gatewayKeySchema,
    handler: async (ctx) => {
      const id = ctx.params.id
      const record = isId('gwk', id) ? await revokeGatewayKey(ctx.tx, ctx.principal.tenantId, id, ctx.now) : undefined
      if (!record) throw notFound(`gateway key ${id.slice(0, 40)}`)
      return record
    },
  })

  return [postGatewayKeys, getGatewayKeys, deleteGatewayKeysId]
}
