// Reconciliation (SPEC 10), at start and every minute per tenant with a venue: the venue's open
// orders and balances against the ledger. An open order the ledger does not know (placed by hand on
// the venue's site, by another bot, or left behind), and an asset the venue holds less of than the
// ledger's open LIVE trades, are recorded as mismatches (./mismatches.ts). While the fleet is paused,
// such an order on a catalogue pair is canceled: a paused fleet holds no orders it did not place.
// Fills missed while Bulwark was down are found by the executor's own reading of each order. The
// read of every open order (weight 80 on Binance, shared per IP by every tenant of the server) is
// skipped while the account's locked amounts are what they were at the last one: an order placed,
// canceled or filled moves them.
import type { Balances, Order as CcxtOrder } from 'ccxt'
import { query, type Queries, type Store } from '../../store/store.ts'
import type { Exchange } from '../../venues/exchange.ts'
import { withVenueClock } from '../../venues/sessions.ts'
import { mayWatch, noteWeight } from '../../venues/weight.ts'
import { cataloguePairs } from '../../venues/market-data.ts'
import { evaluateBreakers } from '../../risk/breakers.ts'
import { saveMark } from '../../venues/marks.ts'
import { writeOffDust } from './dust.ts'
import { recordMismatch } from './mismatches.ts'
import { findRecentBalance } from '../protection/poll.ts'
import { legClientId, protectionDue, protectionPrefix, protectionsDue, protectionsOf } from '../protection/store.ts'
import { legsOf } from '../protection/venue.ts'

const ourOrder = query<[string, string], { status: string }>('SELECT status FROM orders WHERE id = ? AND tenant_id = ?')
const fleetPaused = query<[string], { paused: number }>('SELECT trading_paused AS paused FROM risk_profiles WHERE tenant_id = ?')
const heldByAsset = query<[string], { pair: string; quantity: number }>(
  "SELECT pair, sum(quantity) AS quantity FROM trades WHERE tenant_id = ? AND status = 'OPEN' AND mode = 'LIVE' GROUP BY pair",
)
const livePairs = query<[string], { pair: string }>("SELECT DISTINCT pair FROM trades WHERE tenant_id = ? AND status = 'OPEN' AND mode = 'LIVE'")
const livePositions = query<[string], { pair: string; model_id: string | null }>(
  "SELECT DISTINCT pair, model_id FROM trades WHERE tenant_id = ? AND status = 'OPEN' AND mode = 'LIVE'",
)

/** The poll's balances are recent enough for reconciliation when read within its minute. */
const BALANCE_MAX_AGE_MS = 60_000
/** Each tenant's locked amounts when its open orders were last read whole. */
const lastLocks = new Map<string, string>()

/** The locked amount of every asset that has one, as one comparable text. */
function lockedAmounts(balance: Balances): string {
  const used = (balance.used ?? {}) as unknown as Record<string, number>
  return JSON.stringify(
    Object.entries(used)
      .filter(([, amount]) => Number(amount) > 0)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  )
}

/** Pairs whose resting protection has a leg missing from `open`. */
async function restingProtectionsMissing(db: Queries, tenantId: string, open: CcxtOrder[]): Promise<string[]> {
  const ids = new Set(open.map((o) => o.clientOrderId))
  return (await protectionsOf(db, tenantId))
    .filter((r) => r.phase === 'RESTING' && legsOf(r.kind).some((leg) => !ids.has(legClientId(tenantId, r.pair, r.seq, leg))))
    .map((r) => r.pair)
}

/** Balances closer than this (relative) agree: quantities come from float sums. */
const TOLERANCE = 1e-9

/**
 * One reconciliation pass for a tenant; returns the number of new mismatches. Throws what the venue
 * threw; a refusal of the request's time (-1021) sets the clock by the venue's first (`resyncClock`).
 */
