// The emergency kill switch. Flips risk_profiles.trading_paused (the fleet) or a paused_models row
// (one model), cancels pending orders in scope (one fence, see src/trading/cancellations.ts),
// closes open trades for FLATTEN, and records the incident and the events: all of it one
// transaction, so a crash leaves all of it or none. Orders and trades are trading's, which sits
// above risk (its pre-trade checks read the pauses and write incidents): the switch reaches them
// through the TradingHalt src/app.ts hooks up, never by importing trading.
import { holdTenant } from '../tenants/tenants.ts'
import { query, type Queries, type Tx } from '../store/store.ts'
import { DomainError, validationError } from '../shared/errors.ts'
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { MODEL_ID_PATTERN, findModel } from '../models/catalogue.ts'
import { recordEvent } from '../webhooks/events.ts'
import { appendIncident, incidentRef, type Incident } from './incidents.ts'
import { findPauseState } from './pauses.ts'

const KILL_SWITCH_ACTIONS = ['CANCEL_AND_PAUSE', 'PAUSE', 'CANCEL_ORDERS', 'FLATTEN', 'RESUME'] as const
export type KillSwitchAction = (typeof KILL_SWITCH_ACTIONS)[number]

type KillSwitchBody = FromSchema<typeof killSwitchRequestSchema>
/** The API's body, which must state pause (it must agree with the action); the CLI leaves it to the action. */
export type KillSwitchRequest = Omit<KillSwitchBody, 'pause'> & { pause?: KillSwitchBody['pause'] }
export type KillSwitchResult = FromSchema<typeof killSwitchResultSchema>

/** What the kill switch does to orders and trades; each runs inside the switch's transaction, `tx`. */
export interface TradingHalt {
  /** Pending orders in scope (modelId null: the whole fleet). */
  pendingOrderCount(tx: Tx, tenantId: string, modelId: string | null): Promise<number>
  /** Cancels them, marked with the incident that records why. */
  cancelPendingOrders(tx: Tx, tenantId: string, modelId: string | null, incidentId: string, now: Date): Promise<void>
  /** The open trades FLATTEN closes (at their last price, or `live` of them by a sell on the venue), and the pairs of those it cannot. */
  flattenPlan(tx: Tx, tenantId: string, modelId: string | null): Promise<{ closable: string[]; unpriced: string[]; live: number }>
  /** Closes those trades; returns how many it closed. */
  closeOpenTrades(tx: Tx, tenantId: string, tradeIds: string[], now: Date): Promise<number>
}

let halt: TradingHalt | undefined
let resumeCheck: ResumeCheck = async () => undefined

/**
 * Asked before a fleet RESUME, inside its transaction: throws 409 breaker_engaged while a loss
 * breaker's condition holds (unless reset_breakers), else clears the breakers' latches and returns
 * what the incident should add (the re-based equity), if anything. src/app.ts hooks up the breakers'.
 */
export type ResumeCheck = (tx: Tx, tenantId: string, resetBreakers: boolean, now: Date) => Promise<string | undefined>

/** Who pulled the switch when nobody did by hand: its incident action and the numbers it acted on. */
export interface AutomaticCause {
  action: 'CIRCUIT_BREAKER_TRIPPED' | 'DEAD_MAN_SWITCH_FIRED'
  reason: string
}

/** Trading's halt (src/trading/cancellations.ts, paper-broker.ts), handed over once by src/app.ts. */
export function hookTradingHalt(trading: TradingHalt): void {
  halt = trading
}

export function hookResumeCheck(check: ResumeCheck): void {
  resumeCheck = check
}

function tradingHalt(): TradingHalt {
  // A switch that could not cancel must not seem to work: a caller that skipped the App fails loudly.
  if (!halt) throw new Error('the kill switch has no trading halt: open the App (src/app.ts) first')
  return halt
}

const ENGAGED: Pick<Incident, 'action' | 'status'> = { action: 'EMERGENCY_KILL_SWITCH_ENGAGED', status: 'ENGAGED' }

