// The model portfolio (SPEC 11): from each day's actions and closes to its daily returns, equity
// curve and positions. Pure and array-based: a backtest runs it over hundreds of pairs and
// thousands of days, in one pass over days x pairs.
import { ACTION_CODE } from '../models/strategies.ts'

/** Action codes, one byte per pair and day, models' own; NO_SIGNAL: no signal with that as_of (like HOLD). */
export const NO_SIGNAL = 0
export const ENTER = ACTION_CODE.ENTER_LONG
export const HOLD = ACTION_CODE.HOLD
export const EXIT = ACTION_CODE.EXIT_LONG

export interface SimulationInput {
  /** Every calendar day from the first as_of to the last day, ascending, contiguous. */
  dates: string[]
  /** The model's universe; weights are 1/N of it even if a pair never trades. */
  pairs: string[]
  /** Per pair, aligned with dates; NaN where the pair has no candle that day. */
  close: Float64Array[]
  /** Per pair, aligned with dates: the action code of the signal with as_of = that date. */
  actions: Uint8Array[]
  feeBps: number
  slippageBps: number
}

export interface EquityPoint {
  date: string
  equity: number
  drawdown: number
  benchmark: number
}

export interface Position {
  pair: string
  entry_date: string
  entry_price: number
  exit_date: string | null
  exit_price: number | null
  /** exit / entry - 1 less the friction of both trades; null while open. */
  return: number | null
}

export interface Simulation {
  /** One point per date, equity 1 at the first close. */
  equity: EquityPoint[]
  /** The n = dates - 1 daily returns (close to close), net of friction. */
  returns: number[]
  benchmarkReturns: number[]
  /** In the order they opened (by date, then universe order). */
  positions: Position[]
  /** Share of the n return days on which anything was held (0 with no return day). */
  exposure: number
  /** Total traded over the window (buys + sells, a multiple of equity), not annualised. */
  turnover: number
}

/**
 * Runs the portfolio. Holding after the signal with as_of D: ENTER held, EXIT flat, HOLD or no
 * signal unchanged, starting flat; a pair with no close yet cannot be held (there is no price).
 * Weight 1/N per held pair, rebalanced at each close; the rebalance at the close of D is charged in
 * r(D+1). A missing close carries the last one (the pair's return that day is 0).
 */
export function simulate(input: SimulationInput): Simulation {
  const { dates, pairs, close, actions } = input
  const days = dates.length
  const n = pairs.length
  const cost = (input.feeBps + input.slippageBps) / 10_000
  const w = 1 / n

  const wanted = new Uint8Array(n) // the latest action says long
  const held = new Uint8Array(n)
  const last = new Float64Array(n).fill(Number.NaN) // carried close
  const weight = new Float64Array(n) // weights after the last rebalance
  const benchBase = new Float64Array(n).fill(Number.NaN)
  const open: (Position | undefined)[] = new Array(n)
  const moved = new Float64Array(n) // today's weights, drifted by today's returns (of yesterday's equity)

  const equity: EquityPoint[] = []
  const returns: number[] = []
  const benchmarkReturns: number[] = []
  const positions: Position[] = []
  let value = 1
  let peak = 1
  let bench = 1
  let benchCount = 0
  let pendingTraded = 0 // what the previous close's rebalance traded, charged today
  let exposed = 0
  let traded = 0

  for (let t = 0; t < days; t++) {
    // The day's moves: returns of the pairs held since yesterday's close, and the drift they cause.
    let gross = 0
    let heldYesterday = false
    let benchSum = 0
    for (let p = 0; p < n; p++) {
      const c = close[p][t]
      const before = last[p]
      const ret = Number.isNaN(c) || Number.isNaN(before) ? 0 : c / before - 1
      if (held[p]) {
        heldYesterday = true
        gross += ret * weight[p]
      }
      moved[p] = weight[p] * (1 + ret)
      if (!Number.isNaN(c)) last[p] = c
      if (t === 0 && !Number.isNaN(c)) {
        benchBase[p] = c
        benchCount++
      }
      if (!Number.isNaN(benchBase[p])) benchSum += last[p] / benchBase[p]
    }
    if (t > 0) {
      const r = gross - pendingTraded * cost
      value *= 1 + r
      returns.push(r)
      const benchNow = benchCount > 0 ? benchSum / benchCount : 1
      benchmarkReturns.push(benchNow / bench - 1)
      bench = benchNow
      if (heldYesterday) exposed++
      // Only rebalances charged inside the window count: the last close's trades fall after it.
      traded += pendingTraded
    }
    peak = Math.max(peak, value)
    equity.push({ date: dates[t], equity: value, drawdown: value / peak - 1, benchmark: bench })

    // The rebalance at this close: drifted weights (cash earns 0) to 1/N of every held pair.
    let turnover = 0
    for (let p = 0; p < n; p++) {
      const a = actions[p][t]
      if (a === ENTER) wanted[p] = 1
      else if (a === EXIT) wanted[p] = 0
      const now = wanted[p] && !Number.isNaN(last[p]) ? 1 : 0
      if (now && !held[p]) {
        const position: Position = { pair: pairs[p], entry_date: dates[t], entry_price: last[p], exit_date: null, exit_price: null, return: null }
        open[p] = position
        positions.push(position)
      } else if (!now && held[p]) {
        const position = open[p]!
        position.exit_date = dates[t]
        position.exit_price = last[p]
        position.return = last[p] / position.entry_price - 1 - 2 * cost
        open[p] = undefined
      }
      held[p] = now
      const drifted = gross > -1 ? moved[p] / (1 + gross) : 0
      const target = now ? w : 0
      turnover += Math.abs(target - drifted)
      weight[p] = target
    }
    pendingTraded = turnover
  }
  return { equity, returns, benchmarkReturns, positions, exposure: returns.length ? exposed / returns.length : 0, turnover: traded }
}
