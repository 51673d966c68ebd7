// A tenant's workspace: its plan, active models and the ones of those its automation trades LIVE
// (SPEC 10). Table workspace_models (tenant_id, model_id, live).
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { query, type Queries, type Tx } from '../store/store.ts'
import { DomainError, validationError } from '../shared/errors.ts'
import { findModel } from '../models/catalogue.ts'
import { findVenueAccount } from '../venues/accounts.ts'
import { PLAN_MODEL_LIMIT, findTenantById } from './tenants.ts'

const activeIds = query<[string], { model_id: string }>('SELECT model_id FROM workspace_models WHERE tenant_id = ? ORDER BY model_id')
const liveIds = query<[string], { model_id: string }>('SELECT model_id FROM workspace_models WHERE tenant_id = ? AND live = 1 ORDER BY model_id')
const clearActive = query('DELETE FROM workspace_models WHERE tenant_id = ?')
const addActive = query('INSERT INTO workspace_models (tenant_id, model_id, live) VALUES (?, ?, ?)')
const clearLive = query('UPDATE workspace_models SET live = 0 WHERE tenant_id = ? AND live = 1')

/**
 * Turns every LIVE model of the tenant back to PAPER: its venue is gone (DELETE /api/v1/venue), so
 * its automation must not keep trying to trade LIVE. Returns how many were LIVE, in the change's tx.
 */
export async function clearLiveModels(tx: Tx, tenantId: string): Promise<number> {
  return (await tx.run(clearLive, [tenantId])).changes
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

export async function activeModelIds(db: Queries, tenantId: string): Promise<string[]> {
  return (await db.all(activeIds, [tenantId])).map((r) => r.model_id)
}

async function liveIdsOf(db: Queries, tenantId: string): Promise<string[]> {
  return (await db.all(liveIds, [tenantId])).map((r) => r.model_id)
}

export async function workspaceOf(db: Queries, tenantId: string): Promise<Workspace> {
  const tenant = await findTenantById(db, tenantId)
  if (!tenant) throw new DomainError('not_found', 'tenant not found')
  return {
    tenant_id: tenant.id,
    slug: tenant.slug,
    plan: tenant.plan,
    active_model_ids: await activeModelIds(db, tenant.id),
    live_model_ids: await liveIdsOf(db, tenant.id),
    limits: { max_active_models: PLAN_MODEL_LIMIT[tenant.plan], orders_allowed: tenant.plan === 'EXECUTE' },
  }
}

/**
 * Replaces the active models and, when `liveIds` is given, the LIVE ones (a subset of them, which
 * needs the EXECUTE plan and a venue). Left out, the models that stay active keep their flag.
 */
export async function setActiveModels(tx: Tx, tenantId: string, modelIds: string[], liveIds?: string[]): Promise<Workspace> {
  const tenant = await findTenantById(tx, tenantId)
  if (!tenant) throw new DomainError('not_found', 'tenant not found')
  for (const [i, id] of modelIds.entries()) {
    if (!(await findModel(tx, id))) throw validationError(`model_ids[${i}]`, `unknown model ${JSON.stringify(id)}; see GET /api/v1/models`)
  }
  const limit = PLAN_MODEL_LIMIT[tenant.plan]
  if (modelIds.length > limit) {
    throw new DomainError('plan_limit_exceeded', `plan ${tenant.plan} allows at most ${limit} active model${limit > 1 ? 's' : ''}, got ${modelIds.length}`)
  }
  const live = new Set(liveIds ?? (await liveIdsOf(tx, tenantId)).filter((id) => modelIds.includes(id)))
  if (liveIds) {
    liveIds.forEach((id, i) => {
      if (!modelIds.includes(id)) throw validationError(`live_model_ids[${i}]`, `model ${JSON.stringify(id)} is not in model_ids; a LIVE model must be active`)
    })
    if (live.size && tenant.plan !== 'EXECUTE')
      throw new DomainError('plan_forbids', `plan ${tenant.plan} does not allow orders; trading a model LIVE needs the EXECUTE plan`)
    if (live.size && !(await findVenueAccount(tx, tenantId)))
      throw new DomainError('venue_not_connected', 'trading a model LIVE needs a venue: connect one with PUT /api/v1/venue')
  }
  await tx.savepoint(async () => {
    await tx.run(clearActive, [tenantId])
    for (const id of modelIds) await tx.run(addActive, [tenantId, id, live.has(id) ? 1 : 0])
  })
  return workspaceOf(tx, tenantId)
}
