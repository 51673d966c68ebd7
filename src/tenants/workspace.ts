// A tenant's workspace: its plan and active models. Table workspace_models (tenant_id, model_id).
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { savepoint, statement } from '../store/db.ts'
import { DomainError, validationError } from '../shared/errors.ts'
import { findModel } from '../models/catalogue.ts'
import { PLAN_MODEL_LIMIT, findTenantById } from './tenants.ts'

const activeIds = statement<[string], { model_id: string }>('SELECT model_id FROM workspace_models WHERE tenant_id = ? ORDER BY model_id')
const clearActive = statement('DELETE FROM workspace_models WHERE tenant_id = ?')
const addActive = statement('INSERT INTO workspace_models (tenant_id, model_id) VALUES (?, ?)')

export const workspaceSchema = {
  type: 'object',
  required: ['tenant_id', 'slug', 'plan', 'active_model_ids', 'limits'],
  additionalProperties: false,
  properties: {
    tenant_id: { type: 'string' },
    slug: { type: 'string' },
    plan: { type: 'string', enum: ['SIGNAL', 'EXECUTE'] },
    active_model_ids: { type: 'array', items: { type: 'string' } },
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

export function workspaceOf(tenantId: string): Workspace {
  const tenant = findTenantById(tenantId)
  if (!tenant) throw new DomainError('not_found', 'tenant not found')
  return {
    tenant_id: tenant.id,
    slug: tenant.slug,
    plan: tenant.plan,
    active_model_ids: activeModelIds(tenant.id),
    limits: { max_active_models: PLAN_MODEL_LIMIT[tenant.plan], orders_allowed: tenant.plan === 'EXECUTE' },
  }
}

export function setActiveModels(tenantId: string, modelIds: string[]): Workspace {
  const tenant = findTenantById(tenantId)
  if (!tenant) throw new DomainError('not_found', 'tenant not found')
  modelIds.forEach((id, i) => {
    if (!findModel(id)) throw validationError(`model_ids[${i}]`, `unknown model ${JSON.stringify(id)}; see GET /api/v1/models`)
  })
  const limit = PLAN_MODEL_LIMIT[tenant.plan]
  if (modelIds.length > limit) {
    throw new DomainError('plan_limit_exceeded', `plan ${tenant.plan} allows at most ${limit} active model${limit > 1 ? 's' : ''}, got ${modelIds.length}`)
  }
  savepoint(() => {
    clearActive().run(tenantId)
    for (const id of modelIds) addActive().run(tenantId, id)
  })
  return workspaceOf(tenantId)
}