/** What each action does: the pause it sets (undefined: leaves it), whether it cancels or closes, its incident. */
const EFFECTS: Record<KillSwitchAction, { pause: boolean | undefined; cancel: boolean; flatten: boolean; incident: Pick<Incident, 'action' | 'status'> }> = {
  CANCEL_AND_PAUSE: { pause: true, cancel: true, flatten: false, incident: ENGAGED },
  PAUSE: { pause: true, cancel: false, flatten: false, incident: ENGAGED },
  CANCEL_ORDERS: { pause: undefined, cancel: true, flatten: false, incident: { action: 'PENDING_ORDERS_CANCELED', status: 'RECORDED' } },
  FLATTEN: { pause: true, cancel: true, flatten: true, incident: ENGAGED },
  RESUME: { pause: false, cancel: false, flatten: false, incident: { action: 'TRADING_RESUMED', status: 'RESOLVED' } },
}

const setFleetPause = query('UPDATE risk_profiles SET trading_paused = ?, updated_at = ? WHERE tenant_id = ?')
const pauseModel = query('INSERT INTO paused_models (tenant_id, model_id) VALUES (?, ?) ON CONFLICT DO NOTHING')
const resumeModel = query('DELETE FROM paused_models WHERE tenant_id = ? AND model_id = ?')
const resumeEveryModel = query('DELETE FROM paused_models WHERE tenant_id = ?')

/** Checks a request before any write: a pause that contradicts its action, or an unknown model, is 400. */
async function checkKillSwitchRequest(db: Queries, request: KillSwitchRequest): Promise<void> {
  const implied = EFFECTS[request.action].pause ?? false
  if (request.pause !== undefined && request.pause !== implied) {
    throw validationError('pause', `${request.action} means pause ${implied}; leave pause out or send ${implied}`)
  }
  if (request.reset_breakers !== undefined && request.action !== 'RESUME') throw validationError('reset_breakers', 'is only for RESUME')
  const model = request.model_id
  if (model !== undefined && model !== 'all' && !(await findModel(db, model))) {
    throw validationError('model_id', `unknown model ${JSON.stringify(model)}; use a model id from GET /api/v1/models, or all`)
  }
}

/**
 * Operates the kill switch for one tenant. `model_id` absent or "all" is the whole fleet: a fleet
 * RESUME also lifts every model's pause. Engaging an engaged switch cancels what is pending and
 * records another incident. `trading_paused` in the result is the state after the operation for
 * the scope: for a model, true while the fleet or that model is paused. Runs in a savepoint of `tx`.
 */
