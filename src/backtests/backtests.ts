// Backtests (SPEC 11): a model run over past candles, with its parameters or others, queued per
// tenant and run off the event loop by ./runner.ts. Table backtests (sql/014_backtests.sql): id,
// tenant_id, model_id, from_date, to_date, parameters JSON (the model's, overlaid by the request's),
// fee_bps, slippage_bps, status QUEUED|RUNNING|SUCCEEDED|FAILED, created_at, started_at,
// finished_at, result JSON {metrics, equity, trades}, actions JSON {pair: "EHX-..."} (a column of
// its own: most reads never need it), result_hash, error.
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { query, type Queries, type Tx } from '../store/store.ts'
import { newId } from '../store/ids.ts'
import { DomainError, notFound, validationError } from '../shared/errors.ts'
import { addDays, parseDate, utcDay } from '../shared/dates.ts'
import { findModel, MODEL_ID_PATTERN } from '../models/catalogue.ts'
import { STRATEGIES } from '../models/strategies.ts'
import { equityPointSchema, metricsSchema, positionSchema } from '../performance/metrics.ts'

/** Unfinished (QUEUED or RUNNING) backtests a tenant may have at once. */
export const QUEUE_LIMIT = 20
/** The longest range, in days: 27 years of daily candles, far more than any market has. */
export const MAX_DAYS = 10_000

export type BacktestRequest = FromSchema<typeof backtestRequestSchema>
export type Backtest = FromSchema<typeof backtestSchema>
export type Status = 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED'

interface Row {
  id: string
  tenant_id: string
  model_id: string
  from_date: string
  to_date: string
  parameters: string
  fee_bps: number
  slippage_bps: number
  status: Status
  created_at: string
  started_at: string | null
  finished_at: string | null
  result: string | null
  actions?: string | null
  result_hash: string | null
  error: string | null
}

/** What the runner needs of a claimed backtest. */
export interface Job {
  id: string
  tenantId: string
  modelId: string
  from: string
  to: string
  parameters: Record<string, number>
  feeBps: number
  slippageBps: number
}

/** What the worker hands back for a SUCCEEDED backtest: the stored texts, already serialised. */
export interface Outcome {
  result: string
  actions: string
  resultHash: string
}

const SUMMARY =
  'id, tenant_id, model_id, from_date, to_date, parameters, fee_bps, slippage_bps, status, created_at, started_at, finished_at, result_hash, error'
const insert = query(`INSERT INTO backtests (id, tenant_id, model_id, from_date, to_date, parameters, fee_bps, slippage_bps, status, created_at)
  VALUES (@id, @tenant_id, @model_id, @from_date, @to_date, @parameters, @fee_bps, @slippage_bps, 'QUEUED', @created_at)`)
const withResult = query<[string, string], Row>(`SELECT ${SUMMARY}, result FROM backtests WHERE id = ? AND tenant_id = ?`)
const withActions = query<[string, string], Row>(`SELECT ${SUMMARY}, result, actions FROM backtests WHERE id = ? AND tenant_id = ?`)
const page = query<[string, string, number], Row>(`SELECT ${SUMMARY}, NULL AS result FROM backtests WHERE tenant_id = ? AND id < ? ORDER BY id DESC LIMIT ?`)
const unfinished = query<[string], { n: number }>("SELECT count(*) AS n FROM backtests WHERE tenant_id = ? AND status IN ('QUEUED', 'RUNNING')")
const terms = query<[string], { fee_bps: number; slippage_bps: number }>('SELECT fee_bps, slippage_bps FROM risk_profiles WHERE tenant_id = ?')
// Tenants take turns by age of their oldest QUEUED row, and one with a backtest RUNNING waits.
const oldestRunnable = query<[], Row>(`SELECT ${SUMMARY}, NULL AS result FROM backtests q
  WHERE q.status = 'QUEUED' AND NOT EXISTS (SELECT 1 FROM backtests r WHERE r.status = 'RUNNING' AND r.tenant_id = q.tenant_id)
  ORDER BY q.id LIMIT 1`)
const setRunning = query<[string, string], { id: string }>(
  "UPDATE backtests SET status = 'RUNNING', started_at = ? WHERE id = ? AND status = 'QUEUED' RETURNING id",
)
const setSucceeded = query(`UPDATE backtests SET status = 'SUCCEEDED', finished_at = @now, result = @result, actions = @actions, result_hash = @hash
  WHERE id = @id AND status = 'RUNNING'`)
