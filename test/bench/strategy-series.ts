// One-pass strategies: each built-in rule's `actions` over 500 pairs x 2,000 daily candles (the
// demo's synthetic walks) against the old way, the per-window decide called at every index on a
// slice of candlesNeeded candles (what a backtest would do with decide alone), both in the same run.
// Medians of --reps runs each (and the best, for a shared machine); the two must give the same
// action at every index.
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/strategy-series.ts [--reps 5] [--pairs 500] [--candles 2000]
import { ema, highest, lowest, zScore } from '../../src/models/indicators.ts'
import { ACTION_CODE, STRATEGIES, type Action, type Parameters, type Window } from '../../src/models/strategies.ts'
import { addDays } from '../../src/shared/dates.ts'
import { syntheticCandles } from '../../src/signals/synthetic-prices.ts'

const flag = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}
const REPS = flag('reps', 5)
const PAIRS = flag('pairs', 500)
const CANDLES = flag('candles', 2000)

// The seeded models' parameters (test/models/strategies.test.ts).
const CASES: { strategy: string; parameters: Parameters; perWindow: (w: Window, p: Parameters) => Action }[] = [
  {
    strategy: 'ema_cross',
    parameters: { fast_ema: 20, slow_ema: 50, band_pct: 0.5 },
    perWindow: (w, p) => {
      const fast = ema(w.close, p.fast_ema)
      const slow = ema(w.close, p.slow_ema)
      return fast > slow * (1 + p.band_pct / 100) ? 'ENTER_LONG' : fast < slow * (1 - p.band_pct / 100) ? 'EXIT_LONG' : 'HOLD'
    },
  },
  {
    strategy: 'zscore_reversion',
    parameters: { lookback: 20, entry_z: -1.5, exit_z: 0 },
    perWindow: (w, p) => {
      const z = zScore(w.close)
      return z <= p.entry_z ? 'ENTER_LONG' : z >= p.exit_z ? 'EXIT_LONG' : 'HOLD'
    },
  },
  {
    strategy: 'donchian_breakout',
    parameters: { entry_lookback: 20, exit_lookback: 10 },
    perWindow: (w, p) => {
      const last = w.close.length - 1
      const upper = highest(w.high.slice(last - p.entry_lookback, last))
      const lower = lowest(w.low.slice(last - p.exit_lookback, last))
      return w.close[last] > upper ? 'ENTER_LONG' : w.close[last] < lower ? 'EXIT_LONG' : 'HOLD'
    },
  },
]

const KNOWN = ['BTC/USDT', 'ETH/USDT', 'SOL/USDT', 'XRP/USDT', 'DOGE/USDT', 'LINK/USDT']
const origin = '2020-01-01'
const last = addDays(origin, CANDLES - 1)
const windows: Window[] = Array.from({ length: PAIRS }, (_, i) => {
  const pair = i < KNOWN.length ? KNOWN[i] : `P${String(i).padStart(3, '0')}/USDT`
  const candles = syntheticCandles(pair, 42, origin, last, origin)
  return { close: candles.map((c) => c.close), high: candles.map((c) => c.high), low: candles.map((c) => c.low) }
})

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const shown = (xs: number[]) => `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}) ms`
function time(run: () => void): number {
  const start = process.hrtime.bigint()
  run()
  return Number(process.hrtime.bigint() - start) / 1e6
}

console.log(`${PAIRS} pairs x ${CANDLES} candles, median of ${REPS}, node ${process.version}`)
console.log('strategy             windows  per-window decide, median (best)  actions, one pass  speed-up  same actions')
for (const c of CASES) {
  const strategy = STRATEGIES[c.strategy]
  const needed = strategy.candlesNeeded(c.parameters)
  const series: Uint8Array[] = []
  const direct: Uint8Array[] = []
  const seriesMs: number[] = []
  const directMs: number[] = []
  for (let rep = 0; rep < REPS; rep++) {
    // Alternate which goes first, so warm-up and load drift do not all land on one side.
    const bars = strategy.reads === 'bars'
    const runSeries = () => {
      for (let i = 0; i < PAIRS; i++) series[i] = strategy.actions(windows[i], c.parameters)
    }
    const runDirect = () => {
      for (let i = 0; i < PAIRS; i++) {
        const w = windows[i]
        const out = new Uint8Array(w.close.length)
        for (let end = needed; end <= w.close.length; end++) {
          const slice = {
            close: w.close.slice(end - needed, end),
            high: bars ? w.high.slice(end - needed, end) : [],
            low: bars ? w.low.slice(end - needed, end) : [],
          }
          out[end - 1] = ACTION_CODE[c.perWindow(slice, c.parameters)]
        }
        direct[i] = out
      }
    }
    // Alternate which goes first, so warm-up and load drift do not all land on one side.
    const runs = [() => seriesMs.push(time(runSeries)), () => directMs.push(time(runDirect))]
    if (rep % 2 === 0) runs.reverse()
    for (const run of runs) run()
  }
  let same = 0
  let total = 0
  for (let i = 0; i < PAIRS; i++) {
    for (let j = 0; j < CANDLES; j++) {
      total++
      if (series[i][j] === direct[i][j]) same++
    }
  }
  const [d, s] = [median(directMs), median(seriesMs)]
  const row = [
    c.strategy.padEnd(18),
    String(PAIRS * (CANDLES - needed + 1)).padStart(9),
    shown(directMs).padStart(34),
    shown(seriesMs).padStart(18),
    `${(d / s).toFixed(0)}x`.padStart(9),
    `${same === total ? 'yes' : `NO: ${total - same} differ`}`.padStart(13),
  ]
  console.log(row.join(' '))
}
