// A tenant's equity (SPEC 9): capital_usd + the realized net PnL of closed trades + the unrealized
// PnL of open trades at the latest mark (the newest close of their pair; for LIVE, the venue's last
// price when one was read, whose age ./marks.ts reports), net of the friction they paid. Owns equity_state (tenant_id, day, day_start_equity, peak_equity, losses_since, updated_at,
// equity: the last one seen), what the loss breakers measure from, and equity_history (tenant_id, date, equity_usd, pnl_usd,
// drawdown_pct, exposure_usd), one point per UTC day. Reads trades and prices by SQL: trading sits
// above risk, and its tables are the ledger this only sums.
import { query, type Queries, type Tx } from '../store/store.ts'
import { addDays, utcDay } from '../shared/dates.ts'

export interface Equity {
  capital: number
  realized: number
  unrealized: number
  /** Market value of the open positions at their marks. */
  exposure: number
  equity: number
}

export interface EquityState {
  day: string
  day_start_equity: number
  peak_equity: number
  losses_since: string
  /** The equity the last evaluation saw (null in a row written before 009). */
  equity: number | null
}

/** Equity as of `end`, given by its parts; the one formula the live view and the history share. */
interface Book {
  capital: number
  realized: number
  /** Per pair and mode; a LIVE position carries the venue's last price when one was read (sql/012). */
  open: { pair: string; quantity: number; cost: number; live_mark?: number | null }[]
}

const capitalOf = query<[string], { capital_usd: number }>('SELECT capital_usd FROM risk_profiles WHERE tenant_id = ?')
// Kept by the ledger's triggers (sql/009_breaker_reads.sql): one row, however many trades closed.
const realizedNow = query<[string], { pnl: number }>('SELECT coalesce((SELECT pnl_usd FROM realized_pnl WHERE tenant_id = ?), 0) AS pnl')
const openNow = query<[string], Book['open'][number]>(`
  SELECT t.pair, sum(t.quantity) AS quantity, sum(t.quantity * t.entry_price + t.pnl_costs_usd) AS cost, m.price AS live_mark
  FROM trades t LEFT JOIN venue_marks m ON t.mode = 'LIVE' AND m.tenant_id = t.tenant_id AND m.pair = t.pair
  WHERE t.tenant_id = ? AND t.status = 'OPEN' GROUP BY t.pair, t.mode, m.price`)
const realizedBy = query<{ tenant: string; end: string }, { pnl: number }>(`
  SELECT coalesce(sum(quantity * (exit_price - entry_price) - pnl_costs_usd), 0) AS pnl
  FROM trades WHERE tenant_id = @tenant AND status = 'CLOSED' AND closed_at <= @end`)
// A trade closed after `end` was open then; its fees_usd by now also holds its exit fee, which the
// point then counts a little early (the ledger keeps no separate entry fee for a closed row).
const openAt = query<{ tenant: string; end: string }, Book['open'][number]>(`
  SELECT pair, sum(quantity) AS quantity, sum(quantity * entry_price + fees_usd + slippage_usd * slippage_in_pnl) AS cost
  FROM trades WHERE tenant_id = @tenant AND opened_at <= @end AND (status = 'OPEN' OR closed_at > @end) GROUP BY pair`)
const newestClose = query<[string], { close: number }>('SELECT close FROM prices WHERE pair = ? ORDER BY date DESC LIMIT 1')
const closeOnOrBefore = query<[string, string], { close: number }>('SELECT close FROM prices WHERE pair = ? AND date <= ? ORDER BY date DESC LIMIT 1')

const stateOf = query<[string], EquityState>('SELECT day, day_start_equity, peak_equity, losses_since, equity FROM equity_state WHERE tenant_id = ?')
const saveState = query(`INSERT INTO equity_state (tenant_id, day, day_start_equity, peak_equity, losses_since, equity, updated_at)
  VALUES (@tenant, @day, @day_start_equity, @peak_equity, @losses_since, @equity, @now)
  ON CONFLICT (tenant_id) DO UPDATE SET day = excluded.day, day_start_equity = excluded.day_start_equity,
    peak_equity = excluded.peak_equity, losses_since = excluded.losses_since, equity = excluded.equity, updated_at = excluded.updated_at`)
