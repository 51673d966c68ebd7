// The in-process webhook sender that `serve` runs: it reads the outbox and POSTs signed deliveries.
// - One lane per endpoint. First attempts go out one at a time, in creation order; a failed one
//   leaves the line for the retry schedule, so it never holds back newer deliveries. Due retries
//   run beside the line, at most RETRY_CONCURRENCY at once per endpoint.
// - Each endpoint has its own keep-alive agent and its own in-flight budget, so a slow or dead
//   endpoint only slows itself; the global cap only bounds sockets, and waiting lanes get the
//   freed slots in turn.
// - Sockets resolve through guardedLookup (the address connected to is the address checked) and
//   redirects are never followed (node:https does not, and 3xx counts as a failure).
// - Failures are written at once, successes in small batches; a crash before a result is written
//   means that attempt is made again after restart: delivery is at least once, and receivers
//   dedupe on the body's `id`.
import type { Agent, RequestOptions } from 'node:https'
import { isIP } from 'node:net'
import type { ClientRequest } from 'node:http'
import { write } from '../store/db.ts'
import { log } from '../shared/log.ts'
import type { Service } from '../shared/service.ts'
import { VERSION } from '../version.ts'
import type { WebhookSettings } from './config.ts'
import { endpointForSending, noteEndpointFailure, noteEndpointSuccess, type SendingEndpoint } from './endpoints.ts'
import {
  dueRetries,
  endpointsWithDueWork,
  markFailed,
  markSucceeded,
  nextFirstAttempts,
  nextRetryAfter,
  onDeliveriesQueued,
  type OutboxItem,
} from './outbox.ts'
import { addressAllowed, guardedLookup } from './url-guard.ts'
import { signDelivery } from './signing.ts'

// node:https (and node:tls beneath it) takes 20-30 ms to load, a third of a start: it is loaded at
// the first delivery instead, so `serve` answers sooner and a process that never delivers never pays.
const https = () => process.getBuiltinModule('node:https')

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
/** Wait after attempt 1, 2, ... 7 fails; after the 8th the delivery is FAILED. */
export const RETRY_DELAYS_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1
const TIMEOUT_MS = 10 * SECOND
const RETRY_CONCURRENCY = 4
const FIRST_BATCH = 100
const SUCCESS_BATCH = 200
const SUCCESS_FLUSH_MS = 20
const GLOBAL_CONCURRENCY = 512
/** Finds work this process was not told about: rows from CLI commands, retries after a restart. */
const SCAN_MS = 500
const IDLE_LANE_MS = MINUTE
const STOP_GRACE_MS = 2 * SECOND

/** Delay before the retry that follows failed attempt `attempt` (1-based), with +-20% jitter. */
export function retryDelay(attempt: number, scale: number): number {
  const base = RETRY_DELAYS_MS[attempt - 1]
  return Math.round(base * (0.8 + Math.random() * 0.4) * scale)
}

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

type Outcome = { ok: true; status: number } | { ok: false; status: number | null; error: string }

interface Sent {
  outcome: Outcome
  number: number
  at: Date
  origin: string
}
interface Success {
  id: string
  endpointId: string
  number: number
  at: Date
  status: number
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

  function body(item: OutboxItem, sentAt: Date, attempt: number): string {
    // event data is stored as JSON text: spliced in as is, so nothing is re-serialised per attempt.
    return (
      `{"id":${JSON.stringify(item.event_id)},"type":${JSON.stringify(item.event_type)},"created_at":${JSON.stringify(item.event_created_at)},` +
      `"sent_at":${JSON.stringify(sentAt.toISOString())},"attempt":${attempt},"tenant_id":${JSON.stringify(item.tenant_id)},"data":${item.data}}`
    )
  }

