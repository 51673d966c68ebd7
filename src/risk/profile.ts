// A tenant's risk profile. Tables risk_profiles (tenant_id, max_open_trades, max_exposure_usd,
// trading_paused, fee_bps, slippage_bps, updated_at; 008 adds capital_usd, breaker_action and the
// SPEC 9 limits, each NULL when off) and paused_models (tenant_id, model_id).
import { query, type Queries, type Tx } from '../store/store.ts'
import { DomainError } from '../shared/errors.ts'
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { appendIncident } from './incidents.ts'
import { evaluateBreakers } from './breakers.ts'
import { shiftEquityBase } from './equity.ts'

export type RiskProfile = FromSchema<typeof riskProfileSchema>
export type RiskProfileChange = FromSchema<typeof riskProfileChangeSchema>

/** The limits of SPEC 9, each null (off) until set; a PATCH with null turns one off again. */
const BREAKER_LIMITS = [
  'max_daily_loss_usd',
  'max_drawdown_pct',
  'max_consecutive_losses',
  'max_order_notional_usd',
  'price_band_pct',
  'max_trades_per_day',
  'max_orders_per_minute',
] as const
/** SPEC 13: the protection resting on the venue for every LIVE position. */
const PROTECTION_FIELDS = ['venue_stop_loss_pct', 'venue_take_profit_pct', 'stop_limit_offset_pct', 'unprotected_action'] as const
const COLUMNS = [
  'max_open_trades',
  'max_exposure_usd',
  'fee_bps',
  'slippage_bps',
  'capital_usd',
  'breaker_action',
  ...BREAKER_LIMITS,
  ...PROTECTION_FIELDS,
] as const

type Row = Omit<RiskProfile, 'trading_paused' | 'paused_model_ids'> & { trading_paused: number }

const profileRow = query<[string], Row>(`SELECT tenant_id, trading_paused, ${COLUMNS.join(', ')} FROM risk_profiles WHERE tenant_id = ?`)
const pausedModels = query<[string], { model_id: string }>('SELECT model_id FROM paused_models WHERE tenant_id = ? ORDER BY model_id')
const updateProfile = query(`UPDATE risk_profiles SET ${COLUMNS.map((c) => `${c} = @${c}`).join(', ')}, updated_at = @now WHERE tenant_id = @tenant`)

/** What re-places the protections of open positions, in the transaction of the profile's change. */
export type ProtectionTermsListener = (tx: Tx, tenantId: string, now: Date) => Promise<void>

/** Trading's protections (src/trading/protection/store.ts protectionsDue), handed over once by src/app.ts. */
let protectionTermsChanged: ProtectionTermsListener | undefined

/** What re-places the protections of open positions when the profile's percentages change (SPEC 13). */
export function hookProtectionTerms(listener: ProtectionTermsListener): void {
  protectionTermsChanged = listener
}

export async function riskProfile(db: Queries, tenantId: string): Promise<RiskProfile> {
  const row = await db.get(profileRow, [tenantId])
  if (!row) throw new DomainError('not_found', 'risk profile not found')
  return {
    ...row,
    trading_paused: row.trading_paused === 1,
    paused_model_ids: (await db.all(pausedModels, [tenantId])).map((r) => r.model_id),
  }
}

/** Changes limits and records RISK_PROFILE_UPDATED in the same transaction. */
export async function updateRiskProfile(tx: Tx, tenantId: string, change: RiskProfileChange, actor: string, now: Date): Promise<RiskProfile> {
  return await tx.savepoint(async () => {
    const before = await riskProfile(tx, tenantId)
    const after: Record<string, unknown> = { now: now.toISOString(), tenant: tenantId }
    for (const column of COLUMNS) after[column] = column in change ? change[column] : before[column]
    await tx.run(updateProfile, after)
    const reason = (Object.keys(change) as (keyof RiskProfileChange)[]).map((k) => `${k} ${before[k]} -> ${change[k]}`).join(', ')
    await appendIncident(tx, { tenantId, action: 'RISK_PROFILE_UPDATED', actor, status: 'RECORDED', reason, now })
    // New limits change what the breakers see: a limit set below today's loss trips now. New
    // capital moves the day start and the peak with it: a deposit is no gain, a withdrawal no loss.
    await shiftEquityBase(tx, tenantId, (after.capital_usd as number) - before.capital_usd)
    await evaluateBreakers(tx, tenantId, now)
    // New percentages re-place the protections of open positions (both null cancels them).
    if (PROTECTION_FIELDS.slice(0, 3).some((field) => after[field] !== before[field])) await protectionTermsChanged?.(tx, tenantId, now)
    return await riskProfile(tx, tenantId)
  })
}