const lastPoint = query<[string], { date: string; equity_usd: number }>(
  'SELECT date, equity_usd FROM equity_history WHERE tenant_id = ? ORDER BY date DESC LIMIT 1',
)
const peakOfPoints = query<[string], { peak: number | null }>('SELECT max(equity_usd) AS peak FROM equity_history WHERE tenant_id = ?')
const insertPoint = query(`INSERT INTO equity_history (tenant_id, date, equity_usd, pnl_usd, drawdown_pct, exposure_usd)
  VALUES (@tenant, @date, @equity, @pnl, @drawdown, @exposure) ON CONFLICT DO NOTHING`)
const createdDay = query<[string], { day: string }>('SELECT substr(created_at, 1, 10) AS day FROM tenants WHERE id = ?')
const pointsBetween = query<{ tenant: string; from: string; to: string }, EquityPoint>(`
  SELECT date, equity_usd, pnl_usd, drawdown_pct, exposure_usd FROM equity_history
  WHERE tenant_id = @tenant AND date >= @from AND date <= @to ORDER BY date`)

export interface EquityPoint {
  date: string
  equity_usd: number
  pnl_usd: number
  drawdown_pct: number
  exposure_usd: number
}

function valued(book: Book, mark: (pair: string) => number | undefined): Equity {
  let unrealized = 0
  let exposure = 0
  for (const position of book.open) {
    // A filled trade always has a close of its pair; its entry stands in if the prices were purged.
    const price = position.live_mark ?? mark(position.pair) ?? position.cost / position.quantity
    exposure += position.quantity * price
    unrealized += position.quantity * price - position.cost
  }
  return { capital: book.capital, realized: book.realized, unrealized, exposure, equity: book.capital + book.realized + unrealized }
}

/** The prices `valued` falls back on: `mark` of each pair held with no venue mark, read one at a time. */
async function fallbackMarks(book: Book, mark: (pair: string) => Promise<number | undefined>): Promise<Map<string, number | undefined>> {
  const prices = new Map<string, number | undefined>()
  for (const position of book.open) {
    if (position.live_mark == null && !prices.has(position.pair)) prices.set(position.pair, await mark(position.pair))
  }
  return prices
}

/**
 * Equity now, at the newest close of each open pair. `marks` caches closes across the tenants of
 * one evaluation pass.
 *
 * @example
 * (await equityNow(db, 'ten_1')).equity // 10000 + realized + unrealized
 */
export async function equityNow(db: Queries, tenantId: string, marks = new Map<string, number | undefined>()): Promise<Equity> {
  const capital = (await db.get(capitalOf, [tenantId]))?.capital_usd ?? 0
  const book = { capital, realized: (await db.get(realizedNow, [tenantId]))!.pnl, open: await db.all(openNow, [tenantId]) }
  const prices = await fallbackMarks(book, async (pair) => {
    if (!marks.has(pair)) marks.set(pair, (await db.get(newestClose, [pair]))?.close)
    return marks.get(pair)
  })
  return valued(book, (pair) => prices.get(pair))
}

/** Equity at the end of UTC day `day`, from the ledger: trades as they stood then, marked at the newest close dated on or before it. */
export async function equityAtDayEnd(db: Queries, tenantId: string, day: string): Promise<Equity> {
  const end = `${day}T23:59:59.999Z`
  const capital = (await db.get(capitalOf, [tenantId]))?.capital_usd ?? 0
  const book = {
    capital,
    realized: (await db.get(realizedBy, { tenant: tenantId, end }))!.pnl,
    open: await db.all(openAt, { tenant: tenantId, end }),
  }
  const prices = await fallbackMarks(book, async (pair) => (await db.get(closeOnOrBefore, [pair, day]))?.close)
  return valued(book, (pair) => prices.get(pair))
}