export async function reconcileTenant(store: Store, tenantId: string, exchange: Exchange, resyncClock: () => Promise<void>): Promise<number> {
  const balance = findRecentBalance(tenantId, BALANCE_MAX_AGE_MS) ?? (await withVenueClock(() => exchange.fetchBalance(), resyncClock))
  // An order placed, canceled or filled on the venue moves the locked amounts: while they are what
  // the last full read saw, so are the open orders, and the read (weight 80 on Binance) is skipped.
  // A pause asks for foreign orders to be canceled: that too calls for the full read.
  const locks = `${(await store.read.get(fleetPaused, [tenantId]))?.paused === 1 ? 'paused' : 'trading'} ${lockedAmounts(balance)}`
  // While the venue is busy (or asked to wait) the read waits for a later pass: it only watches.
  const unread = lastLocks.get(tenantId) !== locks && mayWatch(exchange.id)
  const open: CcxtOrder[] | undefined = unread ? await withVenueClock(() => exchange.fetchOpenOrders(), resyncClock) : undefined
  noteWeight(exchange)
  const catalogue = new Set(await cataloguePairs(store.read))
  const now = new Date()
  const toCancel: CcxtOrder[] = []
  let found = 0
  // What the venue said, written after every call of the read: none runs inside the transaction.
  await store.write(async (tx) => {
    const paused = (await tx.get(fleetPaused, [tenantId]))?.paused === 1
    for (const order of open ?? []) {
      const venueId = String(order.id)
      const symbol = String(order.symbol)
      const ours = order.clientOrderId ? await tx.get(ourOrder, [order.clientOrderId, tenantId]) : undefined
      if (ours && ['PENDING'].includes(ours.status)) continue
      // The pair's protection (SPEC 13): the protection step keeps it right.
      if (order.clientOrderId?.startsWith(protectionPrefix(tenantId, symbol))) continue
      const cancel = paused && catalogue.has(symbol)
      const what = `${exchange.id} order ${order.id} (${order.symbol} ${order.side} ${order.amount} at ${order.price ?? 'market'}, client order id ${order.clientOrderId ?? 'none'})`
      const why = ours ? `is open on the venue but ${ours.status} in the ledger` : 'is open on the venue and unknown to the ledger'
      const detail = `${what} ${why}${cancel ? '; canceled: trading is paused' : ''}`
      if (await recordMismatch(tx, tenantId, `order:${venueId}`, now, { kind: 'unknown_order', pair: symbol, venue_order_id: venueId, detail })) found++
      if (cancel) toCancel.push(order)
    }
    for (const { pair, quantity } of await tx.all(heldByAsset, [tenantId])) {
      const asset = pair.split('/')[0]
      const total = Number(balance.total?.[asset as keyof typeof balance.total] ?? 0)
      if (quantity <= total * (1 + TOLERANCE) + TOLERANCE) continue
      const detail = `the ledger's open LIVE trades hold ${quantity} ${asset} and the ${exchange.id} account holds ${total}`
      if (await recordMismatch(tx, tenantId, `balance:${asset}:${quantity.toPrecision(12)}`, now, { kind: 'balance', pair, venue_order_id: null, detail }))
        found++
    }
    // Every position's protection is looked at: one placed before a restart, lost, or never placed;
    // and after a full read, every resting one whose orders it did not find.
    await protectionsDue(tx, tenantId, now, true)
    if (open) for (const pair of await restingProtectionsMissing(tx, tenantId, open)) await protectionDue(tx, tenantId, pair, now)
  })
  // Remembered once nothing is left to do about what the read found: a foreign order that could not
  // be canceled is read (and canceled) again next time.
  if (open && toCancel.length === 0) lastLocks.set(tenantId, locks)
  // A foreign order is canceled by the venue's id; a failure is retried by the next pass.
  for (const order of toCancel) await exchange.cancelOrder(String(order.id), order.symbol)
  await refreshMarks(store, tenantId, exchange)
  return found
}

/**
 * The venue's last price of every pair held LIVE, then the breakers at those marks (SPEC 9). A
 * position that is nothing but dust at its mark (left by an older version, or a fill too small to
 * sell) is written off (./dust.ts), so it never holds its pair open.
 */
async function refreshMarks(store: Store, tenantId: string, exchange: Exchange): Promise<void> {
  const pairs = (await store.read.all(livePairs, [tenantId])).map((r) => r.pair)
  if (pairs.length === 0) return
  const tickers = await exchange.fetchTickers(pairs)
  const now = new Date()
  await store.write(async (tx) => {
    for (const pair of pairs) {
      const last = tickers[pair]?.last
      if (last !== undefined && last > 0) await saveMark(tx, tenantId, pair, last, now)
    }
    for (const { pair, model_id } of await tx.all(livePositions, [tenantId])) {
      const last = tickers[pair]?.last
      if (last !== undefined && last > 0) await writeOffDust(tx, tenantId, exchange.id, pair, model_id, last, 'manual', now)
    }
    await evaluateBreakers(tx, tenantId, now)
  })
}
