// A model's forward track record: its portfolio over the signals it published (table signals:
// model_id, pair, action, as_of) and the closes of its pairs (table prices: pair, date, close).
// Read by SQL, not through signals/, which sits above this layer.
import { query, type Queries } from '../store/store.ts'
import { addDays } from '../shared/dates.ts'
import { notFound } from '../shared/errors.ts'
import { findModel } from '../models/catalogue.ts'
import { ACTION_CODE, type Action } from '../models/strategies.ts'
import { simulate, type EquityPoint, type Position } from './portfolio.ts'
import { performanceMetrics, type Metrics } from './metrics.ts'

/** The friction SPEC 11 charges: the default risk profile's (sql/001 risk_profiles). */
export const DEFAULT_FEE_BPS = 10
export const DEFAULT_SLIPPAGE_BPS = 5

export interface Performance {
  model_id: string
  /** The first and last day of the curve; without a curve, the window asked for (null: not given). */
  from: string | null
  to: string | null
  metrics: Metrics
  equity: EquityPoint[]
  positions: Position[]
}

interface SignalRow {
  pair: string
  action: Action
  as_of: string
}
interface CloseRow {
  pair: string
  date: string
  close: number
}

const firstSignal = query<[string], { as_of: string | null }>('SELECT MIN(as_of) AS as_of FROM signals WHERE model_id = ?')
const windowSignals = query<[string, string, string], SignalRow>(
  'SELECT pair, action, as_of FROM signals WHERE model_id = ? AND as_of >= ? AND as_of <= ? ORDER BY as_of, pair',
)
// One MAX per pair walks the primary key's end instead of scanning every candle of the universe.
// The pairs arrive as one JSON array: SQLite's json_each, PostgreSQL's json_array_elements_text.
const lastClose = query<[string], { date: string | null }>({
  sqlite: 'SELECT MAX((SELECT MAX(date) FROM prices WHERE pair = u.value)) AS date FROM json_each(?) u',
  postgres: 'SELECT MAX((SELECT MAX(date) FROM prices WHERE pair = u.value)) AS date FROM json_array_elements_text(?::json) u(value)',
})
const windowCloses = query<[string, string, string], CloseRow>({
  sqlite: 'SELECT pair, date, close FROM prices WHERE pair IN (SELECT value FROM json_each(?)) AND date >= ? AND date <= ?',
  postgres: 'SELECT pair, date, close FROM prices WHERE pair IN (SELECT json_array_elements_text(?::json)) AND date >= ? AND date <= ?',
})

const dayIndex = (from: string, date: string) => Math.round((Date.parse(`${date}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000)

/**
 * The forward performance of a model from its published signals with as_of in [from, to] (from:
 * its first signal; to: the last close of its universe). The curve runs from the first of those
 * signals to the last close within `to`; a model with no signal there has an empty curve and null
 * metrics. Throws not_found for a model that is not in the catalogue.
 */
export async function forwardPerformance(db: Queries, modelId: string, from?: string, to?: string): Promise<Performance> {
  const model = await findModel(db, modelId)
  if (!model) throw notFound(`model ${modelId}`)
  const pairs = model.pairs
  const universe = JSON.stringify(pairs)
  const lastDay = (await db.get(lastClose, [universe]))?.date ?? null
  const windowFrom = from ?? (await db.get(firstSignal, [modelId]))?.as_of ?? null
  const windowTo = to ?? lastDay
  const signals = windowFrom && windowTo ? await db.all(windowSignals, [modelId, windowFrom, windowTo]) : []
  const start = signals[0]?.as_of
  const end = lastDay && windowTo && lastDay < windowTo ? lastDay : windowTo
  if (!start || !end || end < start) return empty(modelId, from ?? null, to ?? null)

  const days = dayIndex(start, end) + 1
  const dates = Array.from({ length: days }, (_, i) => addDays(start, i))
  const column = new Map(pairs.map((pair, i) => [pair, i]))
  const close = pairs.map(() => new Float64Array(days).fill(Number.NaN))
  const actions = pairs.map(() => new Uint8Array(days))
  for (const row of await db.all(windowCloses, [universe, start, end])) close[column.get(row.pair)!][dayIndex(start, row.date)] = row.close
  for (const s of signals) {
    const p = column.get(s.pair)
    // A signal of a pair the universe no longer names has no weight to hold.
    if (p !== undefined && s.as_of <= end) actions[p][dayIndex(start, s.as_of)] = ACTION_CODE[s.action]
  }
  const sim = simulate({ dates, pairs, close, actions, feeBps: DEFAULT_FEE_BPS, slippageBps: DEFAULT_SLIPPAGE_BPS })
  return { model_id: modelId, from: start, to: end, metrics: performanceMetrics(sim, dates), equity: sim.equity, positions: sim.positions }
}

function empty(modelId: string, from: string | null, to: string | null): Performance {
  const sim = simulate({ dates: [], pairs: [], close: [], actions: [], feeBps: 0, slippageBps: 0 })
  return { model_id: modelId, from, to, metrics: performanceMetrics(sim, []), equity: [], positions: [] }
}
