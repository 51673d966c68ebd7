// The circuit breakers (SPEC 9). A loss breaker (max_daily_loss_usd, max_drawdown_pct,
// max_consecutive_losses) or the runaway trip (max_orders_per_minute) that reaches its limit pulls
// the kill switch itself, in the transaction of the change that caused it: actor
// circuit-breaker@localhost, incident CIRCUIT_BREAKER_TRIPPED whose reason carries the numbers.
// Owns breaker_trips (tenant_id, breaker, incident_id, tripped_at), the latch a fleet RESUME
// clears, and breaker_warnings (tenant_id, breaker, day), the once-a-day 80% warnings.
import { query, type Queries, type Tx } from '../store/store.ts'
import { DomainError } from '../shared/errors.ts'
import { utcDay } from '../shared/dates.ts'
import { recordEvent } from '../webhooks/events.ts'
import { findIncident, incidentRef } from './incidents.ts'
import { operateKillSwitch, type ResumeCheck } from './kill-switch.ts'
import { equityNow, findEquityState, observeEquity, rebaseEquity, stateAfter, type Equity, type EquityState } from './equity.ts'
import { staleMarks, withStaleMarks } from './marks.ts'

export const BREAKER_ACTOR = 'circuit-breaker@localhost'
export const WARNING_SHARE = 0.8

export interface BreakerLimits {
  capital_usd: number
  max_daily_loss_usd: number | null
  max_drawdown_pct: number | null
  max_consecutive_losses: number | null
  max_orders_per_minute: number | null
  breaker_action: 'CANCEL_AND_PAUSE' | 'FLATTEN'
  trading_paused: number
}

/** One breaker's reading: its limit, the value it compares, and the sentence the incident keeps. */
export interface Reading {
  name: 'max_daily_loss_usd' | 'max_drawdown_pct' | 'max_consecutive_losses' | 'max_orders_per_minute'
  limit: number
  value: number
  reason: string
}

const limitsOf = query<[string], BreakerLimits>(`SELECT capital_usd, max_daily_loss_usd, max_drawdown_pct, max_consecutive_losses,
  max_orders_per_minute, breaker_action, trading_paused FROM risk_profiles WHERE tenant_id = ?`)
const recentClosed = query<{ tenant: string; since: string; limit: number }, { id: string; net: number }>(`
  SELECT id, quantity * (exit_price - entry_price) - pnl_costs_usd AS net FROM trades
  WHERE tenant_id = @tenant AND status = 'CLOSED' AND closed_at > @since ORDER BY closed_at DESC, id DESC LIMIT @limit`)
// Kept per second by a trigger on orders (sql/009_breaker_reads.sql): at most 61 rows to sum.
const ordersSince = query<[string, string], { n: number }>('SELECT coalesce(sum(n), 0) AS n FROM order_seconds WHERE tenant_id = ? AND second >= ?')
const tripsOf = query<[string], { breaker: string }>('SELECT breaker FROM breaker_trips WHERE tenant_id = ?')
const insertTrip = query(
  'INSERT INTO breaker_trips (tenant_id, breaker, incident_id, tripped_at) VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, breaker) DO UPDATE SET incident_id = excluded.incident_id, tripped_at = excluded.tripped_at',
)
const clearTrips = query('DELETE FROM breaker_trips WHERE tenant_id = ?')
const insertWarning = query('INSERT INTO breaker_warnings (tenant_id, breaker, day) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')

export async function findBreakerLimits(db: Queries, tenantId: string): Promise<BreakerLimits | undefined> {
  return await db.get(limitsOf, [tenantId])
}

export async function trippedBreakers(db: Queries, tenantId: string): Promise<Set<string>> {
  return new Set((await db.all(tripsOf, [tenantId])).map((t) => t.breaker))
}

const usd = (n: number) => n.toFixed(2)
/** 2026-11-23 14:02:11 UTC */
export const stamp = (at: Date) => `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`

