// The model portfolio and its metrics (SPEC 11) against hand-checked values on designed series and
// against the test's own oracle (./oracle.ts) on seeded random series with gaps, to 1e-9.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { ENTER, EXIT, HOLD, NO_SIGNAL, simulate } from '../../src/performance/portfolio.ts'
import { performanceMetrics } from '../../src/performance/metrics.ts'
import { prng } from '../../src/shared/prng.ts'
import { oracle, type OracleSignal } from './oracle.ts'
import { close, sameCurve, sameMetrics, samePositions } from './compare.ts'

const test = suite('performance: portfolio and metrics')

const CODE: Record<string, number> = { ENTER_LONG: ENTER, HOLD, EXIT_LONG: EXIT }
const dayAfter = (date: string, n: number) => new Date(Date.parse(date) + n * 86_400_000).toISOString().slice(0, 10)

interface Case {
  pairs: string[]
  /** per pair, one close per day (null: no candle) */
  closes: (number | null)[][]
  /** per pair, one action per day ('' for no signal) */
  actions: string[][]
  feeBps?: number
  slippageBps?: number
  start?: string
}

/** Runs the service's simulate + performanceMetrics and the oracle on the same case. */
function run(c: Case) {
  const days = c.closes[0].length
  const dates = Array.from({ length: days }, (_, i) => dayAfter(c.start ?? '2024-02-27', i))
  const feeBps = c.feeBps ?? 0
  const slippageBps = c.slippageBps ?? 0
  const sim = simulate({
    dates,
    pairs: c.pairs,
    close: c.closes.map((row) => Float64Array.from(row, (x) => x ?? Number.NaN)),
    actions: c.actions.map((row) => Uint8Array.from(row, (a) => (a ? CODE[a] : NO_SIGNAL))),
    feeBps,
    slippageBps,
  })
  const closes = new Map(c.pairs.map((pair, p) => [pair, new Map(dates.flatMap((d, t) => (c.closes[p][t] === null ? [] : [[d, c.closes[p][t]!]])))]))
  const signals: OracleSignal[] = c.pairs.flatMap((pair, p) => dates.flatMap((as_of, t) => (c.actions[p][t] ? [{ pair, as_of, action: c.actions[p][t] }] : [])))
  return { sim, metrics: performanceMetrics(sim, dates), expected: oracle({ dates, pairs: c.pairs, closes, signals, feeBps, slippageBps }) }
}

function agrees(r: ReturnType<typeof run>): void {
  sameCurve(r.sim.equity, r.expected.curve)
  samePositions(r.sim.positions, r.expected.positions)
  sameMetrics(r.metrics, r.expected.metrics)
  r.expected.returns.forEach((x, i) => {
    close(r.sim.returns[i], x, `returns[${i}]`)
  })
  r.expected.benchReturns.forEach((x, i) => {
    close(r.sim.benchmarkReturns[i], x, `benchmarkReturns[${i}]`)
  })
}

test('a pair that doubles then halves: every figure by hand', () => {
  const r = run({ pairs: ['A/USDT'], closes: [[100, 200, 100]], actions: [['ENTER_LONG', '', 'HOLD']] })
  assert.equal(r.sim.returns, [1, -0.5])
  assert.equal(
    r.sim.equity.map((p) => [p.equity, p.drawdown, p.benchmark]),
    [
      [1, 0, 1],
      [2, 0, 2],
      [1, -0.5, 1],
    ],
  )
  const m = r.metrics
  const sd = 0.75 * Math.SQRT2 // std([1, -0.5], ddof 1)
  close(m.total_return, 0, 'total')
  close(m.cagr, 0, 'cagr')
  close(m.volatility, sd * Math.sqrt(365), 'volatility')
  close(m.sharpe, (0.25 / sd) * Math.sqrt(365), 'sharpe')
  close(m.sortino, (0.25 / Math.sqrt(0.25 / 2)) * Math.sqrt(365), 'sortino')
  assert.is(m.max_drawdown, -0.5)
  assert.is(m.max_drawdown_days, 1) // from the peak (day 1) to the last date, not recovered
  assert.is(m.calmar, 0)
  assert.equal([m.win_rate, m.profit_factor, m.average_win, m.average_loss], [null, null, null, null]) // still open
  assert.equal([m.exposure, m.trades, m.days], [1, 1, 2])
  close(m.turnover, (1 * 365) / 2, 'turnover') // bought 1x equity once
  assert.equal(r.sim.positions, [{ pair: 'A/USDT', entry_date: '2024-02-27', entry_price: 100, exit_date: null, exit_price: null, return: null }])
  sameMetrics(m.benchmark, { ...m.benchmark, ...r.expected.metrics.benchmark })
  agrees(r)
})

test('friction: 1/N weights, the drift traded back at each close, charged the next day; a closed position', () => {
  const r = run({
    pairs: ['A/USDT', 'B/USDT'],
    closes: [
      [100, 110, 121, 121],
      [50, 50, 50, 50],
    ],
    actions: [
      ['ENTER_LONG', 'HOLD', 'EXIT_LONG', ''],
      ['EXIT_LONG', '', '', ''],
    ],
    feeBps: 10,
    slippageBps: 5,
  })
  const drifted = (0.5 * 1.1) / 1.05 // A's half after a 10% day while B's half sits in cash
  const expected = [0.05 - 0.5 * 0.0015, 0.05 - (drifted - 0.5) * 0.0015, -drifted * 0.0015]
  expected.forEach((x, i) => {
    close(r.sim.returns[i], x, `r${i + 1}`)
  })
  close(r.sim.turnover, 0.5 + (drifted - 0.5) + drifted, 'traded')
  assert.equal(r.sim.positions.length, 1)
  close(r.sim.positions[0].return, 1.21 - 1 - 2 * 0.0015, 'position return')
  assert.equal([r.sim.positions[0].entry_date, r.sim.positions[0].exit_date, r.sim.positions[0].exit_price], ['2024-02-27', '2024-02-29', 121])
  const m = r.metrics
  assert.equal([m.win_rate, m.profit_factor, m.average_loss, m.trades], [1, null, null, 1])
  close(m.average_win, 0.207, 'average win')
  close(m.exposure, 2 / 3, 'exposure') // held through days 1 and 2, flat on day 3
  agrees(r)
})

