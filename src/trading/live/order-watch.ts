// Waiting for a LIVE order's next move: the gateway (SPEC 14) answers a bot's new order with the
// venue's acknowledgement, so it waits for the executor's write after the venue answered. The
// executor tells this process's waiters after each outbox commit; a waiter also reads again every
// few hundred ms, for an executor on another node (a cluster) whose commits nobody here hears of.
import type { Queries, Store, Tx } from '../../store/store.ts'

const waiters = new Map<string, Set<() => void>>()

/** Wakes whoever waits for `orderId` once `tx` commits (called by every outbox move). */
export function noteLiveOrderMoved(tx: Tx, orderId: string): void {
  tx.afterCommit(() => {
    for (const wake of waiters.get(orderId) ?? []) wake()
  })
}

const RECHECK_MS = 250

/**
 * Reads `look` after every move of the order until it returns something, or `timeoutMs` passes
 * (then undefined).
 *
 * @example
 * const placed = await waitForLiveOrder(store, 'ord_1', 7000, async (db) => (await orderRow(db, tenantId, 'ord_1'))?.venue_order_id ?? undefined)
 */
export async function waitForLiveOrder<T>(
  store: Store,
  orderId: string,
  timeoutMs: number,
  look: (db: Queries) => Promise<T | undefined>,
): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs
  let wake: () => void = () => {}
  const set = waiters.get(orderId) ?? new Set()
  waiters.set(orderId, set)
  const woken = () => wake()
  set.add(woken)
  try {
    for (;;) {
      const moved = new Promise<void>((resolve) => {
        wake = resolve
      })
      const found = await look(store.read)
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