  function post(agent: Agent, url: URL, headers: Record<string, string | number>, payload: string): Promise<Outcome> {
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (isIP(host) && !addressAllowed(host, settings.allowed)) {
      return Promise.resolve({
        ok: false,
        status: null,
        error: `address ${host} is loopback, private, link-local, multicast or reserved and not allowed by --webhook-allow-cidr`,
      })
    }
    const options: RequestOptions = {
      method: 'POST',
      hostname: host,
      port: url.port || 443,
      path: url.pathname + url.search,
      agent,
      headers,
    }
    return new Promise((resolve) => {
      let settled = false
      const finish = (outcome: Outcome) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        inFlight.delete(req)
        resolve(outcome)
      }
      const req = https().request(options, (res) => {
        const status = res.statusCode ?? 0
        res.on('error', (error) => finish({ ok: false, status, error: error.message }))
        res.on('end', () => {
          if (status >= 200 && status < 300) finish({ ok: true, status })
          else if (status >= 300 && status < 400) finish({ ok: false, status, error: `HTTP ${status}: redirects are not followed` })
          else finish({ ok: false, status, error: `HTTP ${status}` })
        })
        res.on('close', () => finish({ ok: false, status, error: `HTTP ${status}: response cut short` }))
        res.resume() // the body is not needed, but must be read for the socket to be reused
      })
      const timer = setTimeout(() => req.destroy(new Error(`no response within ${TIMEOUT_MS / SECOND} s`)), TIMEOUT_MS)
      inFlight.add(req)
      req.on('error', (error) => finish({ ok: false, status: null, error: error.message }))
      req.end(payload)
    })
  }

  let successes: Success[] = []
  let flushTimer: NodeJS.Timeout | undefined

  /**
   * Successes are written in batches, one transaction for many deliveries instead of one each. Every
   * read of the outbox by the sender flushes first, so nothing is offered twice; a crash before a
   * flush only means those deliveries are sent again (at least once).
   */
  function flushSuccesses(): void {
    clearTimeout(flushTimer)
    flushTimer = undefined
    if (!successes.length) return
    const batch = successes
    successes = []
    try {
      write(() => {
        for (const s of batch) markSucceeded(s.id, s.number, s.at, s.status)
        for (const id of new Set(batch.map((s) => s.endpointId))) noteEndpointSuccess(id)
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

  /** One attempt over the network; never rejects. */
  async function send(lane: Lane, endpoint: SendingEndpoint, item: OutboxItem): Promise<Sent> {
    const number = item.attempts + 1
    try {
      const url = new URL(endpoint.url)
      const sentAt = new Date()
      const payload = body(item, sentAt, number)
      const headers = {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(payload),
        'User-Agent': `Bulwark-Webhooks/${VERSION}`,
        'X-Service-Event': item.event_type,
        'X-Service-Delivery': item.id,
        ...signDelivery({ secret: endpoint.secret, previousSecret: endpoint.previousSecret, messageId: item.event_id, sentAt, body: payload }),
      }
      const outcome = await post(agentFor(lane, url), url, headers, payload)
      return { outcome, number, at: new Date(), origin: url.origin }
    } catch (error) {
      return { outcome: { ok: false, status: null, error: (error as Error).message }, number, at: new Date(), origin: '?' }
    }
  }

  /** Writes an attempt's result; true when the delivery now waits for a retry. */
  function record(lane: Lane, endpoint: SendingEndpoint, item: OutboxItem, sent: Sent): boolean {
    const { outcome, number, at } = sent
    lane.lastUsed = at.getTime()
    if (outcome.ok) {
      successes.push({ id: item.id, endpointId: endpoint.id, number, at, status: outcome.status })
      if (successes.length >= SUCCESS_BATCH) flushSuccesses()
      else if (!flushTimer) flushTimer = setTimeout(flushSuccesses, SUCCESS_FLUSH_MS).unref()
      return false
    }
    flushSuccesses() // in order: an earlier success clears the failure clock before this failure starts it
    const next = number >= MAX_ATTEMPTS ? null : at.getTime() + retryDelay(number, settings.retryScale)
    const disabled = write(() => {
      markFailed(item.id, number, at, next, outcome.status, outcome.error)
      return noteEndpointFailure(endpoint.id, at)
    })
    // The origin only: a receiver's URL may carry a token in its path or query.
    log({
      level: next === null ? 'error' : 'warn',
      msg: next === null ? 'webhook delivery FAILED after its last attempt' : 'webhook delivery attempt failed',
      webhook_id: endpoint.id,
      delivery_id: item.id,
      event_type: item.event_type,
      attempt: number,
      origin: sent.origin,
      status_code: outcome.status,
      error: outcome.error,
      next_attempt_at: next === null ? null : new Date(next).toISOString(),
    })
    if (disabled) log({ level: 'warn', msg: 'webhook endpoint DISABLED: no successful delivery for 5 days', webhook_id: endpoint.id, origin: sent.origin })
    return next !== null
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
      setImmediate(scan)
      return async () => {
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
