// The executor's protection step for one tenant (SPEC 13): every due protection, and on the poll every
// one on the venue that may have changed. Reading every protection's orders costs the venue's weight
// per protection (Binance: 6 a symbol), and every tenant of a server shares one IP's limit (6,000 a
// minute), so 1,000 protections could not be read in a minute. The poll reads the account's balances
// instead (weight 20, whatever it holds): a resting protection locks the coins it would sell, so
// while the base asset's locked amount still covers every protection on it, none of them filled,
// was canceled or filled in part. Only the others are read, leg by leg. A stop-limit can trigger and
// rest unfilled with its coins still locked (gapped): those pairs' open orders are read too; and
// where a take-profit cannot rest (no OCO), those pairs' prices, for Bulwark's own sale.
//
// The poll's cadence is fitted to a budget: all tenants' polls on one exchange share WATCH_BUDGET a
// minute, so it runs every 5 s for a few tenants and stretches with many (84: every 34 s). It also
// waits while the venue is busy or asked to wait (venues/weight.ts).
import type { Balances, Order } from 'ccxt'
import { query, type Store } from '../../store/store.ts'
import type { Exchange } from '../../venues/exchange.ts'
import { saveMark } from '../../venues/marks.ts'
import { openOrdersWeight, readOpenOrders } from '../../venues/open-orders.ts'
import { withVenueClock } from '../../venues/sessions.ts'
import { mayWatch, noteLimits, noteWeight } from '../../venues/weight.ts'
import { dueProtections, type ProtectionRow, protectionsOf } from './store.ts'
import { type ProtectionContext, tendProtection } from './worker.ts'

/** A tenant's protection poll runs at most this often (pollInterval stretches it to the budget). */
export const PROTECTION_POLL_MS = 5000
/** What the protection polls of every tenant on one exchange may spend a minute (half of Binance's 6,000). */
export const WATCH_BUDGET = 3000
const BALANCE_WEIGHT = 20
/** Binance's weight of GET /api/v3/ticker/24hr for up to 20 symbols. */
const TICKERS_WEIGHT = 2
/** Locked amounts are decimals, quantities float sums. */
const TOLERANCE = 1e-9

type OnPool = <T>(pool: Exchange[], items: T[], work: (item: T, exchange: Exchange) => Promise<void>) => Promise<void>
type Context = Omit<ProtectionContext, 'openOrders'>

// Bulwark's SELLs resting on the venue lock their unfilled coins beside the protections (SPEC 14: a
// bot's own stop takes the protection's place for its quantity).
const restingSells = query<[string], { pair: string; quantity: number }>(`
  SELECT o.pair, sum(o.quantity - o.filled_quantity) AS quantity FROM orders o JOIN venue_orders v ON v.order_id = o.id
  WHERE o.tenant_id = ? AND o.mode = 'LIVE' AND o.side = 'SELL' AND o.status = 'PENDING' AND v.state = 'OPEN' GROUP BY o.pair`)
const watchers = query<[string], { n: number }>("SELECT count(DISTINCT tenant_id) AS n FROM venue_protections WHERE exchange = ? AND phase <> 'IDLE'")

const isResting = (r: ProtectionRow) => r.phase === 'RESTING'
/** A resting stop-limit: it may have triggered and rest unfilled, its coins still locked. */
const mayGap = (r: ProtectionRow) => isResting(r) && r.stop_limit_price !== null
/** Where Bulwark sells at the take-profit itself (no OCO). */
const sellsAtTakeProfit = (r: ProtectionRow) => isResting(r) && (r.kind === 'STOP' || r.kind === 'STOP_LIMIT') && r.take_profit_price !== null

/**
 * How long a tenant's poll of `rows` waits after its last: PROTECTION_POLL_MS, or longer where the
 * polls of `tenants` tenants on the exchange would spend more than WATCH_BUDGET a minute.
 *
 * @example
 * pollInterval(rows, 84) // 33600 for rows with nothing but stops and OCO lists
 */
export function pollInterval(rows: ProtectionRow[], tenants: number): number {
  const gapPairs = new Set(rows.filter(mayGap).map((r) => r.pair)).size
  const weight = BALANCE_WEIGHT + (gapPairs > 0 ? openOrdersWeight(gapPairs) : 0) + (rows.some(sellsAtTakeProfit) ? TICKERS_WEIGHT : 0)
  return Math.max(PROTECTION_POLL_MS, (weight * 60_000 * Math.max(1, tenants)) / WATCH_BUDGET)
}

