// The webhook API (SPEC section 7): endpoints, secret rotation, test pings, deliveries and
// redelivery. An API key needs webhooks:write; a session needs role owner or admin, even to read,
// since endpoint URLs and delivery errors describe the tenant's own systems.
import { defineRoute, type RouteSpec } from '../http/route.ts'
import { notFound, validationError } from '../shared/errors.ts'
import { listPage, pageQuery } from '../http/pagination.ts'
import type { Schema } from '../http/schema.ts'
import { isId } from '../store/ids.ts'
import type { Queries } from '../store/store.ts'
import { recordEvent } from './events.ts'
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listWebhooks,
  rotateSecret,
  updateWebhook,
  webhookChangeSchema,
  webhookInputFields,
  webhookRequired,
  webhookSchema,
  type Webhook,
} from './endpoints.ts'
import { deliveryOfEventFor, findDelivery, listDeliveries, redeliver } from './outbox.ts'
import { DELIVERY_STATUSES, deliverySchema } from './delivery-schema.ts'
import { checkWebhookHost, parseWebhookUrl } from './url-guard.ts'
import type { WebhookSettings } from './config.ts'

const access = { scopes: ['webhooks:write'], write: true } as const

const secretField = {
  type: 'string',
  pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
  description: 'shown in this response and in an idempotent replay within 24 h, never again',
} as const satisfies Schema
const createdSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...webhookRequired, 'signing_secret'],
  properties: { ...webhookSchema.properties, signing_secret: secretField },
} as const satisfies Schema
const rotatedSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...webhookRequired, 'signing_secret', 'previous_secret_expires_at'],
  properties: {
    ...webhookSchema.properties,
    signing_secret: secretField,
    previous_secret_expires_at: {
      type: 'string',
      format: 'date-time',
      description: 'until then webhook-signature also carries a signature by the previous secret',
    },
  },
} as const satisfies Schema

async function webhookOf(db: Queries, tenantId: string, id: string): Promise<Webhook> {
  const webhook = isId('wh', id) ? await findWebhook(db, tenantId, id) : undefined
  if (!webhook) throw notFound(`webhook ${id.slice(0, 40)}`)
  return webhook
}

function mustBeActive(webhook: Webhook): void {
  if (webhook.status !== 'ACTIVE') throw validationError('status', `webhook ${webhook.id} is DISABLED; PATCH its status to ACTIVE first`)
}

const getWebhooks = defineRoute({
  method: 'GET',
  path: '/api/v1/webhooks',
  summary: "The tenant's webhook endpoints (never their secrets), newest first",
  tag: 'webhooks',
  access,
  errors: ['validation_failed'],
  query: pageQuery,
  response: { type: 'array', items: webhookSchema },
  handler: (ctx) => {
    return listPage(ctx, (before, limit) => listWebhooks(ctx.db, ctx.principal.tenantId, before, limit))
  },
})

const getWebhooksId = defineRoute({
  method: 'GET',
  path: '/api/v1/webhooks/:id',
  summary: 'One webhook endpoint',
  tag: 'webhooks',
  access,
  errors: ['not_found'],
  response: webhookSchema,
  handler: (ctx) => webhookOf(ctx.db, ctx.principal.tenantId, ctx.params.id),
})

const deleteWebhooksId = defineRoute({
  method: 'DELETE',
  path: '/api/v1/webhooks/:id',
  summary: 'Removes an endpoint with its deliveries; pending ones are not sent',
  tag: 'webhooks',
  access,
  errors: ['not_found'],
  response: webhookSchema,
  handler: async (ctx) => {
    const id = ctx.params.id
    const removed = isId('wh', id) ? await deleteWebhook(ctx.tx, ctx.principal.tenantId, id) : undefined
    if (!removed) throw notFound(`webhook ${id.slice(0, 40)}`)
    return removed
  },
})

const postWebhooksIdRotateSecret = defineRoute({
  method: 'POST',
  path: '/api/v1/webhooks/:id/rotate-secret',
  summary: 'New signing secret, used at once; webhook-signature also carries the old one for 24 h',
  tag: 'webhooks',
  access,
  errors: ['not_found'],
  response: rotatedSchema,
  sealOnReplay: true,
  handler: async (ctx) => {
    await webhookOf(ctx.tx, ctx.principal.tenantId, ctx.params.id)
    const rotated = await rotateSecret(ctx.tx, ctx.principal.tenantId, ctx.params.id, ctx.now)
    if (!rotated) throw notFound(`webhook ${ctx.params.id}`)
    return { ...rotated.webhook, signing_secret: rotated.secret, previous_secret_expires_at: rotated.previousSecretExpiresAt }
  },
})

const postWebhooksIdTest = defineRoute({
  method: 'POST',
  path: '/api/v1/webhooks/:id/test',
  summary: 'Sends a webhook.ping event to this endpoint (recorded like any event); returns its delivery',
  tag: 'webhooks',
  access,
  errors: ['not_found', 'validation_failed'],
  response: deliverySchema,
  handler: async (ctx) => {
    const webhook = await webhookOf(ctx.tx, ctx.principal.tenantId, ctx.params.id)
    mustBeActive(webhook)
    const event = await recordEvent(ctx.tx, ctx.principal.tenantId, 'webhook.ping', { webhook_id: webhook.id }, ctx.now)
    return (await deliveryOfEventFor(ctx.tx, ctx.principal.tenantId, webhook.id, event.id))!
  },
})

