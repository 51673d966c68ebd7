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
import type { Agent } from 'node:https'
import type { ClientRequest } from 'node:http'
import { log } from '../shared/log.ts'
import { CATCH_UP_AFTER_MS, type Service } from '../store/service.ts'
import type { WebhookSettings } from './config.ts'
import { endpointForSending, type SendingEndpoint } from './endpoints.ts'
import { onDeliveriesQueued, type OutboxItem } from './outbox.ts'
import { dueRetries, endpointsWithDueWork, nextFirstAttempts, nextRetryAfter } from './delivery-queue.ts'
import { guardedLookup } from './url-guard.ts'
import { attemptDelivery, https, type Sent } from './attempt.ts'
import { createResultLog } from './results.ts'

const SECOND = 1000
const RETRY_CONCURRENCY = 4
const FIRST_BATCH = 100
const GLOBAL_CONCURRENCY = 512
/** Finds work this process was not told about: rows from CLI commands, retries after a restart. */
const SCAN_MS = 500
const IDLE_LANE_MS = 60 * SECOND
const STOP_GRACE_MS = 2 * SECOND

interface Lane {
  id: string
  /** First attempts read ahead from the outbox, oldest first. */
  queue: OutboxItem[]
  firstBusy: boolean
  retrying: Set<string>
  timer?: NodeJS.Timeout
  agent?: Agent
  origin?: string
  lastUsed: number
}

/**
 * The webhook sender `serve` runs: one lane per endpoint, retries on schedule, at least once. Its
 * state (lanes, sockets, pending successes) lives in this closure, made once by src/app.ts.
 */
