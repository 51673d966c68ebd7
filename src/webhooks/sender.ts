// The in-process webhook sender that `serve` runs: it reads the outbox and POSTs signed deliveries.
// - One lane per endpoint. First attempts go out one at a time, in creation order; a failed one
//   leaves the line for the retry schedule, so it never holds back newer deliveries. Due retries
//   run beside the line, at most RETRY_CONCURRENCY at once per endpoint.
// - Each endpoint has its own keep-alive agent and its own in-flight budget, so a slow or dead
//   endpoint only slows itself; the global cap only bounds sockets, and waiting lanes get the
//   freed slots in turn.
// - Sockets resolve through guardedLookup (the address connected to is the address checked) and
//   redirects are never followed (node:https does not, and 3xx counts as a failure).
// - One attempt over the network is ./attempt.ts; what is written after it (failures at once,
//   successes in batches, the retry schedule) is ./results.ts. Delivery is at least once.
// - What a lane does with the database (read the outbox, send) runs one step at a time per lane,
//   in order (Lane.chain): a step awaits its reads, and two steps of one lane never interleave, so
//   a delivery is never taken twice from one read.
import type { ClientRequest } from 'node:http'
import { log } from '../shared/log.ts'
import { CATCH_UP_AFTER_MS, type Service } from '../store/service.ts'
import type { Store } from '../store/store.ts'
import type { WebhookSettings } from './config.ts'
import { endpointForSending, type SendingEndpoint } from './endpoints.ts'
import { onDeliveriesQueued, type OutboxItem } from './outbox.ts'
import { dueRetries, endpointsWithDueWork, nextFirstAttempts, nextRetryAfter } from './delivery-queue.ts'
import { attemptDelivery, type Sent } from './attempt.ts'
import { agentFor, type Lane, newLane, RETRY_CONCURRENCY } from './lanes.ts'
import { createResultLog } from './results.ts'

const FIRST_BATCH = 100
const GLOBAL_CONCURRENCY = 512
/** Finds work this process was not told about: rows from CLI commands, retries after a restart. */
const SCAN_MS = 500
const IDLE_LANE_MS = 60_000
const STOP_GRACE_MS = 2000

type ResultLog = ReturnType<typeof createResultLog>

/**
 * The webhook sender `serve` runs: one lane per endpoint, retries on schedule, at least once. Its
 * state (lanes, sockets, pending successes) lives in this closure, made once by src/app.ts; the
 * store and the result log are set when it starts.
 */