test('a flat series: zero volatility, null Sharpe, Sortino and Calmar, no drawdown', () => {
  const r = run({ pairs: ['A/USDT'], closes: [[100, 100, 100, 100]], actions: [['ENTER_LONG', '', '', '']] })
  const m = r.metrics
  assert.equal([m.total_return, m.cagr, m.volatility, m.sharpe, m.sortino, m.max_drawdown, m.max_drawdown_days, m.calmar], [0, 0, 0, null, null, 0, 0, null])
  agrees(r)
})

test('the drawdown episode runs from its peak to the first day back at that peak', () => {
  const r = run({ pairs: ['A/USDT'], closes: [[100, 120, 90, 100, 125, 110]], actions: [['ENTER_LONG', '', '', '', '', '']] })
  assert.is(r.metrics.max_drawdown, 90 / 120 - 1)
  assert.is(r.metrics.max_drawdown_days, 3) // day 1 (120) to day 4 (125)
  agrees(r)
  // A flat day at the peak: the episode starts at its last day there, when the fall begins.
  const flat = run({ pairs: ['A/USDT'], closes: [[100, 120, 120, 90, 125]], actions: [['ENTER_LONG', '', '', '', '']] })
  assert.is(flat.metrics.max_drawdown_days, 2)
  agrees(flat)
})

test('one point or no return: null figures, never NaN; losses give a profit factor', () => {
  const one = run({ pairs: ['A/USDT'], closes: [[100]], actions: [['ENTER_LONG']] })
  const m = one.metrics
  assert.equal([m.total_return, m.sharpe, m.volatility, m.max_drawdown, m.exposure, m.turnover, m.days], [null, null, null, null, null, null, 0])
  agrees(one)
  const losing = run({
    pairs: ['A/USDT'],
    closes: [[100, 90, 99, 110, 100, 120]],
    actions: [['ENTER_LONG', 'EXIT_LONG', 'ENTER_LONG', 'EXIT_LONG', 'ENTER_LONG', 'EXIT_LONG']],
  })
  // -10%, then +11.1%, then +20%, no friction
  close(losing.metrics.profit_factor, (110 / 99 - 1 + 0.2) / 0.1, 'profit factor')
  close(losing.metrics.win_rate, 2 / 3, 'win rate')
  close(losing.metrics.average_loss, -0.1, 'average loss')
  agrees(losing)
})

test('gaps: a missing close earns 0 and carries; a pair with no close yet is not held; the benchmark counts the pairs priced on day one', () => {
  const r = run({
    pairs: ['A/USDT', 'B/USDT', 'C/USDT'],
    closes: [
      [100, null, 120, 132],
      [null, null, 40, 44],
      [10, 11, null, 12.1],
    ],
    actions: [
      ['ENTER_LONG', '', '', ''],
      ['ENTER_LONG', '', '', ''],
      ['', '', '', ''],
    ],
  })
  close(r.sim.returns[0], 0, 'A has no close on day 1')
  close(r.sim.returns[1], 0.2 / 3, "A's 100 carried to 120; B has no price yet")
  close(r.sim.returns[2], 0.1 / 3 + 0.1 / 3, 'A rebalanced to 1/3; B entered once priced (day 2)')
  assert.equal(
    r.sim.positions.map((p) => [p.pair, p.entry_date, p.entry_price]),
    [
      ['A/USDT', '2024-02-27', 100],
      ['B/USDT', '2024-02-29', 40],
    ],
  )
  close(r.sim.equity[3].benchmark, (1.32 + 1.21) / 2, 'benchmark of A and C (B had no first close)')
  agrees(r)
})

/** Random walks with gaps and random actions; some pairs start late, so an ENTER may find no price. */
function randomCase(seed: number, pairs: number, days: number): Case {
  const rand = prng(seed)
  const closes: (number | null)[][] = []
  const acts: string[][] = []
  for (let p = 0; p < pairs; p++) {
    let price = 10 + rand() * 1000
    const late = p % 4 === 3 ? Math.floor(rand() * 30) : 0
    closes.push(
      Array.from({ length: days }, (_, t) => {
        price *= 1 + (rand() - 0.5) * 0.12
        return t < late || rand() < 0.08 ? null : price
      }),
    )
    acts.push(
      Array.from({ length: days }, () => {
        const a = rand()
        return a < 0.1 ? 'ENTER_LONG' : a < 0.2 ? 'EXIT_LONG' : a < 0.5 ? 'HOLD' : ''
      }),
    )
  }
  return { pairs: Array.from({ length: pairs }, (_, p) => `P${p}/USDT`), closes, actions: acts, feeBps: 10, slippageBps: 5 }
}

test('seeded random series with gaps: curve, positions and every metric equal the oracle to 1e-9', () => {
  for (const [seed, pairs, days] of [
    [1, 6, 400],
    [2, 1, 50],
    [3, 12, 200],
    [4, 5, 2],
    [5, 8, 731],
  ]) {
    const r = run({ ...randomCase(seed, pairs, days), start: '2023-12-30' })
    assert.ok(r.sim.positions.length > 0 || days < 5, `seed ${seed} trades`)
    agrees(r)
  }
})

test.run()
