// A tenant's risk profile. Tables risk_profiles (tenant_id, max_open_trades, max_exposure_usd,
// trading_paused, fee_bps, slippage_bps, updated_at) and paused_models (tenant_id, model_id).
import { savepoint, statement } from '../store/db.ts'
import { DomainError } from '../shared/errors.ts'
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { appendIncident } from './incidents.ts'

export type RiskProfile = FromSchema<typeof riskProfileSchema>
export type RiskProfileChange = FromSchema<typeof riskProfileChangeSchema>

interface Row {
  tenant_id: string
  max_open_trades: number
  max_exposure_usd: number
  trading_paused: number
  fee_bps: number
  slippage_bps: number
}

const profileRow = statement<[string], Row>(
  'SELECT tenant_id, max_open_trades, max_exposure_usd, trading_paused, fee_bps, slippage_bps FROM risk_profiles WHERE tenant_id = ?',
)
const pausedModels = statement<[string], { model_id: string }>('SELECT model_id FROM paused_models WHERE tenant_id = ? ORDER BY model_id')
const updateProfile = statement(`UPDATE risk_profiles SET
  max_open_trades = coalesce(@max_open_trades, max_open_trades),
  max_exposure_usd = coalesce(@max_exposure_usd, max_exposure_usd),
  fee_bps = coalesce(@fee_bps, fee_bps),
  slippage_bps = coalesce(@slippage_bps, slippage_bps),
  updated_at = @now WHERE tenant_id = @tenant`)

export function riskProfile(tenantId: string): RiskProfile {
  const row = profileRow().get(tenantId)
  if (!row) throw new DomainError('not_found', 'risk profile not found')
  return {
    ...row,
    trading_paused: row.trading_paused === 1,
    paused_model_ids: pausedModels()
      .all(tenantId)
      .map((r) => r.model_id),
  }
}

/** Changes limits and records RISK_PROFILE_UPDATED in the same transaction. */
export function updateRiskProfile(tenantId: string, change: RiskProfileChange, actor: string, now: Date): RiskProfile {
  return savepoint(() => {
    const before = riskProfile(tenantId)
    updateProfile().run({
      max_open_trades: change.max_open_trades ?? null,
      max_exposure_usd: change.max_exposure_usd ?? null,
      fee_bps: change.fee_bps ?? null,
      slippage_bps: change.slippage_bps ?? null,
      now: now.toISOString(),
      tenant: tenantId,
    })
    const reason = (Object.keys(change) as (keyof RiskProfileChange)[]).map((k) => `${k} ${before[k]} -> ${change[k]}`).join(', ')
    appendIncident({ tenantId, action: 'RISK_PROFILE_UPDATED', actor, status: 'RECORDED', reason, now })
    return riskProfile(tenantId)
  })
}

export const riskProfileSchema = {
  type: 'object',
  required: ['tenant_id', 'max_open_trades', 'max_exposure_usd', 'trading_paused', 'paused_model_ids', 'fee_bps', 'slippage_bps'],
  additionalProperties: false,
  properties: {
    tenant_id: { type: 'string' },
    max_open_trades: { type: 'integer' },
    max_exposure_usd: { type: 'number' },
    trading_paused: { type: 'boolean', description: 'fleet-wide kill switch state' },
    paused_model_ids: { type: 'array', items: { type: 'string' } },
    fee_bps: { type: 'number' },
    slippage_bps: { type: 'number' },
  },
} as const satisfies Schema

export const riskProfileChangeSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    max_open_trades: { type: 'integer', minimum: 1, maximum: 10000 },
    max_exposure_usd: { type: 'number', exclusiveMinimum: 0, maximum: 1e12 },
    fee_bps: { type: 'number', minimum: 0, maximum: 1000 },
    slippage_bps: { type: 'number', minimum: 0, maximum: 1000 },
  },
} as const satisfies Schema
