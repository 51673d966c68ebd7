// Whether trading is paused for a tenant's fleet or one of its models (SPEC 6): the one reading of
// risk_profiles.trading_paused and paused_models that the checks, the kill switch and the executor share.
import { query, type Queries } from '../store/store.ts'

export interface PauseState {
  /** The whole fleet is paused (kill switch, breaker or dead man's switch). */
  fleet: boolean
  /** The model itself is paused (false for an order without a model). */
  model: boolean
}

const pauseOf = query<{ tenant: string; model: string | null }, { fleet: number; model: number }>(`
  SELECT trading_paused AS fleet, CASE WHEN EXISTS (SELECT 1 FROM paused_models WHERE tenant_id = @tenant AND model_id = @model) THEN 1 ELSE 0 END AS model
  FROM risk_profiles WHERE tenant_id = @tenant`)

/**
 * The pause state of a tenant's fleet and of `modelId`; undefined for a tenant with no risk profile.
 *
 * @example
 * await findPauseState(db, 'ten_1', 'trend-follower') // { fleet: false, model: true }
 */
export async function findPauseState(db: Queries, tenantId: string, modelId: string | null): Promise<PauseState | undefined> {
  const row = await db.get(pauseOf, { tenant: tenantId, model: modelId })
  return row && { fleet: row.fleet === 1, model: row.model === 1 }
}

/** Whether an order of `modelId` that opens a position must wait: the fleet or that model is paused. */
export async function isPaused(db: Queries, tenantId: string, modelId: string | null): Promise<boolean> {
  const state = await findPauseState(db, tenantId, modelId)
  return state !== undefined && (state.fleet || state.model)
}
