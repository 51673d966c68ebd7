// A tenant's workspace: its plan, active models and the ones of those its automation trades LIVE
// (SPEC 10). Table workspace_models (tenant_id, model_id, live).
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { assertInWrite, savepoint, statement } from '../store/db.ts'
import { DomainError, validationError } from '../shared/errors.ts'
import { findModel } from '../models/catalogue.ts'
import { findVenueAccount } from '../venues/accounts.ts'
import { PLAN_MODEL_LIMIT, findTenantById } from './tenants.ts'

const activeIds = statement<[string], { model_id: string }>('SELECT model_id FROM workspace_models WHERE tenant_id = ? ORDER BY model_id')
const liveIds = statement<[string], { model_id: string }>('SELECT model_id FROM workspace_models WHERE tenant_id = ? AND live = 1 ORDER BY model_id')
const clearActive = statement('DELETE FROM workspace_models WHERE tenant_id = ?')
const addActive = statement('INSERT INTO workspace_models (tenant_id, model_id, live) VALUES (?, ?, ?)')
const clearLive = statement('UPDATE workspace_models SET live = 0 WHERE tenant_id = ? AND live = 1')

/**
 * Turns every LIVE model of the tenant back to PAPER: its venue is gone (DELETE /api/v1/venue), so
 * its automation must not keep trying to trade LIVE. Returns how many were LIVE. Call inside write().
 */
export function clearLiveModels(tenantId: string): number {
  assertInWrite()
  return clearLive().run(tenantId).changes
}

export const workspaceSchema = {
  type: 'object',
  required: ['tenant_id', 'slug', 'plan', 'active_model_ids', 'live_model_ids', 'limits'],
  additionalProperties: false,
  properties: {
    tenant_id: { type: 'string' },
    slug: { type: 'string' },
    plan: { type: 'string', enum: ['SIGNAL', 'EXECUTE'] },
    active_model_ids: { type: 'array', items: { type: 'string' } },
    live_model_ids: { type: 'array', items: { type: 'string' }, description: "the active models whose automation trades LIVE on the tenant's venue" },
    limits: {
      type: 'object',
      additionalProperties: false,
      required: ['max_active_models', 'orders_allowed'],
      properties: { max_active_models: { type: 'integer' }, orders_allowed: { type: 'boolean' } },
    },
  },
} as const satisfies Schema
export type Workspace = FromSchema<typeof workspaceSchema>

export function activeModelIds(tenantId: string): string[] {
  return activeIds()
    .all(tenantId)
    .map((r) => r.model_id)
}

function liveIdsOf(tenantId: string): string[] {
  return liveIds()
    .all(tenantId)
    .map((r) => r.model_id)
}

export function workspaceOf(tenantId: string): Workspace {
  const tenant = findTenantById(tenantId)
  if (!tenant) throw new DomainError('not_found', 'tenant not found')
  return {
    tenant_id: tenant.id,
    slug: tenant.slug,
    plan: tenant.plan,
    active_model_ids: activeModelIds(tenant.id),
    live_model_ids: liveIdsOf(tenant.id),
    limits: { max_active_models: PLAN_MODEL_LIMIT[tenant.plan], orders_allowed: tenant.plan === 'EXECUTE' },
  }
}

/**
 * Replaces the active models and, when `liveIds` is given, the LIVE ones (a subset of them, which
 * needs the EXECUTE plan and a venue). Left out, the models that stay active keep their flag.
 */
export function setActiveModels(tenantId: string, modelIds: string[], liveIds?: string[]): Workspace {
  const tenant = findTenantById(tenantId)
  if (!tenant) throw new DomainError('not_found', 'tenant not found')
  modelIds.forEach((id, i) => {
    if (!findModel(id)) throw validationError(`model_ids[${i}]`, `unknown model ${JSON.stringify(id)}; see GET /api/v1/models`)
  })
  const limit = PLAN_MODEL_LIMIT[tenant.plan]
  if (modelIds.length > limit) {
    throw new DomainError('plan_limit_exceeded', `plan ${tenant.plan} allows at most ${limit} active model${limit > 1 ? 's' : ''}, got ${modelIds.length}`)
  }
  const live = new Set(liveIds ?? liveIdsOf(tenantId).filter((id) => modelIds.includes(id)))
  if (liveIds) {
    liveIds.forEach((id, i) => {
      if (!modelIds.includes(id)) throw validationError(`live_model_ids[${i}]`, `model ${JSON.stringify(id)} is not in model_ids; a LIVE model must be active`)
    })
    if (live.size && tenant.plan !== 'EXECUTE')
      throw new DomainError('plan_forbids', `plan ${tenant.plan} does not allow orders; trading a model LIVE needs the EXECUTE plan`)
    if (live.size && !findVenueAccount(tenantId))
      throw new DomainError('venue_not_connected', 'trading a model LIVE needs a venue: connect one with PUT /api/v1/venue')
  }
  savepoint(() => {
    clearActive().run(tenantId)
    for (const id of modelIds) addActive().run(tenantId, id, live.has(id) ? 1 : 0)
  })
  return workspaceOf(tenantId)
}