export async function operateKillSwitch(
  tx: Tx,
  tenantId: string,
  request: KillSwitchRequest,
  actor: string,
  now: Date,
  cause?: AutomaticCause,
): Promise<KillSwitchResult> {
  await checkKillSwitchRequest(tx, request)
  const scope = request.model_id === undefined || request.model_id === 'all' ? null : request.model_id
  const effects = EFFECTS[request.action]
  const trading = tradingHalt()
  return await tx.savepoint(async () => {
    // First: the orders being placed on other nodes commit before it counts, and none starts until it commits.
    await holdTenant(tx, tenantId, 'update')
    if (!(await findPauseState(tx, tenantId, scope))) throw new DomainError('not_found', 'risk profile not found')
    const at = now.toISOString()
    const resumed = request.action === 'RESUME' && scope === null ? await resumeCheck(tx, tenantId, request.reset_breakers === true, now) : undefined
    if (effects.pause !== undefined) {
      if (scope === null) {
        await tx.run(setFleetPause, [effects.pause ? 1 : 0, at, tenantId])
        if (!effects.pause) await tx.run(resumeEveryModel, [tenantId])
      } else if (effects.pause) {
        await tx.run(pauseModel, [tenantId, scope])
      } else {
        await tx.run(resumeModel, [tenantId, scope])
      }
    }
    // The incident comes first so that its id can mark the orders it cancels; it states the counts,
    // read in this same transaction.
    const toCancel = effects.cancel ? await trading.pendingOrderCount(tx, tenantId, scope) : 0
    const flatten = effects.flatten ? await trading.flattenPlan(tx, tenantId, scope) : { closable: [], unpriced: [], live: 0 }
    const summary: string[] = [request.action]
    if (effects.cancel) summary.push(`${toCancel} pending order${toCancel === 1 ? '' : 's'} canceled`)
    if (effects.flatten) {
      const paper = flatten.closable.length - flatten.live
      summary.push(`${paper} open trade${paper === 1 ? '' : 's'} closed`)
      if (flatten.live) summary.push(`${flatten.live} LIVE trade${flatten.live === 1 ? '' : 's'} sold at market on the venue`)
    }
    if (flatten.unpriced.length)
      summary.push(`${flatten.unpriced.length} left open with no known price or no venue (${[...new Set(flatten.unpriced)].join(', ')})`)
    if (resumed) summary.push(resumed)
    const incident = await appendIncident(tx, {
      tenantId,
      actor,
      now,
      modelId: scope ?? 'all',
      ...(cause ? { action: cause.action, status: 'ENGAGED' as const } : effects.incident),
      reason: (cause ? `${cause.reason}; ` : '') + summary.join(', ') + (request.reason ? `: ${request.reason}` : ''),
    })
    if (toCancel > 0) await trading.cancelPendingOrders(tx, tenantId, scope, incident.id, now)
    const closed = await trading.closeOpenTrades(tx, tenantId, flatten.closable, now)
    const state = (await findPauseState(tx, tenantId, scope))!
    const result: KillSwitchResult = {
      status: request.action === 'RESUME' ? 'RESUMED' : 'TRIGGERED',
      trading_paused: state.fleet || state.model,
      model_id: scope ?? 'all',
      canceled_orders: toCancel,
      success: true,
      incident_id: incident.id,
    }
    await recordEvent(
      tx,
      tenantId,
      request.action === 'RESUME' ? 'risk.trading.resumed' : 'risk.kill_switch.engaged',
      {
        ...result,
        action: request.action,
        reason: request.reason ?? null,
        actor,
        closed_trades: closed,
        incident: incidentRef(incident),
      },
      now,
    )
    return result
  })
}

export const killSwitchRequestSchema = {
  type: 'object',
  required: ['action', 'pause'],
  additionalProperties: false,
  properties: {
    action: {
      type: 'string',
      enum: KILL_SWITCH_ACTIONS,
      description:
        'CANCEL_AND_PAUSE, PAUSE (orders kept), CANCEL_ORDERS (pause state kept), FLATTEN (cancel, pause, close open trades at the last price), RESUME',
    },
    pause: { type: 'boolean', description: 'must agree with the action: true for CANCEL_AND_PAUSE, PAUSE, FLATTEN; false for CANCEL_ORDERS, RESUME' },
    model_id: { type: 'string', maxLength: 64, pattern: MODEL_ID_PATTERN, description: 'one model, or all (the default) for the whole fleet' },
    reason: { type: 'string', maxLength: 500, description: 'recorded in the incident' },
    reset_breakers: {
      type: 'boolean',
      description: "RESUME only: resume although a loss breaker's condition still holds, re-basing peak and day-start equity to now (said in the incident)",
    },
  },
} as const satisfies Schema

export const killSwitchResultSchema = {
  type: 'object',
  required: ['status', 'trading_paused', 'model_id', 'canceled_orders', 'success', 'incident_id'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['TRIGGERED', 'RESUMED'] },
    trading_paused: { type: 'boolean', description: 'state after the operation, for the scope' },
    model_id: { type: 'string', description: 'all denotes the whole fleet' },
    canceled_orders: { type: 'integer', description: 'pending orders canceled' },
    success: { type: 'boolean' },
    incident_id: { type: 'string', pattern: '^inc_' },
  },
} as const satisfies Schema
