// A backtest's computation, pure (no SQLite, no I/O), run in a worker thread (./worker.ts): each
// pair's actions from the strategy over its own candles, mapped onto the calendar, then the model
// portfolio, its metrics, the per-day letters and the result hash. Fed a pair at a time as the
// worker reads them, so it never holds every pair's candles at once.
import { nodeCrypto } from '../shared/crypto.ts'
import { canonicalJson } from '../shared/canonical-json.ts'
import { addDays } from '../shared/dates.ts'
import { STRATEGIES, type Strategy } from '../models/strategies.ts'
import { simulate } from '../performance/portfolio.ts'
import { performanceMetrics } from '../performance/metrics.ts'
import type { PairCandles } from './candles.ts'
import type { Outcome } from './backtests.ts'

export interface BacktestInput {
  modelId: string
  strategy: string
  pairs: string[]
  from: string
  to: string
  parameters: Record<string, number>
  feeBps: number
  slippageBps: number
}

// One byte per day: E ENTER_LONG, H HOLD, X EXIT_LONG, - no signal (code 0).
const LETTERS = Buffer.from('-EHX', 'latin1')

/**
 * Canonical JSON (RFC 8785, as src/shared/canonical-json.ts writes it) of an array of flat records
 * of one shape, at JSON.stringify's speed: its key list both orders and selects the keys, so the
 * sorted keys of the first record are the canonical form of every one. A curve and the trades are
 * thousands of records, serialised once for both the hash and the stored result.
 */
function canonicalRecords(records: readonly object[]): string {
  if (records.length === 0) return '[]'
  return JSON.stringify(records, Object.keys(records[0]).sort())
}

/** Canonical JSON of an object whose values are already canonical JSON texts. */
function canonicalObject(parts: Record<string, string>): string {
  return `{${Object.keys(parts)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${parts[key]}`)
    .join(',')}}`
}

export class BacktestComputation {
  private readonly strategy: Strategy
  private readonly dates: string[] = []
  private readonly close: Float64Array[]
  private readonly codes: Uint8Array[]
  /** Per pair, its letters, made as it arrives: less to do after the last pair. */
  private readonly letters: string[]

  constructor(private readonly input: BacktestInput) {
    const strategy = STRATEGIES[input.strategy]
    if (!strategy) throw new Error(`unknown strategy ${input.strategy}`)
    this.strategy = strategy
    for (let date = input.from; date <= input.to; date = addDays(date, 1)) this.dates.push(date)
    this.close = input.pairs.map(() => new Float64Array(this.dates.length).fill(Number.NaN))
    this.codes = input.pairs.map(() => new Uint8Array(this.dates.length))
    this.letters = input.pairs.map(() => '-'.repeat(this.dates.length))
  }

  /** The pair at `index` of the universe: its actions, each on the day of the candle it is as of. */
  addPair(index: number, candles: PairCandles): void {
    const n = candles.close.length
    if (n === 0) return
    const bars = this.strategy.reads === 'bars'
    const window = { close: Array.from(candles.close), high: bars ? Array.from(candles.high) : [], low: bars ? Array.from(candles.low) : [] }
    const actions = this.strategy.actions(window, this.input.parameters)
    const close = this.close[index]
    const codes = this.codes[index]
    for (let i = 0; i < n; i++) {
      const day = candles.day[i]
      if (day < 0) continue
      close[day] = candles.close[i]
      // The strategy's codes are the portfolio's (0 before a full window: no signal that day).
      codes[day] = actions[i]
    }
    const letters = Buffer.alloc(codes.length)
    for (let day = 0; day < codes.length; day++) letters[day] = LETTERS[codes[day]]
    this.letters[index] = letters.toString('latin1')
  }

  /** The portfolio over every pair added, and what is stored of it. */
  finish(): Outcome {
    const { input, dates } = this
    const sim = simulate({ dates, pairs: input.pairs, close: this.close, actions: this.codes, feeBps: input.feeBps, slippageBps: input.slippageBps })
    const metrics = canonicalJson(performanceMetrics(sim, dates))
    const equity = canonicalRecords(sim.equity)
    const trades = canonicalRecords(sim.positions)
    const actions = canonicalObject(Object.fromEntries(input.pairs.map((pair, p) => [pair, JSON.stringify(this.letters[p])])))
    const hashed = canonicalObject({
      model_id: canonicalJson(input.modelId),
      from: canonicalJson(input.from),
      to: canonicalJson(input.to),
      parameters: canonicalJson(input.parameters),
      fee_bps: canonicalJson(input.feeBps),
      slippage_bps: canonicalJson(input.slippageBps),
      metrics,
      equity,
      trades,
      actions,
    })
    return {
      result: canonicalObject({ metrics, equity, trades }),
      actions,
      resultHash: nodeCrypto().createHash('sha256').update(hashed).digest('hex'),
    }
  }
}
