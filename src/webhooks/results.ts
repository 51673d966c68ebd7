// What the sender writes after each attempt. Failures are written at once, with their next attempt
// per the retry schedule (SPEC 7); successes in small batches, one transaction for many deliveries.
// A crash before a result is written means that attempt is made again after restart: delivery is at
// least once, and receivers dedupe on the body's `id`.
import type { Store } from '../store/store.ts'
import { log } from '../shared/log.ts'
import type { Sent } from './attempt.ts'
import { noteEndpointFailure, noteEndpointSuccess } from './endpoints.ts'
import type { OutboxItem } from './outbox.ts'
import { markFailed, markSucceeded } from './delivery-queue.ts'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
/** Wait after attempt 1, 2, ... 7 fails; after the 8th the delivery is FAILED. */
const RETRY_DELAYS_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]
const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1
const SUCCESS_BATCH = 200
const SUCCESS_FLUSH_MS = 20

/** Delay before the retry that follows failed attempt `attempt` (1-based), with +-20% jitter. */
function retryDelay(attempt: number, scale: number): number {
  const base = RETRY_DELAYS_MS[attempt - 1]
  return Math.round(base * (0.8 + Math.random() * 0.4) * scale)
}

interface Success {
  id: string
  endpointId: string
  number: number
  at: Date
  status: number
}

/**
 * The sender's record of results, written through `store`. `flush` writes the pending successes and
 * waits for the failures being written (the sender awaits it before every read of the outbox, so
 * nothing is offered twice); `record` writes one attempt's result and says whether the delivery now
 * waits for a retry.
 *
 * @example
 * const results = createResultLog(store, 1)
 * const waitsForRetry = await results.record(endpoint.id, item, sent)
 */
export function createResultLog(
  store: Store,
  retryScale: number,
): { flush(): Promise<void>; record(endpointId: string, item: OutboxItem, sent: Sent): Promise<boolean> } {
  let successes: Success[] = []
  let flushTimer: NodeJS.Timeout | undefined
  /** The batches taken so far, written one after another; never rejects. */
  let flushing: Promise<void> = Promise.resolve()

  /**
   * Successes are written in batches, one transaction for many deliveries instead of one each. Every
   * read of the outbox by the sender flushes first, so nothing is offered twice; a crash before a
   * flush only means those deliveries are sent again (at least once).
   */
  function flushSuccesses(): Promise<void> {
    clearTimeout(flushTimer)
    flushTimer = undefined
    if (successes.length) {
      const batch = successes
      successes = []
      flushing = flushing.then(() => writeSuccesses(batch))
    }
    return flushing
  }

  async function writeSuccesses(batch: Success[]): Promise<void> {
    try {
      await store.write(async (tx) => {
        for (const s of batch) await markSucceeded(tx, s.id, s.number, s.at, s.status)
        for (const id of new Set(batch.map((s) => s.endpointId))) await noteEndpointSuccess(tx, id)
      })
    } catch (error) {
      log({
        level: 'error',
        msg: 'recording webhook successes failed; those deliveries will be sent again',
        count: batch.length,
        error: (error as Error).message,
      })
    }
  }

  /** The failures being written: flush waits for them too. */
  const failures = new Set<Promise<unknown>>()

  async function flush(): Promise<void> {
    await flushSuccesses()
    await Promise.allSettled([...failures])
  }

  /** Writes an attempt's result; true when the delivery now waits for a retry. */
  function record(endpointId: string, item: OutboxItem, sent: Sent): Promise<boolean> {
    const written = recordNow(endpointId, item, sent)
    if (!sent.outcome.ok) {
      const settled = written.then(
        () => undefined,
        () => undefined,
      )
      failures.add(settled)
      void settled.then(() => failures.delete(settled))
    }
    return written
  }

  async function recordNow(endpointId: string, item: OutboxItem, sent: Sent): Promise<boolean> {
    const { outcome, number, at } = sent
    if (outcome.ok) {
      successes.push({ id: item.id, endpointId, number, at, status: outcome.status })
      if (successes.length >= SUCCESS_BATCH) await flushSuccesses()
      else if (!flushTimer) flushTimer = setTimeout(() => void flushSuccesses(), SUCCESS_FLUSH_MS).unref() // flushSuccesses never rejects
      return false
    }
    await flushSuccesses() // in order: an earlier success clears the failure clock before this failure starts it
    const next = number >= MAX_ATTEMPTS ? null : at.getTime() + retryDelay(number, retryScale)
    const disabled = await store.write(async (tx) => {
      await markFailed(tx, item.id, number, at, next, outcome.status, outcome.error)
      return noteEndpointFailure(tx, endpointId, at)
    })
    // The origin only: a receiver's URL may carry a token in its path or query.
    log({
      level: next === null ? 'error' : 'warn',
      msg: next === null ? 'webhook delivery FAILED after its last attempt' : 'webhook delivery attempt failed',
      webhook_id: endpointId,
      delivery_id: item.id,
      event_type: item.event_type,
      attempt: number,
      origin: sent.origin,
      status_code: outcome.status,
      error: outcome.error,
      next_attempt_at: next === null ? null : new Date(next).toISOString(),
    })
    if (disabled) log({ level: 'warn', msg: 'webhook endpoint DISABLED: no successful delivery for 5 days', webhook_id: endpointId, origin: sent.origin })
    return next !== null
  }

  return { flush, record }
}
