// The sender's lanes (./sender.ts): one per endpoint, with its line of first attempts, its retries
// under way, its keep-alive agent and the steps it runs one at a time.
import type { Agent } from 'node:https'
import { https } from './attempt.ts'
import type { WebhookSettings } from './config.ts'
import type { OutboxItem } from './outbox.ts'
import { guardedLookup } from './url-guard.ts'

/** Retries of one endpoint under way at once, beside its one first attempt. */
export const RETRY_CONCURRENCY = 4

export interface Lane {
  id: string
  /** First attempts read ahead from the outbox, oldest first. */
  queue: OutboxItem[]
  firstBusy: boolean
  retrying: Set<string>
  timer?: NodeJS.Timeout
  agent?: Agent
  origin?: string
  lastUsed: number
  /** The lane's steps (reads of the outbox, then sends), run one after another; never rejects. */
  chain: Promise<void>
  /** Steps queued on chain and not yet done. */
  steps: number
}

export function newLane(id: string): Lane {
  return { id, queue: [], firstBusy: false, retrying: new Set(), lastUsed: Date.now(), chain: Promise.resolve(), steps: 0 }
}

/** The lane's keep-alive agent for this origin (a new one when the endpoint's origin changed). */
export function agentFor(lane: Lane, url: URL, settings: WebhookSettings): Agent {
  if (lane.agent && lane.origin === url.origin) return lane.agent
  lane.agent?.destroy()
  lane.agent = new (https().Agent)({
    keepAlive: true,
    maxSockets: 1 + RETRY_CONCURRENCY,
    maxFreeSockets: 1 + RETRY_CONCURRENCY,
    timeout: 30_000, // idle keep-alive sockets; each attempt has its own 10 s deadline
    lookup: guardedLookup(settings.allowed),
    ...(settings.secureContext ? { secureContext: settings.secureContext } : {}),
  })
  lane.origin = url.origin
  return lane.agent
}