/**
 * Tends the tenant's protections on the pool: the due ones, and on the poll (when due since
 * `polledAt`) those on the venue that may have changed. Returns when the poll last ran. Reads
 * committed rows through `store.read`; each write is its own store.write, never around a venue call.
 */
export async function tendProtections(store: Store, tenantId: string, pool: Exchange[], context: Context, polledAt: number, onPool: OnPool): Promise<number> {
  const now = Date.now()
  let rows = await dueProtections(store.read, tenantId, now)
  let openOrders: Map<string, Order> | undefined
  const exchange = pool[0]
  const watched = (await protectionsOf(store.read, tenantId)).filter((r) => r.phase !== 'IDLE')
  const interval = async () => pollInterval(watched, (await store.read.get(watchers, [exchange.id]))?.n ?? 1)
  if (watched.length > 0 && now - polledAt >= (await interval()) && mayWatch(exchange.id)) {
    polledAt = now
    try {
      const looked = await lookOver(store, tenantId, exchange, watched, context)
      const due = new Set(rows.map((r) => r.pair))
      rows = [...rows, ...looked.rows.filter((r) => !due.has(r.pair))]
      openOrders = looked.openOrders
      context.note(true)
    } catch (error) {
      noteLimits(exchange, error)
      context.note(false)
      return polledAt
    }
  }
  if (rows.length > 0) await onPool(pool, rows, (row, instance) => tendProtection(store, row, instance, { ...context, openOrders }))
  return polledAt
}

/** One poll: which watched rows to tend, with the open orders read for them. */
async function lookOver(store: Store, tenantId: string, exchange: Exchange, watched: ProtectionRow[], context: Context) {
  const balance: Balances = await withVenueClock(() => exchange.fetchBalance(), context.resyncClock)
  noteWeight(exchange)
  rememberBalance(tenantId, balance)
  const needed = new Map<string, number>()
  for (const row of watched.filter(isResting)) needed.set(baseOf(row), (needed.get(baseOf(row)) ?? 0) + (row.quantity ?? 0))
  // What resting SELLs lock is not the protections': without it a filled protection could hide behind them.
  for (const sell of await store.read.all(restingSells, [tenantId])) {
    const base = sell.pair.split('/')[0]
    if (needed.has(base)) needed.set(base, needed.get(base)! + sell.quantity)
  }
  const uncovered = (row: ProtectionRow) => {
    const locked = Number(balance[baseOf(row)]?.used ?? 0)
    const need = needed.get(baseOf(row)) ?? 0
    return locked + TOLERANCE * Math.max(1, need) < need
  }
  const gapPairs = watched.filter(mayGap).map((r) => r.pair)
  const openOrders = gapPairs.length > 0 ? await readOpenOrders(exchange, gapPairs, context.resyncClock) : undefined
  const reached = await takeProfitsReached(store, tenantId, exchange, watched, context)
  const rows = watched.filter((r) => !isResting(r) || uncovered(r) || mayGap(r) || reached.has(r.pair))
  return { rows, openOrders }
}

const baseOf = (row: ProtectionRow) => row.pair.split('/')[0]

/** The pairs whose venue price reached the take-profit Bulwark sells itself (their marks saved). */
async function takeProfitsReached(store: Store, tenantId: string, exchange: Exchange, rows: ProtectionRow[], context: Context): Promise<Set<string>> {
  const selling = rows.filter(sellsAtTakeProfit)
  if (selling.length === 0) return new Set()
  const tickers = await withVenueClock(() => exchange.fetchTickers(selling.map((r) => r.pair)), context.resyncClock)
  noteWeight(exchange)
  const now = new Date()
  await store.write(async (tx) => {
    for (const row of selling) await saveMark(tx, tenantId, row.pair, tickers[row.pair]?.last ?? 0, now)
  })
  return new Set(selling.filter((r) => (tickers[r.pair]?.last ?? 0) >= r.take_profit_price!).map((r) => r.pair))
}

const balances = new Map<string, { balance: Balances; at: number }>()

function rememberBalance(tenantId: string, balance: Balances): void {
  balances.set(tenantId, { balance, at: Date.now() })
}

/**
 * The tenant's balances as the last poll read them, if at most `maxAgeMs` old: reconciliation takes
 * them rather than spending the weight again.
 */
export function findRecentBalance(tenantId: string, maxAgeMs: number): Balances | undefined {
  const seen = balances.get(tenantId)
  return seen && Date.now() - seen.at <= maxAgeMs ? seen.balance : undefined
}
