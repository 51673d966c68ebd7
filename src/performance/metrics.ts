// The metrics of a simulated portfolio (SPEC 11), as quantstats defines them with 365 periods a
// year and rf = 0. A figure that is undefined (too few returns, no deviation, no loss) is null,
// never NaN or Infinity, so every answer is valid JSON.
import type { Schema } from '../http/schema.ts'
import type { Position, Simulation } from './portfolio.ts'

const PERIODS = 365

export interface CurveMetrics {
  total_return: number | null
  cagr: number | null
  volatility: number | null
  sharpe: number | null
  sortino: number | null
  max_drawdown: number | null
  max_drawdown_days: number | null
  calmar: number | null
}

export interface Metrics extends CurveMetrics {
  win_rate: number | null
  profit_factor: number | null
  average_win: number | null
  average_loss: number | null
  exposure: number | null
  turnover: number | null
  trades: number
  days: number
  /** The equal-weight buy-and-hold of the universe over the same days. */
  benchmark: CurveMetrics
}

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null)
const dayMs = (date: string) => Date.parse(`${date}T00:00:00Z`)
const daysBetween = (from: string, to: string) => Math.round((dayMs(to) - dayMs(from)) / 86_400_000)

/**
 * Figures of one curve: `levels` has one point per date (the first 1), `returns` the n returns
 * between them. The statistics need n >= 2; max drawdown's length runs from the peak before the
 * deepest trough (the first, on a tie) to the recovery of that peak, or to the last date.
 */
function curveMetrics(levels: number[], returns: number[], dates: string[]): CurveMetrics {
  const n = returns.length
  if (n === 0) {
    return { total_return: null, cagr: null, volatility: null, sharpe: null, sortino: null, max_drawdown: null, max_drawdown_days: null, calmar: null }
  }
  let growth = 1
  let sum = 0
  let downside = 0
  for (const r of returns) {
    growth *= 1 + r
    sum += r
    downside += Math.min(r, 0) ** 2
  }
  const total = growth - 1
  const days = daysBetween(dates[0], dates[dates.length - 1])
  const cagr = days > 0 && growth >= 0 ? finite(growth ** (PERIODS / days) - 1) : null
  const mean = sum / n
  let squares = 0
  for (const r of returns) squares += (r - mean) ** 2
  const std = n >= 2 ? Math.sqrt(squares / (n - 1)) : Number.NaN
  const dd = Math.sqrt(downside / n)

  let peak = levels[0]
  let peakAt = 0
  let worst = 0
  let worstPeak = 0
  let worstTrough = 0
  for (let t = 0; t < levels.length; t++) {
    if (levels[t] >= peak) {
      peak = levels[t]
      peakAt = t
    }
    const drawdown = levels[t] / peak - 1
    if (drawdown < worst) {
      worst = drawdown
      worstPeak = peakAt
      worstTrough = t
    }
  }
  let end = levels.length - 1
  if (worst < 0) {
    for (let t = worstTrough + 1; t < levels.length; t++) {
      if (levels[t] >= levels[worstPeak]) {
        end = t
        break
      }
    }
  }
  const maxDrawdownDays = worst < 0 ? daysBetween(dates[worstPeak], dates[end]) : 0

  return {
    total_return: finite(total),
    cagr,
    volatility: n >= 2 ? finite(std * Math.sqrt(PERIODS)) : null,
    sharpe: n >= 2 && std > 0 ? finite((mean / std) * Math.sqrt(PERIODS)) : null,
    sortino: n >= 2 && dd > 0 ? finite((mean / dd) * Math.sqrt(PERIODS)) : null,
    max_drawdown: worst,
    max_drawdown_days: maxDrawdownDays,
    calmar: cagr !== null && worst < 0 ? finite(cagr / Math.abs(worst)) : null,
  }
}

