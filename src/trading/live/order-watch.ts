// Waiting for a LIVE order's next move: the gateway (SPEC 14) answers a bot's new order with the
// venue's acknowledgement, so it waits for the executor's write after the venue answered. The
// executor tells this process's waiters after each outbox commit; a waiter also reads again every
// few hundred ms, for an executor on another node (a cluster) whose commits nobody here hears of.
// The venue's answer itself is relayed too (relayVenueAnswer), so that a waiter may answer from it.
import type { Order as CcxtOrder } from 'ccxt'
import type { Queries, Store, Tx } from '../../store/store.ts'
import type { VenueFill } from './live-fills.ts'

const waiters = new Map<string, Set<() => void>>()

/**
 * Wakes whoever waits for `orderId` once `tx` commits (called by every outbox move). Only a move to
 * OPEN (the venue holds it, its id known) or DONE is worth a waiter's read.
 */
export function noteLiveOrderMoved(tx: Tx, orderId: string, state: string): void {
  if (state !== 'OPEN' && state !== 'DONE') return
  tx.afterCommit(() => {
    for (const wake of waiters.get(orderId) ?? []) wake()
  })
}

/** What the venue answered to a send or a cancel: the order's state there, with every fill it made. */
export interface VenueAnswer {
  venueOrderId: string
  /** As orders_now will say once the answer is booked. */
  status: 'OPEN' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED'
  filled: number
  fills: VenueFill[]
}

const answerWaiters = new Map<string, Set<(answer: VenueAnswer) => void>>()

/**
 * Hands the venue's answer to whoever waits for `orderId`, from inside `tx`, the write that books
 * it, and on SQLite lets their answers leave before the booking's statements run. Nothing in an
 * SQLite transaction waits on I/O, so the booking still commits before this process reads another
 * request: nobody reads the order between the answer and its booking, and a crash between them
 * leaves it SENT, looked up at the next start like any other. On PostgreSQL, whose writes wait on
 * the network, the answer is relayed after the commit.
 *
 * @example
 * await store.write(async (tx) => {
 *   await relayVenueAnswer(tx, order.id, answer) // the bot's answer has left (SQLite)
 *   await bookTheFills(tx)
 * })
 */
export async function relayVenueAnswer(tx: Tx, orderId: string, answer: VenueAnswer): Promise<void> {
  const waiting = answerWaiters.get(orderId)
  if (!waiting) return
  const relay = () => {
    for (const take of waiting) take(answer)
  }
  if (tx.engine !== 'sqlite') return tx.afterCommit(relay)
  relay()
  // Every microtask the waiters queue (their answer, to its res.end()) runs before this tick does.
  await new Promise((resolve) => process.nextTick(resolve))
}

/** Whether `fills` are all of what an order `filled` (to a billionth of their total, for the decimals' rounding). */
export function fillsAddUpTo(fills: VenueFill[], filled: number): boolean {
  const total = fills.reduce((sum, f) => sum + f.amount, 0)
  return Math.abs(total - filled) <= 1e-9 * Math.max(1, total)
}

/**
 * The venue's answer as a waiting bot is told it, when it says all the ledger will book: its fills
 * add up to what the order filled. Otherwise undefined, and the bot is answered from the ledger
 * once the fills are in.
 */
export function venueAnswerOf(venueOrder: CcxtOrder, fills: VenueFill[]): VenueAnswer | undefined {
  const filled = venueOrder.filled ?? 0
  if (venueOrder.id === undefined || !fillsAddUpTo(fills, filled)) return undefined
  const status =
    venueOrder.status === 'open'
      ? filled > 0
        ? 'PARTIALLY_FILLED'
        : 'OPEN'
      : venueOrder.status === 'closed'
        ? 'FILLED'
        : venueOrder.status === 'canceled' || venueOrder.status === 'expired'
          ? 'CANCELED'
          : undefined
  return status && { venueOrderId: String(venueOrder.id), status, filled, fills }
}

const RECHECK_MS = 250

/**
 * Reads `look` after every move of the order until it returns something, or `timeoutMs` passes
 * (then undefined). `lookFirst: false` when the caller has just committed the change it waits on
 * (a new order, a cancel asked): nothing can have moved yet, and a read then would only delay the
 * executor's turn. `fromAnswer` may take the venue's answer instead of a read (relayVenueAnswer).
 *
 * @example
 * const placed = await waitForLiveOrder(store, 'ord_1', 7000, async (db) => (await orderRow(db, tenantId, 'ord_1'))?.venue_order_id ?? undefined)
 */
export async function waitForLiveOrder<T>(
  store: Store,
  orderId: string,
  timeoutMs: number,
  look: (db: Queries) => Promise<T | undefined>,
  options: { lookFirst?: boolean; fromAnswer?: (answer: VenueAnswer) => T | undefined } = {},
): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs
  let wake: () => void = () => {}
  const set = waiters.get(orderId) ?? new Set()
  waiters.set(orderId, set)
  const woken = () => wake()
  set.add(woken)
  let answered: T | undefined
  const { fromAnswer } = options
  const takeAnswer = (answer: VenueAnswer) => {
    answered ??= fromAnswer?.(answer)
    if (answered !== undefined) wake()
  }
  const answers = answerWaiters.get(orderId) ?? new Set()
  if (fromAnswer) {
    answerWaiters.set(orderId, answers)
    answers.add(takeAnswer)
  }
  let looking = options.lookFirst ?? true
  try {
    for (;;) {
      const moved = new Promise<void>((resolve) => {
        wake = resolve
      })
      if (answered !== undefined) return answered
      const found = looking ? await look(store.read) : undefined
      looking = true
      if (found !== undefined) return found
      const left = deadline - Date.now()
      if (left <= 0) return undefined
      let timer: NodeJS.Timeout | undefined
      await Promise.race([moved, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(left, RECHECK_MS))))])
      clearTimeout(timer)
    }
  } finally {
    set.delete(woken)
    if (set.size === 0) waiters.delete(orderId)
    answers.delete(takeAnswer)
    if (answers.size === 0) answerWaiters.delete(orderId)
  }
}