export const riskProfileSchema = {
  type: 'object',
  required: [
    'tenant_id',
    'max_open_trades',
    'max_exposure_usd',
    'trading_paused',
    'paused_model_ids',
    'fee_bps',
    'slippage_bps',
    'capital_usd',
    'max_daily_loss_usd',
    'max_drawdown_pct',
    'max_consecutive_losses',
    'breaker_action',
    'max_order_notional_usd',
    'price_band_pct',
    'max_trades_per_day',
    'max_orders_per_minute',
    ...PROTECTION_FIELDS,
  ],
  additionalProperties: false,
  properties: {
    tenant_id: { type: 'string' },
    max_open_trades: { type: 'integer' },
    max_exposure_usd: { type: 'number' },
    trading_paused: { type: 'boolean', description: 'fleet-wide kill switch state' },
    paused_model_ids: { type: 'array', items: { type: 'string' } },
    fee_bps: { type: 'number' },
    slippage_bps: { type: 'number' },
    capital_usd: { type: 'number', description: 'what equity starts from: capital + realized + unrealized PnL' },
    max_daily_loss_usd: { type: 'number', nullable: true, description: 'loss breaker: day-start equity - equity; null is off' },
    max_drawdown_pct: { type: 'number', nullable: true, description: 'loss breaker: drawdown from the peak equity since the last reset; null is off' },
    max_consecutive_losses: { type: 'integer', nullable: true, description: 'loss breaker: closed trades with net PnL < 0 in a row; null is off' },
    breaker_action: { type: 'string', enum: ['CANCEL_AND_PAUSE', 'FLATTEN'], description: 'what a tripped breaker does (the kill switch action)' },
    max_order_notional_usd: { type: 'number', nullable: true, description: 'refuses an order worth more (422); null is off' },
    price_band_pct: { type: 'number', nullable: true, description: 'refuses a LIMIT price further than this from the last price (422); null is off' },
    max_trades_per_day: { type: 'integer', nullable: true, description: 'refuses opening orders beyond this many per UTC day (422); null is off' },
    max_orders_per_minute: { type: 'integer', nullable: true, description: 'an order beyond this many in 60 s trips the breaker; null is off' },
    venue_stop_loss_pct: {
      type: 'number',
      nullable: true,
      description: "LIVE: a stop resting on the venue this far below the position's average entry (SPEC 13); null is off",
    },
    venue_take_profit_pct: {
      type: 'number',
      nullable: true,
      description:
        "LIVE: a take-profit resting on the venue this far above the position's average entry (one OCO with the stop where the venue offers it); null is off",
    },
    stop_limit_offset_pct: { type: 'number', description: "where a market has no stop-market orders: the stop-limit's limit this far below its trigger" },
    unprotected_action: {
      type: 'string',
      enum: ['ALERT', 'FLATTEN'],
      description: 'a position the venue refuses to protect: ALERT (incident, event, /health degraded) or FLATTEN (also sold at market)',
    },
  },
} as const satisfies Schema

// Money is at least a cent and percentages at least a hundredth: a positive amount far below that
// (5e-324) is no limit anyone means, and it breaks the arithmetic built on it (a capital that small
// made equity negative with a drawdown of 0). Subnormal numbers are refused everywhere (schema.ts).
const MIN_USD = 0.01
const MIN_PCT = 0.01

export const riskProfileChangeSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    max_open_trades: { type: 'integer', minimum: 1, maximum: 10000 },
    max_exposure_usd: { type: 'number', minimum: MIN_USD, maximum: 1e12 },
    fee_bps: { type: 'number', minimum: 0, maximum: 1000 },
    slippage_bps: { type: 'number', minimum: 0, maximum: 1000 },
    capital_usd: { type: 'number', minimum: MIN_USD, maximum: 1e12 },
    max_daily_loss_usd: { type: 'number', nullable: true, minimum: MIN_USD, maximum: 1e12 },
    max_drawdown_pct: { type: 'number', nullable: true, minimum: MIN_PCT, maximum: 100 },
    max_consecutive_losses: { type: 'integer', nullable: true, minimum: 1, maximum: 1000 },
    breaker_action: { type: 'string', enum: ['CANCEL_AND_PAUSE', 'FLATTEN'] },
    max_order_notional_usd: { type: 'number', nullable: true, minimum: MIN_USD, maximum: 1e12 },
    price_band_pct: { type: 'number', nullable: true, minimum: MIN_PCT, maximum: 1000 },
    max_trades_per_day: { type: 'integer', nullable: true, minimum: 1, maximum: 100000 },
    max_orders_per_minute: { type: 'integer', nullable: true, minimum: 1, maximum: 100000 },
    venue_stop_loss_pct: { type: 'number', nullable: true, minimum: 0.1, maximum: 50 },
    venue_take_profit_pct: { type: 'number', nullable: true, minimum: 0.1, maximum: 1000 },
    stop_limit_offset_pct: { type: 'number', minimum: 0.1, maximum: 10 },
    unprotected_action: { type: 'string', enum: ['ALERT', 'FLATTEN'] },
  },
} as const satisfies Schema