const getWebhooksIdDeliveries = defineRoute({
  method: 'GET',
  path: '/api/v1/webhooks/:id/deliveries',
  summary: "This endpoint's deliveries, newest first",
  tag: 'webhooks',
  access,
  errors: ['not_found', 'validation_failed'],
  query: { ...pageQuery, status: { type: 'string', enum: DELIVERY_STATUSES } },
  response: { type: 'array', items: deliverySchema },
  handler: async (ctx) => {
    const webhook = await webhookOf(ctx.db, ctx.principal.tenantId, ctx.params.id)
    return listPage(ctx, (before, limit) => listDeliveries(ctx.db, ctx.principal.tenantId, webhook.id, ctx.query.status, before, limit))
  },
})

const getWebhooksIdDeliveriesDlv = defineRoute({
  method: 'GET',
  path: '/api/v1/webhooks/:id/deliveries/:dlv',
  summary: 'One delivery',
  tag: 'webhooks',
  access,
  errors: ['not_found'],
  response: deliverySchema,
  handler: async (ctx) => {
    const webhook = await webhookOf(ctx.db, ctx.principal.tenantId, ctx.params.id)
    const delivery = isId('dlv', ctx.params.dlv) ? await findDelivery(ctx.db, ctx.principal.tenantId, webhook.id, ctx.params.dlv) : undefined
    if (!delivery) throw notFound(`delivery ${ctx.params.dlv.slice(0, 40)}`)
    return delivery
  },
})

const postWebhooksIdDeliveriesDlvRedeliver = defineRoute({
  method: 'POST',
  path: '/api/v1/webhooks/:id/deliveries/:dlv/redeliver',
  summary: 'Queues the same event again as a new delivery (same body id, so receivers can dedupe)',
  tag: 'webhooks',
  access,
  errors: ['not_found', 'validation_failed'],
  response: deliverySchema,
  handler: async (ctx) => {
    const webhook = await webhookOf(ctx.tx, ctx.principal.tenantId, ctx.params.id)
    mustBeActive(webhook)
    const copy = isId('dlv', ctx.params.dlv) ? await redeliver(ctx.tx, ctx.principal.tenantId, webhook.id, ctx.params.dlv, ctx.now) : undefined
    if (!copy) throw notFound(`delivery ${ctx.params.dlv.slice(0, 40)}`)
    return copy
  },
})

/**
 * This feature's routes, in the order the router tries them. Creating and changing an endpoint
 * checks its URL against the operator's allowed ranges, so those two are made with the settings.
 */
export function webhookRoutes(settings: WebhookSettings): RouteSpec[] {
  const postWebhooks = defineRoute({
    method: 'POST',
    path: '/api/v1/webhooks',
    summary: 'Registers an HTTPS endpoint; the signing secret is in this response only',
    tag: 'webhooks',
    access,
    errors: ['validation_failed'],
    body: { type: 'object', required: ['url'], additionalProperties: false, properties: webhookInputFields },
    check: (ctx) => checkWebhookHost(parseWebhookUrl(ctx.body.url, settings.allowed), settings.allowed),
    response: createdSchema,
    sealOnReplay: true,
    handler: async (ctx) => {
      const url = parseWebhookUrl(ctx.body.url, settings.allowed)
      // Inside the transaction the pipeline opens for every change (ctx.tx), as every handler of a change is.
      const { webhook, secret } = await createWebhook(
        ctx.tx,
        ctx.principal.tenantId,
        { url: url.href, events: ctx.body.events ?? ['*'], description: ctx.body.description ?? null },
        ctx.now,
      )
      const { id, url: shownUrl, status, ...rest } = webhook
      return { id, url: shownUrl, status, signing_secret: secret, ...rest }
    },
  })
  const patchWebhooksId = defineRoute({
    method: 'PATCH',
    path: '/api/v1/webhooks/:id',
    summary: 'Changes url, events, description or status (ACTIVE|DISABLED); reactivating resumes pending deliveries',
    tag: 'webhooks',
    access,
    errors: ['not_found', 'validation_failed'],
    body: webhookChangeSchema,
    check: async (ctx) => {
      if (ctx.body.url !== undefined) await checkWebhookHost(parseWebhookUrl(ctx.body.url, settings.allowed), settings.allowed)
    },
    response: webhookSchema,
    handler: async (ctx) => {
      await webhookOf(ctx.tx, ctx.principal.tenantId, ctx.params.id)
      const change = { ...ctx.body }
      if (change.url !== undefined) change.url = parseWebhookUrl(change.url, settings.allowed).href
      return (await updateWebhook(ctx.tx, ctx.principal.tenantId, ctx.params.id, change, ctx.now)) ?? webhookOf(ctx.tx, ctx.principal.tenantId, ctx.params.id)
    },
  })
  return [
    postWebhooks,
    getWebhooks,
    getWebhooksId,
    patchWebhooksId,
    deleteWebhooksId,
    postWebhooksIdRotateSecret,
    postWebhooksIdTest,
    getWebhooksIdDeliveries,
    getWebhooksIdDeliveriesDlv,
    postWebhooksIdDeliveriesDlvRedeliver,
  ]
}
