// Waiting for a LIVE order's next move: the gateway (SPEC 14) answers a bot's new order with the
// venue's acknowledgement, so it waits for the executor's write after the venue answered. The
// executor tells this process's waiters after each outbox commit; a waiter also reads again every
// few hundred ms, for an executor on another node (a cluster) whose commits nobody here hears of.
import type { Queries, Store, Tx } from '../../store/store.ts'

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

const RECHECK_MS = 250

/**
 * Reads `look` after every move of the order until it returns something, or `timeoutMs` passes
 * (then undefined). `lookFirst: false` when the caller has just committed the change it waits on
 * (a new order, a cancel asked): nothing can have moved yet, and a read then would only delay the
 * executor's turn.
 *
 * @example
 * const placed = await waitForLiveOrder(store, 'ord_1', 7000, async (db) => (await orderRow(db, tenantId, 'ord_1'))?.venue_order_id ?? undefined)
 */
export async function waitForLiveOrder<T>(
  store: Store,
  orderId: string,
  timeoutMs: number,
  look: (db: Queries) => Promise<T | undefined>,
  options: { lookFirst?: boolean } = {},
): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs
  let wake: () => void = () => {}
  const set = waiters.get(orderId) ?? new Set()
  waiters.set(orderId, set)
  const woken = () => wake()
  set.add(woken)
  let looking = options.lookFirst ?? true
  try {
    for (;;) {
      const moved = new Promise<void>((resolve) => {
        wake = resolve
      })
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
  }
}