const setFailed = query<[string, string, string]>("UPDATE backtests SET status = 'FAILED', finished_at = ?, error = ? WHERE id = ? AND status = 'RUNNING'")
const setQueued = query<[], { id: string }>("UPDATE backtests SET status = 'QUEUED', started_at = NULL WHERE status = 'RUNNING' RETURNING id")

function show(row: Row, includeActions: boolean): Backtest {
  const backtest: Backtest = {
    id: row.id,
    status: row.status,
    model_id: row.model_id,
    from: row.from_date,
    to: row.to_date,
    parameters: JSON.parse(row.parameters),
    fee_bps: row.fee_bps,
    slippage_bps: row.slippage_bps,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    error: row.error,
  }
  if (row.result && row.result_hash) {
    const { metrics, equity, trades } = JSON.parse(row.result)
    Object.assign(backtest, { metrics, equity, trades, result_hash: row.result_hash })
    if (includeActions && row.actions) backtest.actions = JSON.parse(row.actions)
  }
  return backtest
}

/** One of the tenant's backtests; another tenant's id is not found, as an unknown one is. */
export async function getBacktest(db: Queries, tenantId: string, id: string, includeActions = false): Promise<Backtest> {
  const row = await db.get(includeActions ? withActions : withResult, [id, tenantId])
  if (!row) throw notFound(`backtest ${id}`)
  return show(row, includeActions)
}

/** A page of the tenant's backtests, newest first, without their results (GET one for those). */
export async function listBacktests(db: Queries, tenantId: string, before: string, limit: number): Promise<Backtest[]> {
  const rows = await db.all(page, [tenantId, before, limit])
  return rows.map((row) => show(row, false))
}

/**
 * Checks a request and queues it (see the request schema for the rules). Parameters are the
 * model's with the request's laid over them, checked by the strategy itself, so a backtest never
 * runs what the publisher would refuse.
 */
export async function queueBacktest(tx: Tx, tenantId: string, request: BacktestRequest, now: Date): Promise<Backtest> {
  const model = await findModel(tx, request.model_id)
  if (!model) throw notFound(`model ${request.model_id} (GET /api/v1/models lists them)`)
  const strategy = STRATEGIES[model.strategy]
  if (!strategy) throw new DomainError('invalid_parameters', `model ${model.id} uses strategy ${model.strategy}, which this server cannot run`)
  const today = utcDay(now)
  if (request.from > request.to) throw validationError('from', `${request.from} is after to ${request.to}`)
  if (request.to >= today) {
    throw validationError('to', `must be before today (${today} UTC): the last candle closed is ${addDays(today, -1)}`)
  }
  const days = (parseDate(request.to) as { ms: number }).ms / 86_400_000 - (parseDate(request.from) as { ms: number }).ms / 86_400_000 + 1
  if (days > MAX_DAYS) throw validationError('to', `the range is ${days} days; a backtest covers at most ${MAX_DAYS}`)
  for (const name of Object.keys(request.parameters ?? {})) {
    if (!strategy.parameters.includes(name)) {
      throw validationError(`parameters.${name}`, `is not a parameter of ${model.strategy}, which takes ${strategy.parameters.join(', ')}`)
    }
  }
  const parameters = { ...model.parameters, ...request.parameters }
  const problem = strategy.invalid(parameters)
  if (problem) throw new DomainError('invalid_parameters', `parameters ${JSON.stringify(parameters)}: ${problem}`)
  if ((await tx.get(unfinished, [tenantId]))!.n >= QUEUE_LIMIT) {
    throw new DomainError(
      'backtest_queue_full',
      `this workspace already has ${QUEUE_LIMIT} backtests queued or running, the most it may have; wait for one to finish (GET /api/v1/backtests)`,
    )
  }
  const defaults = (await tx.get(terms, [tenantId])) ?? { fee_bps: 0, slippage_bps: 0 }
  const id = newId('bt')
  await tx.run(insert, {
    id,
    tenant_id: tenantId,
    model_id: model.id,
    from_date: request.from,
    to_date: request.to,
    parameters: JSON.stringify(parameters),
    fee_bps: request.fee_bps ?? defaults.fee_bps,
    slippage_bps: request.slippage_bps ?? defaults.slippage_bps,
    created_at: now.toISOString(),
  })
  return getBacktest(tx, tenantId, id)
}