export function createWebhookSender(settings: WebhookSettings): Service {
  const lanes = new Map<string, Lane>()
  const waiting = new Set<Lane>()
  const inFlight = new Set<ClientRequest>()
  let running = 0
  let accepting = false
  let writable = false
  let scanning = false
  let store: Store
  let results: ResultLog

  function laneOf(id: string): Lane {
    let lane = lanes.get(id)
    if (!lane) {
      lane = newLane(id)
      lanes.set(id, lane)
    }
    return lane
  }

  function dropLane(lane: Lane): void {
    clearTimeout(lane.timer)
    lane.agent?.destroy()
    waiting.delete(lane)
    lanes.delete(lane.id)
  }

  /** One attempt over the network through the lane's agent; never rejects. */
  function send(lane: Lane, endpoint: SendingEndpoint, item: OutboxItem): Promise<Sent> {
    return attemptDelivery(endpoint, item, (url) => agentFor(lane, url, settings), settings.allowed, inFlight)
  }

  /** Writes an attempt's result; true when the delivery now waits for a retry. */
  function record(lane: Lane, endpoint: SendingEndpoint, item: OutboxItem, sent: Sent): Promise<boolean> {
    lane.lastUsed = sent.at.getTime()
    return results.record(endpoint.id, item, sent)
  }

  function senderError(lane: Lane, item?: OutboxItem) {
    return (error: unknown) => log({ level: 'error', msg: 'webhook sender error', webhook_id: lane.id, delivery_id: item?.id, error: (error as Error).message })
  }

  /** Queues a step of the lane behind its others; skipped once the sender stops accepting. */
  function onLane(lane: Lane, step: (lane: Lane) => Promise<void>): void {
    lane.steps++
    lane.chain = lane.chain
      .then(() => (accepting ? step(lane) : undefined))
      .catch(senderError(lane))
      .finally(() => {
        lane.steps--
      })
  }
  const pumpFirst = (lane: Lane) => onLane(lane, firstStep)
  const pumpRetries = (lane: Lane) => onLane(lane, retryStep)

  /** Takes a global slot, or queues the lane until one frees up. */
  function takeSlot(lane: Lane): boolean {
    if (running < GLOBAL_CONCURRENCY) {
      running++
      return true
    }
    waiting.add(lane)
    return false
  }

  /** A waiting lane for each free slot (one that finds nothing to send leaves its slot to the scan). */
  function releaseSlot(): void {
    running--
    let free = GLOBAL_CONCURRENCY - running
    for (const lane of waiting) {
      if (free-- <= 0) break
      waiting.delete(lane)
      pumpFirst(lane)
      pumpRetries(lane)
    }
  }

  /** The endpoint as it is now (secret, URL), or undefined when it is gone or not ACTIVE. */
  async function activeEndpoint(lane: Lane): Promise<SendingEndpoint | undefined> {
    const endpoint = await endpointForSending(store.read, lane.id, new Date())
    if (endpoint?.status === 'ACTIVE') return endpoint
    lane.queue = [] // reloaded from the outbox if the endpoint is reactivated
    if (!lane.firstBusy && lane.retrying.size === 0) dropLane(lane)
    return undefined
  }

  /** Sends the oldest waiting first attempt, unless one is already on its way. */
  async function firstStep(lane: Lane): Promise<void> {
    if (lane.firstBusy) return
    const endpoint = await activeEndpoint(lane)
    if (!endpoint) return
    if (!lane.queue.length) {
      await results.flush()
      lane.queue = await nextFirstAttempts(store.read, lane.id, FIRST_BATCH)
    }
    const item = lane.queue[0]
    if (!accepting || !item || !takeSlot(lane)) return
    lane.queue.shift()
    lane.firstBusy = true
    send(lane, endpoint, item)
      .then(async (sent) => {
        lane.firstBusy = false
        releaseSlot()
        if (!writable) return // stopped mid-flight: the row stays PENDING and goes out again after restart
        // With more in line, the next request leaves while this result is written, so the write
        // overlaps a network round trip. With none, the result is written first: the outbox is then
        // read again (after results.flush(), which waits for it) and must not offer this delivery a second time.
        const written = record(lane, endpoint, item, sent)
        if (lane.queue.length) pumpFirst(lane)
        const waitsForRetry = await written
        pumpFirst(lane)
        if (waitsForRetry) pumpRetries(lane)
      })
      .catch(senderError(lane, item))
  }

  /** Sends due retries (beside the line of first attempts) and arms a timer for the next one. */
  async function retryStep(lane: Lane): Promise<void> {
    clearTimeout(lane.timer)
    lane.timer = undefined
    const endpoint = await activeEndpoint(lane)
    if (!endpoint) return
    await results.flush()
    const now = Date.now()
    const room = RETRY_CONCURRENCY - lane.retrying.size
    if (room > 0) {
      const due = (await dueRetries(store.read, lane.id, now, room + lane.retrying.size)).filter((i) => !lane.retrying.has(i.id)).slice(0, room)
      for (const item of due) {
        if (!accepting || !takeSlot(lane)) return
        lane.retrying.add(item.id)
        send(lane, endpoint, item)
          .then(async (sent) => {
            releaseSlot()
            try {
              if (!writable) return
              await record(lane, endpoint, item, sent) // still "retrying" until written: no read offers it again meanwhile
            } finally {
              lane.retrying.delete(item.id)
            }
            pumpRetries(lane)
          })
          .catch(senderError(lane, item))
      }
    }
    const nextAt = await nextRetryAfter(store.read, lane.id, now)
    if (nextAt !== null && accepting) {
      clearTimeout(lane.timer)
      lane.timer = setTimeout(() => pumpRetries(lane), Math.min(Math.max(0, nextAt - now), 2 ** 31 - 1))
      lane.timer.unref()
    }
  }

  /** Never rejects. */
  async function scan(): Promise<void> {
    if (!accepting || scanning) return
    scanning = true
    const now = Date.now()
    try {
      await results.flush()
      for (const id of await endpointsWithDueWork(store.read, now)) {
        const lane = laneOf(id)
        pumpFirst(lane)
        pumpRetries(lane)
      }
    } catch (error) {
      log({ level: 'error', msg: 'webhook outbox scan failed', error: (error as Error).message })
    } finally {
      scanning = false
    }
    for (const lane of lanes.values()) {
      const idle = !lane.firstBusy && lane.retrying.size === 0 && !lane.queue.length && !lane.timer && !waiting.has(lane) && lane.steps === 0
      if (idle && now - lane.lastUsed > IDLE_LANE_MS) dropLane(lane)
    }
  }

  return {
    name: 'webhook sender',
    start(context) {
      store = context.store
      results = createResultLog(store, settings.retryScale)
      accepting = true
      writable = true
      onDeliveriesQueued((ids) => {
        for (const id of ids) pumpFirst(laneOf(id))
      })
      const scanTimer = setInterval(() => void scan(), SCAN_MS)
      scanTimer.unref()
      const first = setTimeout(() => void scan(), CATCH_UP_AFTER_MS)
      return async () => {
        clearTimeout(first)
        accepting = false
        clearInterval(scanTimer)
        for (const lane of lanes.values()) clearTimeout(lane.timer)
        // Steps under way end without sending more (each lane's chain never rejects).
        await Promise.all([...lanes.values()].map((lane) => lane.chain))
        // Let attempts under way finish and record their result; abandon the rest (sent again later).
        const deadline = Date.now() + STOP_GRACE_MS
        while (inFlight.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
        await results.flush() // and the results being written
        writable = false
        for (const req of inFlight) req.destroy()
        for (const lane of [...lanes.values()]) dropLane(lane)
      }
    },
  }
}