/** Win rate, profit factor, average win and loss over closed positions (a return of 0 is neither). */
function positionMetrics(positions: Position[]) {
  let closed = 0
  let wins = 0
  let losses = 0
  let won = 0
  let lost = 0
  for (const p of positions) {
    if (p.return === null) continue
    closed++
    if (p.return > 0) {
      wins++
      won += p.return
    } else if (p.return < 0) {
      losses++
      lost += p.return
    }
  }
  return {
    win_rate: closed > 0 ? wins / closed : null,
    profit_factor: losses > 0 ? finite(won / Math.abs(lost)) : null,
    average_win: wins > 0 ? won / wins : null,
    average_loss: losses > 0 ? lost / losses : null,
  }
}

/** Every figure of a simulation over `dates` (the simulation's own dates). */
export function performanceMetrics(sim: Simulation, dates: string[]): Metrics {
  const n = sim.returns.length
  const days = dates.length > 1 ? daysBetween(dates[0], dates[dates.length - 1]) : 0
  return {
    ...curveMetrics(
      sim.equity.map((p) => p.equity),
      sim.returns,
      dates,
    ),
    ...positionMetrics(sim.positions),
    exposure: n > 0 ? sim.exposure : null,
    turnover: days > 0 ? finite((sim.turnover * PERIODS) / days) : null,
    trades: sim.positions.length,
    days,
    benchmark: curveMetrics(
      sim.equity.map((p) => p.benchmark),
      sim.benchmarkReturns,
      dates,
    ),
  }
}

const figure = (description: string) => ({ type: 'number', nullable: true, description }) as const

const curveProperties = {
  total_return: figure('prod(1 + r) - 1'),
  cagr: figure('(1 + total_return)^(365 / days) - 1'),
  volatility: figure('std(r, ddof 1) x sqrt(365)'),
  sharpe: figure('mean(r) / std(r, ddof 1) x sqrt(365), rf 0'),
  sortino: figure('mean(r) / sqrt(sum(min(r, 0)^2) / n) x sqrt(365)'),
  max_drawdown: figure('min(E_t / max(E_1..E_t) - 1), 0 or below'),
  max_drawdown_days: { type: 'integer', nullable: true, description: 'calendar days from its peak to recovery or the last date' },
  calmar: figure('cagr / |max_drawdown|'),
} as const satisfies Record<string, Schema>
const curveNames = Object.keys(curveProperties) as (keyof typeof curveProperties)[]

export const metricsSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...curveNames, 'win_rate', 'profit_factor', 'average_win', 'average_loss', 'exposure', 'turnover', 'trades', 'days', 'benchmark'],
  properties: {
    ...curveProperties,
    win_rate: figure('share of closed positions with a positive return'),
    profit_factor: figure('sum of winning returns / |sum of losing returns| over closed positions'),
    average_win: figure('mean return of winning closed positions'),
    average_loss: figure('mean return of losing closed positions (negative)'),
    exposure: figure('share of days with any position'),
    turnover: figure('buys + sells as a multiple of equity, x 365 / days'),
    trades: { type: 'integer', description: 'positions opened' },
    days: { type: 'integer', description: 'calendar days from the first to the last point' },
    benchmark: {
      type: 'object',
      additionalProperties: false,
      required: curveNames,
      properties: curveProperties,
      description: 'equal-weight buy-and-hold of the universe from the first close, no friction',
    },
  },
} as const satisfies Schema

export const equityPointSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['date', 'equity', 'drawdown', 'benchmark'],
  properties: {
    date: { type: 'string', format: 'date' },
    equity: { type: 'number', description: '1 at the first close' },
    drawdown: { type: 'number', description: 'equity / its running peak - 1' },
    benchmark: { type: 'number', description: 'the buy-and-hold benchmark, 1 at the first close' },
  },
} as const satisfies Schema

export const positionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['pair', 'entry_date', 'entry_price', 'exit_date', 'exit_price', 'return'],
  properties: {
    pair: { type: 'string', pattern: '^[A-Z0-9]+/[A-Z0-9]+$' },
    entry_date: { type: 'string', format: 'date' },
    entry_price: { type: 'number' },
    exit_date: { type: 'string', format: 'date', nullable: true },
    exit_price: { type: 'number', nullable: true },
    return: { type: 'number', nullable: true, description: 'exit / entry - 1 - 2 x (fee + slippage) / 10,000; null while open' },
  },
} as const satisfies Schema
