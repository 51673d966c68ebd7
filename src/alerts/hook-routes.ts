// The alert hooks' API (SPEC 16): POST, GET and DELETE /api/v1/alert-hooks, and what arrived at a
// hook. Hooks are made, listed and revoked like gateway keys (src/gateway/key-routes.ts): a session
// of an owner or admin only (an API key is 403 session_required, a viewer 403 forbidden_role), the
// secret answered once (sealed for an idempotent replay), revocation answered with the record and
// harmless twice. What arrived is read like webhook deliveries: an owner or admin session, or an API
// key with trades:read (an alert's outcome is an order or why there is none, which that scope reads
// in GET /orders). Every query is bound to the caller's tenant: another tenant's hook is 404.
import type { IncomingMessage } from 'node:http'
import type { Config } from '../config.ts'
import { listPage, pageQuery } from '../http/pagination.ts'
import { defineRoute, type RouteSpec } from '../http/route.ts'
import { findModel } from '../models/catalogue.ts'
import { cidrList } from '../shared/cidr.ts'
import { DomainError, notFound, validationError } from '../shared/errors.ts'
import { isId } from '../store/ids.ts'
import type { SecretBox } from '../store/secret-box.ts'
import type { Queries } from '../store/store.ts'
import { findTenantById } from '../tenants/tenants.ts'
import { findVenueAccount } from '../venues/accounts.ts'
import { alertSchema, createdHookSchema, hookSchema, newHookSchema } from './hook-schema.ts'
import { type AlertHook, createAlertHook, findAlertHook, listAlertHooks, revokeAlertHook } from './hooks.ts'
import { listAlerts } from './log.ts'

/** The receiver's path (src/alerts/receiver.ts mounts it): a hook's URL is a base + this + its id. */
const HOOK_PATH = '/hooks/alerts/'

const manage = { sessionOnly: true, write: true } as const
const readLog = { scopes: ['trades:read'], write: true } as const

/** A Host header that is a host name or an address, with a port or not: anything else is not used in a URL. */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/**
 * Where alerts reach this server: --public-url when the operator set it (a proxy's https address,
 * maybe with a path prefix); else the address this request reached, as its Host header says (what
 * the caller typed, so the URL works from where they are), or the socket's own address without one.
 * This server speaks plain HTTP: https needs a proxy in front, which needs --public-url.
 */
function baseUrl(config: Config, req: IncomingMessage): string {
  if (config.publicUrl !== undefined) return config.publicUrl
  const host = req.headers.host
  if (host !== undefined && HOST.test(host)) return `http://${host.toLowerCase()}`
  const address = (req.socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '')
  return `http://${address.includes(':') ? `[${address}]` : address}:${req.socket.localPort}`
}

/** A hook as the API shows it: with its URL; source_cidrs [] when any address may send. */
function shown(hook: AlertHook, base: string) {
  const { id, name, mode, model_id, max_age_seconds, source_cidrs, created_at, revoked_at, refused_count } = hook
  return { id, name, url: `${base}${HOOK_PATH}${id}`, mode, model_id, max_age_seconds, source_cidrs: source_cidrs ?? [], created_at, revoked_at, refused_count }
}

/** Each CIDR as --trusted-proxy reads them (src/shared/cidr.ts): the receiver checks the sender the same way. */
function checkCidrs(cidrs: readonly string[]): void {
  cidrs.forEach((cidr, i) => {
    try {
      cidrList([cidr], 'source_cidrs')
    } catch {
      throw validationError(`source_cidrs[${i}]`, `${JSON.stringify(cidr)} is not an IPv4 or IPv6 address or CIDR such as 52.89.214.238 or 10.0.0.0/8`)
    }
  })
}

/**
 * What a hook's alerts will need, checked before it exists: a known model, the EXECUTE plan (every
 * alert is an order), and for LIVE the tenant's venue, as POST /api/v1/orders asks of a LIVE order.
 */
async function checkHook(db: Queries, tenantId: string, input: { mode: 'PAPER' | 'LIVE'; model_id?: string | null }): Promise<void> {
  if (input.model_id != null && !(await findModel(db, input.model_id)))
    throw validationError('model_id', `unknown model ${JSON.stringify(input.model_id)}; see GET /api/v1/models`)
  const tenant = await findTenantById(db, tenantId)
  if (tenant?.plan !== 'EXECUTE')
    throw new DomainError('plan_forbids', `plan ${tenant?.plan ?? 'unknown'} does not allow orders; an alert hook places orders and needs the EXECUTE plan`)
  if (input.mode === 'LIVE' && !(await findVenueAccount(db, tenantId)))
    throw new DomainError('venue_not_connected', 'a LIVE hook places LIVE orders, which need a venue: connect one with PUT /api/v1/venue')
}