/** The oldest QUEUED backtest of a tenant with none RUNNING, marked RUNNING; undefined when none waits. */
export async function claimNext(tx: Tx, now: Date): Promise<Job | undefined> {
  const row = await tx.get(oldestRunnable)
  if (!row || !(await tx.get(setRunning, [now.toISOString(), row.id]))) return undefined
  return {
    id: row.id,
    tenantId: row.tenant_id,
    modelId: row.model_id,
    from: row.from_date,
    to: row.to_date,
    parameters: JSON.parse(row.parameters),
    feeBps: row.fee_bps,
    slippageBps: row.slippage_bps,
  }
}

export async function markSucceeded(tx: Tx, id: string, outcome: Outcome, now: Date): Promise<void> {
  await tx.run(setSucceeded, { id, now: now.toISOString(), result: outcome.result, actions: outcome.actions, hash: outcome.resultHash })
}

export async function markFailed(tx: Tx, id: string, error: string, now: Date): Promise<void> {
  await tx.run(setFailed, [now.toISOString(), error, id])
}

/** Every RUNNING backtest back to QUEUED (after a crash, or at a stop): returns their ids. */
export async function requeueRunning(tx: Tx): Promise<string[]> {
  const rows = await tx.all(setQueued)
  return rows.map((r) => r.id)
}

export const backtestRequestSchema = {
  type: 'object',
  required: ['model_id', 'from', 'to'],
  additionalProperties: false,
  properties: {
    model_id: { type: 'string', maxLength: 64, pattern: MODEL_ID_PATTERN, description: 'a model of GET /api/v1/models' },
    from: { type: 'string', format: 'date', description: 'the first day (the as_of of its first signal)' },
    to: { type: 'string', format: 'date', description: `the last day, before today (UTC); at most ${MAX_DAYS} days after from` },
    parameters: {
      type: 'object',
      properties: {},
      additionalProperties: { type: 'number' },
      description: "laid over the model's own parameters; the strategy must accept the result (422 invalid_parameters)",
    },
    fee_bps: { type: 'number', minimum: 0, maximum: 1000, description: "charged on what each rebalance trades; default: the risk profile's" },
    slippage_bps: { type: 'number', minimum: 0, maximum: 1000, description: "charged like the fee; default: the risk profile's" },
  },
} as const satisfies Schema

const timestamp = (description: string) => ({ type: 'string', format: 'date-time', nullable: true, description }) as const

export const backtestSchema = {
  type: 'object',
  required: ['id', 'status', 'model_id', 'from', 'to', 'parameters', 'fee_bps', 'slippage_bps', 'created_at', 'started_at', 'finished_at', 'error'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^bt_' },
    status: {
      type: 'string',
      enum: ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED'],
      description: 'QUEUED until its turn: one RUNNING per workspace; SUCCEEDED brings metrics, equity, trades and result_hash',
    },
    model_id: { type: 'string' },
    from: { type: 'string', format: 'date' },
    to: { type: 'string', format: 'date' },
    parameters: { type: 'object', properties: {}, additionalProperties: { type: 'number' }, description: 'what ran: the model’s, overlaid by the request’s' },
    fee_bps: { type: 'number' },
    slippage_bps: { type: 'number' },
    created_at: { type: 'string', format: 'date-time' },
    started_at: timestamp('when it last started RUNNING (a restart queues a RUNNING backtest again)'),
    finished_at: timestamp('when it SUCCEEDED or FAILED'),
    error: { type: 'string', nullable: true, description: 'why it FAILED' },
    metrics: metricsSchema,
    equity: { type: 'array', items: equityPointSchema, description: 'one point per day from from to to' },
    trades: { type: 'array', items: positionSchema, description: 'every position the model portfolio opened, in order' },
    result_hash: {
      type: 'string',
      pattern: '^[0-9a-f]{64}$',
      description:
        'sha256_hex(canonical_json({model_id, from, to, parameters, fee_bps, slippage_bps, metrics, equity, trades, actions})): same inputs and candles, same hash',
    },
    actions: {
      type: 'object',
      properties: {},
      additionalProperties: { type: 'string', pattern: '^[EHX-]*$' },
      description: 'with include=actions: per pair, one letter per day: E ENTER_LONG, H HOLD, X EXIT_LONG, - no signal',
    },
  },
} as const satisfies Schema