export function createWebhookSender(settings: WebhookSettings): Service {
  const lanes = new Map<string, Lane>()
  const waiting = new Set<Lane>()
  const inFlight = new Set<ClientRequest>()
  let running = 0
  let accepting = false
  let writable = false

  function laneOf(id: string): Lane {
    let lane = lanes.get(id)
    if (!lane) {
      lane = { id, queue: [], firstBusy: false, retrying: new Set(), lastUsed: Date.now() }
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

  function agentFor(lane: Lane, url: URL): Agent {
    if (lane.agent && lane.origin === url.origin) return lane.agent
    lane.agent?.destroy()
    lane.agent = new (https().Agent)({
      keepAlive: true,
      maxSockets: 1 + RETRY_CONCURRENCY,
      maxFreeSockets: 1 + RETRY_CONCURRENCY,
      timeout: 30 * SECOND, // idle keep-alive sockets; each attempt has its own 10 s deadline
      lookup: guardedLookup(settings.allowed),
      ...(settings.secureContext ? { secureContext: settings.secureContext } : {}),
    })
    lane.origin = url.origin
    return lane.agent
  }

  const results = createResultLog(settings.retryScale)
  const flushSuccesses = results.flush

  /** One attempt over the network through the lane's agent; never rejects. */
  function send(lane: Lane, endpoint: SendingEndpoint, item: OutboxItem): Promise<Sent> {
    return attemptDelivery(endpoint, item, (url) => agentFor(lane, url), settings.allowed, inFlight)
  }

  /** Writes an attempt's result; true when the delivery now waits for a retry. */
  function record(lane: Lane, endpoint: SendingEndpoint, item: OutboxItem, sent: Sent): boolean {
    lane.lastUsed = sent.at.getTime()
    return results.record(endpoint.id, item, sent)
  }

  function senderError(lane: Lane, item: OutboxItem) {
    return (error: unknown) => log({ level: 'error', msg: 'webhook sender error', webhook_id: lane.id, delivery_id: item.id, error: (error as Error).message })
  }

  /** Takes a global slot, or queues the lane until one frees up. */
  function takeSlot(lane: Lane): boolean {
    if (running < GLOBAL_CONCURRENCY) {
      running++
      return true
    }
    waiting.add(lane)
    return false
  }

  function releaseSlot(): void {
    running--
    for (const lane of waiting) {
      if (running >= GLOBAL_CONCURRENCY) break
      waiting.delete(lane)
      pumpFirst(lane)
      pumpRetries(lane)
    }
  }

  /** The endpoint as it is now (secret, URL), or undefined when it is gone or not ACTIVE. */
  function activeEndpoint(lane: Lane): SendingEndpoint | undefined {
    const endpoint = endpointForSending(lane.id, new Date())
    if (endpoint?.status === 'ACTIVE') return endpoint
    lane.queue = [] // reloaded from the outbox if the endpoint is reactivated
    if (!lane.firstBusy && lane.retrying.size === 0) dropLane(lane)
    return undefined
  }

  /** Sends the oldest waiting first attempt, unless one is already on its way. */
  function pumpFirst(lane: Lane): void {
    if (!accepting || lane.firstBusy) return
    const endpoint = activeEndpoint(lane)
    if (!endpoint) return
    if (!lane.queue.length) {
      flushSuccesses()
      lane.queue = nextFirstAttempts(lane.id, FIRST_BATCH)
    }
    const item = lane.queue[0]
    if (!item || !takeSlot(lane)) return
    lane.queue.shift()
    lane.firstBusy = true
    send(lane, endpoint, item)
      .then((sent) => {
        lane.firstBusy = false
        releaseSlot()
        if (!writable) return // stopped mid-flight: the row stays PENDING and goes out again after restart
        // With more in line, the next request leaves before this result is written, so the write
        // overlaps a network round trip. With none, the result is written first: the outbox is then
        // read again and must not offer this delivery a second time.
        if (lane.queue.length) pumpFirst(lane)
        const waitsForRetry = record(lane, endpoint, item, sent)
        pumpFirst(lane)
        if (waitsForRetry) pumpRetries(lane)
      })
      .catch(senderError(lane, item))
  }

  /** Sends due retries (beside the line of first attempts) and arms a timer for the next one. */
  function pumpRetries(lane: Lane): void {
    if (!accepting) return
    clearTimeout(lane.timer)
    lane.timer = undefined
    const endpoint = activeEndpoint(lane)
    if (!endpoint) return
    flushSuccesses()
    const now = Date.now()
    const room = RETRY_CONCURRENCY - lane.retrying.size
    if (room > 0) {
      const due = dueRetries(lane.id, now, room + lane.retrying.size)
        .filter((i) => !lane.retrying.has(i.id))
        .slice(0, room)
      for (const item of due) {
        if (!takeSlot(lane)) return
        lane.retrying.add(item.id)
        send(lane, endpoint, item)
          .then((sent) => {
            lane.retrying.delete(item.id)
            releaseSlot()
            if (!writable) return
            record(lane, endpoint, item, sent)
            pumpRetries(lane)
          })
          .catch(senderError(lane, item))
      }
    }
    const nextAt = nextRetryAfter(lane.id, now)
    if (nextAt !== null) {
      lane.timer = setTimeout(() => pumpRetries(lane), Math.min(Math.max(0, nextAt - now), 2 ** 31 - 1))
      lane.timer.unref()
    }
  }

  function scan(): void {
    if (!accepting) return
    const now = Date.now()
    try {
      flushSuccesses()
      for (const id of endpointsWithDueWork(now)) {
        const lane = laneOf(id)
        pumpFirst(lane)
        pumpRetries(lane)
      }
    } catch (error) {
      log({ level: 'error', msg: 'webhook outbox scan failed', error: (error as Error).message })
    }
    for (const lane of lanes.values()) {
      const idle = !lane.firstBusy && lane.retrying.size === 0 && !lane.queue.length && !lane.timer && !waiting.has(lane)
      if (idle && now - lane.lastUsed > IDLE_LANE_MS) dropLane(lane)
    }
  }

  return {
    name: 'webhook sender',
    start() {
      accepting = true
      writable = true
      onDeliveriesQueued((ids) => {
        for (const id of ids) pumpFirst(laneOf(id))
      })
      const scanTimer = setInterval(scan, SCAN_MS)
      scanTimer.unref()
      const first = setTimeout(scan, CATCH_UP_AFTER_MS)
      return async () => {
        clearTimeout(first)
        accepting = false
        clearInterval(scanTimer)
        for (const lane of lanes.values()) clearTimeout(lane.timer)
        // Let attempts under way finish and record their result; abandon the rest (sent again later).
        const deadline = Date.now() + STOP_GRACE_MS
        while (inFlight.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
        flushSuccesses()
        writable = false
        for (const req of inFlight) req.destroy()
        for (const lane of [...lanes.values()]) dropLane(lane)
      }
    },
  }
}