async function hookOf(db: Queries, tenantId: string, id: string): Promise<AlertHook> {
  const hook = isId('ahk', id) ? await findAlertHook(db, tenantId, id) : undefined
  if (!hook) throw notFound(`alert hook ${id.slice(0, 40)}`)
  return hook
}

/** This feature's routes; secrets are sealed in `secrets`, hook URLs built from config's --public-url. */
export function alertHookRoutes(config: Config, secrets: () => SecretBox): RouteSpec[] {
  const postAlertHooks = defineRoute({
    method: 'POST',
    path: '/api/v1/alert-hooks',
    summary:
      'Creates an alert hook: a URL TradingView (or any sender that cannot sign) posts alerts to, each placing an order through the risk checks; the secret is in this response only',
    tag: 'alerts',
    access: manage,
    errors: ['validation_failed', 'plan_forbids', 'venue_not_connected'],
    body: newHookSchema,
    response: createdHookSchema,
    sealOnReplay: true,
    handler: async (ctx) => {
      const tenantId = ctx.principal.tenantId
      const cidrs = ctx.body.source_cidrs ?? []
      checkCidrs(cidrs)
      await checkHook(ctx.tx, tenantId, ctx.body)
      const input = { ...ctx.body, model_id: ctx.body.model_id ?? null, source_cidrs: cidrs.length ? cidrs : null }
      const { hook, secret } = await createAlertHook(ctx.tx, tenantId, input, secrets(), ctx.now)
      const { id, name, url, ...rest } = shown(hook, baseUrl(config, ctx.req))
      return { id, name, url, secret, ...rest }
    },
  })

  const getAlertHooks = defineRoute({
    method: 'GET',
    path: '/api/v1/alert-hooks',
    summary: "The tenant's alert hooks, revoked ones too (never their secrets), newest first",
    tag: 'alerts',
    access: manage,
    errors: ['validation_failed'],
    query: pageQuery,
    response: { type: 'array', items: hookSchema },
    handler: async (ctx) => {
      const base = baseUrl(config, ctx.req)
      return listPage(ctx, async (before, limit) => (await listAlertHooks(ctx.db, ctx.principal.tenantId, before, limit)).map((h) => shown(h, base)))
    },
  })

  const getAlertHooksId = defineRoute({
    method: 'GET',
    path: '/api/v1/alert-hooks/:id',
    summary: 'One alert hook (never its secret)',
    tag: 'alerts',
    access: manage,
    errors: ['not_found'],
    response: hookSchema,
    handler: async (ctx) => shown(await hookOf(ctx.db, ctx.principal.tenantId, ctx.params.id), baseUrl(config, ctx.req)),
  })

  const deleteAlertHooksId = defineRoute({
    method: 'DELETE',
    path: '/api/v1/alert-hooks/:id',
    summary: 'Revokes an alert hook at once: the next alert to it is 404; what arrived stays listed',
    tag: 'alerts',
    access: manage,
    errors: ['not_found'],
    response: hookSchema,
    handler: async (ctx) => {
      const { tenantId } = ctx.principal
      const id = ctx.params.id
      // Revoking twice answers the first revocation unchanged.
      const hook = isId('ahk', id) ? ((await revokeAlertHook(ctx.tx, tenantId, id, ctx.now)) ?? (await findAlertHook(ctx.tx, tenantId, id))) : undefined
      if (!hook) throw notFound(`alert hook ${id.slice(0, 40)}`)
      return shown(hook, baseUrl(config, ctx.req))
    },
  })

  const getAlertHooksIdAlerts = defineRoute({
    method: 'GET',
    path: '/api/v1/alert-hooks/:id/alerts',
    summary: 'What arrived at this hook with its secret: accepted (with the order), refused (with the code and why) or duplicate; newest first',
    tag: 'alerts',
    access: readLog,
    errors: ['not_found', 'validation_failed'],
    query: pageQuery,
    response: { type: 'array', items: alertSchema },
    handler: async (ctx) => {
      const hook = await hookOf(ctx.db, ctx.principal.tenantId, ctx.params.id)
      return listPage(ctx, (before, limit) => listAlerts(ctx.db, ctx.principal.tenantId, hook.id, before, limit))
    },
  })

  return [postAlertHooks, getAlertHooks, getAlertHooksId, deleteAlertHooksId, getAlertHooksIdAlerts]
}
