// GET /api/v1/risk/equity and its daily history (SPEC 9): what the breakers see, read without
// writing (a GET opens no transaction): a new UTC day shows its day start as the equity now, as the
// next evaluation will record it.
import type { FromSchema } from 'json-schema-to-ts'
import { defineRoute, type RouteSpec } from '../http/route.ts'
import type { Schema } from '../http/schema.ts'
import type { Queries } from '../store/store.ts'
import { validationError } from '../shared/errors.ts'
import { riskRead } from './routes.ts'
import { equityNow, findEquityState, listEquityHistory, stateAfter } from './equity.ts'
import { WARNING_SHARE, findBreakerLimits, lossReadings, ordersInLastMinute, trippedBreakers } from './breakers.ts'
import { STALE_MARK_SECONDS, staleMarks } from './marks.ts'

const BREAKER_NAMES = ['max_daily_loss_usd', 'max_drawdown_pct', 'max_consecutive_losses', 'max_orders_per_minute'] as const

const breakerSchema = {
  type: 'object',
  required: ['name', 'limit', 'value', 'utilization_pct', 'state'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', enum: BREAKER_NAMES },
    limit: { type: 'number' },
    value: { type: 'number', description: 'daily loss USD, drawdown %, losses in a row, or orders in the last 60 s' },
    utilization_pct: { type: 'number', description: 'value / limit * 100' },
    state: { type: 'string', enum: ['OK', 'WARNING', 'TRIPPED'], description: 'TRIPPED from the trip until a fleet RESUME; WARNING from 80%' },
  },
} as const satisfies Schema

const staleMarkSchema = {
  type: 'object',
  required: ['pair', 'age_seconds', 'marked_at'],
  additionalProperties: false,
  properties: {
    pair: { type: 'string' },
    age_seconds: { type: 'integer', description: 'seconds since the venue mark was read' },
    marked_at: { type: 'string', format: 'date-time', description: 'when it was read' },
  },
} as const satisfies Schema

export const equitySchema = {
  type: 'object',
  required: [
    'equity_usd',
    'capital_usd',
    'realized_pnl_usd',
    'unrealized_pnl_usd',
    'exposure_usd',
    'day_start_equity_usd',
    'daily_pnl_usd',
    'peak_equity_usd',
    'drawdown_pct',
    'as_of',
    'breakers',
    'stale_marks',
  ],
  additionalProperties: false,
  properties: {
    equity_usd: { type: 'number', description: 'capital + realized + unrealized' },
    capital_usd: { type: 'number' },
    realized_pnl_usd: { type: 'number', description: 'net PnL of closed trades (fees and slippage deducted)' },
    unrealized_pnl_usd: {
      type: 'number',
      description: "open trades at their mark (PAPER: the newest close of the pair; LIVE: the venue's last price, see stale_marks), net of the friction paid",
    },
    exposure_usd: { type: 'number', description: 'market value of open trades at those marks' },
    day_start_equity_usd: { type: 'number' },
    daily_pnl_usd: { type: 'number', description: 'equity - day start equity' },
    peak_equity_usd: { type: 'number', description: 'since the last breaker reset' },
    drawdown_pct: { type: 'number' },
    as_of: { type: 'string', format: 'date-time' },
    breakers: { type: 'array', items: breakerSchema, description: 'the breakers that are on' },
    stale_marks: {
      type: 'array',
      items: staleMarkSchema,
      description: `the LIVE positions valued at a venue mark older than ${STALE_MARK_SECONDS} s (the venue's last price could not be read since): the equity above and the breakers use these old prices, and /health shows the venue degraded; empty when every mark is fresh`,
    },
  },
} as const satisfies Schema

export type EquityView = FromSchema<typeof equitySchema>

const pointSchema = {
  type: 'object',
  required: ['date', 'equity_usd', 'pnl_usd', 'drawdown_pct', 'exposure_usd'],
  additionalProperties: false,
  properties: {
    date: { type: 'string', format: 'date' },
    equity_usd: { type: 'number', description: "at the day's end" },
    pnl_usd: { type: 'number', description: "change from the previous day's point (from capital for the first)" },
    drawdown_pct: { type: 'number', description: 'from the highest point so far' },
    exposure_usd: { type: 'number' },
  },
} as const satisfies Schema

/** The tenant's equity and breakers as of now. */
export async function equityView(db: Queries, tenantId: string, now: Date): Promise<EquityView> {
  const equity = await equityNow(db, tenantId)
  const state = stateAfter(await findEquityState(db, tenantId), equity.equity, now)
  const limits = await findBreakerLimits(db, tenantId)
  const tripped = await trippedBreakers(db, tenantId)
  const readings = limits ? (await lossReadings(db, tenantId, limits, equity, state, now)).map(({ name, limit, value }) => ({ name, limit, value })) : []
  if (limits?.max_orders_per_minute)
    readings.push({ name: 'max_orders_per_minute', limit: limits.max_orders_per_minute, value: await ordersInLastMinute(db, tenantId, now) })
  return {
    equity_usd: equity.equity,
    capital_usd: equity.capital,
    realized_pnl_usd: equity.realized,
    unrealized_pnl_usd: equity.unrealized,
    exposure_usd: equity.exposure,
    day_start_equity_usd: state.day_start_equity,
    daily_pnl_usd: equity.equity - state.day_start_equity,
    peak_equity_usd: state.peak_equity,
    drawdown_pct: state.peak_equity > 0 ? Math.max(0, ((state.peak_equity - equity.equity) / state.peak_equity) * 100) : 0,
    as_of: now.toISOString(),
    breakers: readings.map((r) => ({
      ...r,
      utilization_pct: (r.value / r.limit) * 100,
      state: tripped.has(r.name) ? 'TRIPPED' : r.value >= r.limit * WARNING_SHARE ? 'WARNING' : 'OK',
    })),
    stale_marks: await staleMarks(db, tenantId, now),
  }
}

const getEquity = defineRoute({
  method: 'GET',
  path: '/api/v1/risk/equity',
  summary: "The tenant's equity, PnL, drawdown and each breaker's utilization",
  tag: 'risk',
  access: riskRead,
  response: equitySchema,
  handler: (ctx) => equityView(ctx.db, ctx.principal.tenantId, ctx.now),
})

const getEquityHistory = defineRoute({
  method: 'GET',
  path: '/api/v1/risk/equity/history',
  summary: 'One equity point per UTC day, written at the day end, oldest first',
  tag: 'risk',
  access: riskRead,
  errors: ['validation_failed'],
  query: {
    from: { type: 'string', format: 'date', description: 'first day, inclusive (default: the first point)' },
    to: { type: 'string', format: 'date', description: 'last day, inclusive (default: the last point)' },
  },
  response: { type: 'array', items: pointSchema },
  handler: (ctx) => {
    const from = ctx.query.from ?? '0000-01-01'
    const to = ctx.query.to ?? '9999-12-31'
    if (from > to) throw validationError('from', `must not be after to (${from} > ${to})`)
    return listEquityHistory(ctx.db, ctx.principal.tenantId, from, to)
  },
})

/** This feature's routes, in the order the router tries them. */
export const equityRoutes: RouteSpec[] = [getEquity, getEquityHistory]