export async function findEquityState(db: Queries, tenantId: string): Promise<EquityState | undefined> {
  return await db.get(stateOf, [tenantId])
}

/** The state as it stands after seeing `equity` at `now` (a new UTC day starts from this equity), without writing it. */
export function stateAfter(state: EquityState | undefined, equity: number, now: Date): EquityState {
  const today = utcDay(now)
  if (!state) return { day: today, day_start_equity: equity, peak_equity: equity, losses_since: '', equity }
  return {
    day: today,
    day_start_equity: state.day === today ? state.day_start_equity : equity,
    peak_equity: Math.max(state.peak_equity, equity),
    losses_since: state.losses_since,
    equity,
  }
}

/**
 * Records what the breakers measure from, after seeing `equity` at `now`: a new UTC day writes the
 * history points of the days that ended and starts from this equity, in the change's transaction.
 */
export async function observeEquity(tx: Tx, tenantId: string, equity: number, now: Date, state?: EquityState): Promise<EquityState> {
  state ??= await findEquityState(tx, tenantId)
  if (!state || state.day !== utcDay(now)) await writeHistory(tx, tenantId, now)
  const next = stateAfter(state, equity, now)
  await tx.run(saveState, { tenant: tenantId, ...next, now: now.toISOString() })
  return next
}

const shiftState = query(
  'UPDATE equity_state SET day_start_equity = day_start_equity + @delta, peak_equity = peak_equity + @delta, equity = equity + @delta WHERE tenant_id = @tenant',
)

/**
 * Moves day-start, peak and last equity by a change of capital_usd: new capital is not a gain, and
 * less capital is not a loss, so neither may warn or trip a breaker. In the change's transaction.
 */
export async function shiftEquityBase(tx: Tx, tenantId: string, delta: number): Promise<void> {
  if (delta !== 0) await tx.run(shiftState, { tenant: tenantId, delta })
}

/** Re-bases day-start and peak equity to `equity` and counts consecutive losses from now (RESUME with reset_breakers), in its transaction. */
export async function rebaseEquity(tx: Tx, tenantId: string, equity: number, now: Date): Promise<void> {
  await tx.run(saveState, {
    tenant: tenantId,
    day: utcDay(now),
    day_start_equity: equity,
    peak_equity: equity,
    losses_since: now.toISOString(),
    equity,
    now: now.toISOString(),
  })
}

/**
 * Writes the history points of every UTC day that ended since the last one written (since the
 * tenant's creation for a tenant with none yet), up to yesterday, in the change's transaction.
 */
export async function writeHistory(tx: Tx, tenantId: string, now: Date): Promise<number> {
  const yesterday = addDays(utcDay(now), -1)
  const last = await tx.get(lastPoint, [tenantId])
  // A year back at most: the first start after an upgrade must not rebuild a decade in one transaction.
  const created = (await tx.get(createdDay, [tenantId]))?.day
  const first = last ? addDays(last.date, 1) : created && created < addDays(yesterday, -365) ? addDays(yesterday, -365) : created
  if (!first || first > yesterday) return 0
  const capital = (await tx.get(capitalOf, [tenantId]))?.capital_usd ?? 0
  let previous = last?.equity_usd ?? capital
  // Capital is the point before the first: a later catch-up must measure from the same peak.
  let peak = Math.max((await tx.get(peakOfPoints, [tenantId]))!.peak ?? capital, capital)
  let written = 0
  for (let day = first; day <= yesterday; day = addDays(day, 1)) {
    const point = await equityAtDayEnd(tx, tenantId, day)
    peak = Math.max(peak, point.equity)
    await tx.run(insertPoint, {
      tenant: tenantId,
      date: day,
      equity: point.equity,
      pnl: point.equity - previous,
      drawdown: peak > 0 ? ((peak - point.equity) / peak) * 100 : 0,
      exposure: point.exposure,
    })
    previous = point.equity
    written++
  }
  return written
}

export async function listEquityHistory(db: Queries, tenantId: string, from: string, to: string): Promise<EquityPoint[]> {
  return await db.all(pointsBetween, { tenant: tenantId, from, to })
}