/** The loss breakers that are on, read against this equity and state. */
export async function lossReadings(
  db: Queries,
  tenantId: string,
  limits: BreakerLimits,
  equity: Pick<Equity, 'equity'>,
  state: EquityState,
  now: Date,
): Promise<Reading[]> {
  const readings: Reading[] = []
  const at = `equity ${usd(equity.equity)} at ${stamp(now)}`
  if (limits.max_daily_loss_usd !== null) {
    const loss = Math.max(0, state.day_start_equity - equity.equity)
    readings.push({
      name: 'max_daily_loss_usd',
      limit: limits.max_daily_loss_usd,
      value: loss,
      reason: `daily loss ${usd(loss)} USD >= ${usd(limits.max_daily_loss_usd)}: ${at}, day start ${usd(state.day_start_equity)}`,
    })
  }
  if (limits.max_drawdown_pct !== null) {
    const drawdown = state.peak_equity > 0 ? Math.max(0, ((state.peak_equity - equity.equity) / state.peak_equity) * 100) : 0
    readings.push({
      name: 'max_drawdown_pct',
      limit: limits.max_drawdown_pct,
      value: drawdown,
      reason: `drawdown ${drawdown.toFixed(2)}% >= ${limits.max_drawdown_pct.toFixed(2)}%: ${at}, peak ${usd(state.peak_equity)}`,
    })
  }
  if (limits.max_consecutive_losses !== null) {
    const losses: { id: string; net: number }[] = []
    for (const trade of await db.all(recentClosed, { tenant: tenantId, since: state.losses_since, limit: limits.max_consecutive_losses })) {
      if (trade.net >= 0) break
      losses.push(trade)
    }
    losses.reverse()
    readings.push({
      name: 'max_consecutive_losses',
      limit: limits.max_consecutive_losses,
      value: losses.length,
      reason:
        `consecutive losses ${losses.length} >= ${limits.max_consecutive_losses}: trades ${losses.map((l) => l.id).join(', ') || 'none'} ` +
        `closed with net PnL ${losses.map((l) => usd(l.net)).join(', ') || '-'} USD`,
    })
  }
  return readings
}

/** Orders the tenant placed in the 60 s up to now, counted in whole seconds (the runaway breaker's value). */
export async function ordersInLastMinute(db: Queries, tenantId: string, now: Date): Promise<number> {
  return (await db.get(ordersSince, [tenantId, new Date(now.getTime() - 60_000).toISOString().slice(0, 19)]))!.n
}

/** Breakers read from equity: a decision on them is taken at the marks, which the reason names when stale. */
const ON_EQUITY = new Set<Reading['name']>(['max_daily_loss_usd', 'max_drawdown_pct'])

/** Pulls the kill switch for `reading`, in the transaction of the change that caused it; returns the incident id. */
export async function tripBreaker(
  tx: Tx,
  tenantId: string,
  limits: BreakerLimits,
  reading: Reading,
  equityUsd: number | undefined,
  now: Date,
): Promise<string> {
  const reason = ON_EQUITY.has(reading.name) ? withStaleMarks(reading.reason, await staleMarks(tx, tenantId, now)) : reading.reason
  const result = await operateKillSwitch(tx, tenantId, { action: limits.breaker_action }, BREAKER_ACTOR, now, { action: 'CIRCUIT_BREAKER_TRIPPED', reason })
  await tx.run(insertTrip, [tenantId, reading.name, result.incident_id, now.toISOString()])
  await recordEvent(
    tx,
    tenantId,
    'risk.circuit_breaker.tripped',
    {
      breaker: reading.name,
      limit: reading.limit,
      value: reading.value,
      action: limits.breaker_action,
      reason,
      equity_usd: equityUsd ?? null,
      canceled_orders: result.canceled_orders,
      incident: incidentRef((await findIncident(tx, tenantId, result.incident_id))!),
    },
    now,
  )
  return result.incident_id
}

/**
 * Reads the tenant's equity, records it (day start, peak), and trips the first loss breaker at its
 * limit, or warns once a UTC day at 80%. A paused fleet is already halted: nothing trips twice.
 * In the change's transaction; `marks` shares closes across the tenants of one pass.
 */
