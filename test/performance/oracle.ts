// The tests' own reading of SPEC 11 and docs/track-record.md's "Model performance": the model portfolio and
// its metrics, recomputed with maps and plain loops from signals and closes. Never calls
// src/performance.

export interface OracleSignal {
  pair: string
  as_of: string
  action: string
}
export interface OracleInput {
  dates: string[]
  pairs: string[]
  /** pair -> date -> close; a missing date is a gap. */
  closes: Map<string, Map<string, number>>
  signals: OracleSignal[]
  feeBps: number
  slippageBps: number
}

const ONE_DAY = 86_400_000
const calendarDays = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / ONE_DAY

export function oracle(input: OracleInput) {
  const { dates, pairs } = input
  const N = pairs.length
  const cost = (input.feeBps + input.slippageBps) / 10000
  const actionOn = new Map<string, string>()
  for (const s of input.signals) actionOn.set(`${s.pair} ${s.as_of}`, s.action)

  const lastSeen = new Map<string, number>()
  const long = new Set<string>() // latest action ENTER_LONG
  let weights = new Map<string, number>() // after the last close's rebalance
  let lastTraded = 0 // what the last close's rebalance traded; its friction is paid the next day
  let tradedSum = 0
  let value = 1
  let best = 1
  const first = new Map<string, number>()
  let benchPrev = 1
  const curve: { date: string; equity: number; drawdown: number; benchmark: number }[] = []
  const returns: number[] = []
  const benchReturns: number[] = []
  const positions: any[] = []
  const openAt = new Map<string, any>()
  let daysHolding = 0

  dates.forEach((date, t) => {
    const dayReturn = new Map<string, number>()
    for (const pair of pairs) {
      const c = input.closes.get(pair)?.get(date)
      const prev = lastSeen.get(pair)
      dayReturn.set(pair, c !== undefined && prev !== undefined ? c / prev - 1 : 0)
      if (c !== undefined) lastSeen.set(pair, c)
      if (t === 0 && c !== undefined) first.set(pair, c)
    }
    let grossReturn = 0
    for (const [pair, w] of weights) grossReturn += w * dayReturn.get(pair)!
    let bench = 1
    if (first.size > 0) {
      bench = 0
      for (const [pair, base] of first) bench += lastSeen.get(pair)! / base / first.size
    }
    if (t > 0) {
      const r = grossReturn - lastTraded * cost
      returns.push(r)
      value = value * (1 + r)
      benchReturns.push(bench / benchPrev - 1)
      tradedSum += lastTraded
      if ([...weights.values()].some((w) => w > 0)) daysHolding++
    }
    benchPrev = bench
    best = Math.max(best, value)
    curve.push({ date, equity: value, drawdown: value / best - 1, benchmark: bench })

    const next = new Map<string, number>()
    let traded = 0
    for (const pair of pairs) {
      const action = actionOn.get(`${pair} ${date}`)
      if (action === 'ENTER_LONG') long.add(pair)
      if (action === 'EXIT_LONG') long.delete(pair)
      const holding = long.has(pair) && lastSeen.has(pair)
      const drifted = ((weights.get(pair) ?? 0) * (1 + dayReturn.get(pair)!)) / (1 + grossReturn)
      const target = holding ? 1 / N : 0
      traded += Math.abs(target - drifted)
      if (holding) next.set(pair, target)
      if (holding && !openAt.has(pair)) {
        const p = {
          pair,
          entry_date: date,
          entry_price: lastSeen.get(pair)!,
          exit_date: null as string | null,
          exit_price: null as number | null,
          return: null as number | null,
        }
        openAt.set(pair, p)
        positions.push(p)
      }
      if (!holding && openAt.has(pair)) {
        const p = openAt.get(pair)
        p.exit_date = date
        p.exit_price = lastSeen.get(pair)!
        p.return = p.exit_price / p.entry_price - 1 - 2 * cost
        openAt.delete(pair)
      }
    }
    weights = next
    lastTraded = traded
  })
  const metrics = figures(curve, returns, benchReturns, positions, dates, daysHolding, tradedSum)
  return { curve, returns, benchReturns, positions, metrics, traded: tradedSum }
}

function ratiosOf(levels: number[], r: number[], dates: string[]) {
  const n = r.length
  if (n === 0)
    return { total_return: null, cagr: null, volatility: null, sharpe: null, sortino: null, max_drawdown: null, max_drawdown_days: null, calmar: null }
  const total = r.reduce((acc, x) => acc * (1 + x), 1) - 1
  const days = calendarDays(dates[0], dates[dates.length - 1])
  const cagr = days > 0 ? (1 + total) ** (365 / days) - 1 : null
  const mean = r.reduce((a, b) => a + b, 0) / n
  const sd = n > 1 ? Math.sqrt(r.reduce((a, x) => a + (x - mean) * (x - mean), 0) / (n - 1)) : null
  const downside = Math.sqrt(r.reduce((a, x) => a + (x < 0 ? x * x : 0), 0) / n)
  // Drawdown: the deepest point, the peak before it, the first day back at that peak.
  let mdd = 0
  let troughAt = 0
  for (let i = 0; i < levels.length; i++) {
    const dd = levels[i] / Math.max(...levels.slice(0, i + 1)) - 1
    if (dd < mdd) {
      mdd = dd
      troughAt = i
    }
  }
  let length = 0
  if (mdd < 0) {
    const peakValue = Math.max(...levels.slice(0, troughAt + 1))
    const peakAt = levels.slice(0, troughAt + 1).lastIndexOf(peakValue)
    let end = levels.findIndex((v, i) => i > troughAt && v >= peakValue)
    if (end < 0) end = levels.length - 1
    length = calendarDays(dates[peakAt], dates[end])
  }
  return {
    total_return: total,
    cagr,
    volatility: sd === null ? null : sd * Math.sqrt(365),
    sharpe: sd ? (mean / sd) * Math.sqrt(365) : null,
    sortino: n > 1 && downside > 0 ? (mean / downside) * Math.sqrt(365) : null,
    max_drawdown: mdd,
    max_drawdown_days: length,
    calmar: cagr !== null && mdd < 0 ? cagr / -mdd : null,
  }
}

function figures(curve: any[], r: number[], br: number[], positions: any[], dates: string[], daysHolding: number, traded: number) {
  const closed = positions.filter((p) => p.return !== null).map((p) => p.return as number)
  const wins = closed.filter((x) => x > 0)
  const losses = closed.filter((x) => x < 0)
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
  const days = dates.length > 1 ? calendarDays(dates[0], dates[dates.length - 1]) : 0
  return {
    ...ratiosOf(
      curve.map((p) => p.equity),
      r,
      dates,
    ),
    win_rate: closed.length ? wins.length / closed.length : null,
    profit_factor: losses.length ? sum(wins) / -sum(losses) : null,
    average_win: wins.length ? sum(wins) / wins.length : null,
    average_loss: losses.length ? sum(losses) / losses.length : null,
    exposure: r.length ? daysHolding / r.length : null,
    turnover: days > 0 ? (traded * 365) / days : null,
    trades: positions.length,
    days,
    benchmark: ratiosOf(
      curve.map((p) => p.benchmark),
      br,
      dates,
    ),
  }
}