export async function evaluateBreakers(
  tx: Tx,
  tenantId: string,
  now: Date,
  marks?: Map<string, number | undefined>,
  limits?: BreakerLimits,
): Promise<Trip | undefined> {
  limits ??= await tx.get(limitsOf, [tenantId])
  if (!limits) return undefined
  const equity = await equityNow(tx, tenantId, marks)
  const state = await observeEquity(tx, tenantId, equity.equity, now)
  if (limits.trading_paused) return undefined
  const readings = await lossReadings(tx, tenantId, limits, equity, state, now)
  const tripped = readings.find((r) => r.value >= r.limit)
  if (tripped) return { reading: tripped, action: limits.breaker_action, incidentId: await tripBreaker(tx, tenantId, limits, tripped, equity.equity, now) }
  for (const reading of readings) {
    if (reading.value < reading.limit * WARNING_SHARE) continue
    if ((await tx.run(insertWarning, [tenantId, reading.name, utcDay(now)])).changes === 0) continue
    await recordEvent(
      tx,
      tenantId,
      'risk.limit.warning',
      {
        breaker: reading.name,
        limit: reading.limit,
        value: reading.value,
        utilization_pct: (reading.value / reading.limit) * 100,
        equity_usd: equity.equity,
        day_start_equity_usd: state.day_start_equity,
        peak_equity_usd: state.peak_equity,
      },
      now,
    )
  }
  return undefined
}

export interface Trip {
  reading: Reading
  action: BreakerLimits['breaker_action']
  incidentId: string
}

function hasLossBreaker(limits: BreakerLimits): boolean {
  return limits.max_daily_loss_usd !== null || limits.max_drawdown_pct !== null || limits.max_consecutive_losses !== null
}

/**
 * The breakers an order placement evaluates, before the order is written: the runaway trip (this
 * order would be one more than max_orders_per_minute in 60 s) and the loss breakers. Returns the
 * trip, whose kill switch is then already written; the order must not be placed. In the order's transaction.
 */
export async function tripBeforeOrder(tx: Tx, tenantId: string, now: Date): Promise<Trip | undefined> {
  const limits = await tx.get(limitsOf, [tenantId])
  if (!limits || limits.trading_paused) return undefined
  const perMinute = limits.max_orders_per_minute
  if (perMinute !== null) {
    const placed = await ordersInLastMinute(tx, tenantId, now)
    if (placed + 1 > perMinute) {
      const reading: Reading = {
        name: 'max_orders_per_minute',
        limit: perMinute,
        value: placed + 1,
        reason: `orders per minute ${placed + 1} > ${perMinute}: ${placed} orders placed in the 60 s up to ${stamp(now)} and one more asked`,
      }
      return { reading, action: limits.breaker_action, incidentId: await tripBreaker(tx, tenantId, limits, reading, undefined, now) }
    }
  }
  if (!hasLossBreaker(limits)) return undefined
  // Placing an order changes no equity: the one the last evaluation saw (every fill, import, mark
  // and profile change writes it) is the equity now, unless a new UTC day has begun since.
  const state = await findEquityState(tx, tenantId)
  if (!state || state.equity === null || state.day !== utcDay(now)) return await evaluateBreakers(tx, tenantId, now, undefined, limits)
  const reading = (await lossReadings(tx, tenantId, limits, { equity: state.equity }, state, now)).find((r) => r.value >= r.limit)
  if (!reading) return undefined
  return { reading, action: limits.breaker_action, incidentId: await tripBreaker(tx, tenantId, limits, reading, state.equity, now) }
}

/**
 * Before a fleet RESUME: 409 breaker_engaged while a loss breaker's condition holds, unless
 * reset_breakers re-bases day-start and peak equity to now (and counts losses from now). Either way
 * the latches go: the switch is being resumed by someone who looked.
 */
export const checkResume: ResumeCheck = async (tx, tenantId, resetBreakers, now) => {
  const limits = await tx.get(limitsOf, [tenantId])
  if (!limits) return undefined
  const equity = await equityNow(tx, tenantId)
  const state = stateAfter(await findEquityState(tx, tenantId), equity.equity, now)
  await tx.run(clearTrips, [tenantId])
  if (!resetBreakers) {
    const holding = (await lossReadings(tx, tenantId, limits, equity, state, now)).filter((r) => r.value >= r.limit)
    if (holding.length) {
      throw new DomainError(
        'breaker_engaged',
        `${withStaleMarks(holding.map((r) => r.reason).join('; '), await staleMarks(tx, tenantId, now))}; the condition still holds: RESUME with "reset_breakers": true re-bases peak and day-start equity to now`,
      )
    }
    return undefined
  }
  await rebaseEquity(tx, tenantId, equity.equity, now)
  return `breakers reset: day-start and peak equity re-based to ${usd(equity.equity)} USD, consecutive losses counted from ${stamp(now)}`
}
