// One delivery attempt over the network: the body of SPEC 7 (event data spliced in as stored), its
// signatures, and a POST through node:https that reports an outcome and never throws. 2xx is
// success; a redirect is never followed and counts as a failure, as does no answer in 10 s.
import type { Agent, RequestOptions } from 'node:https'
import type { ClientRequest } from 'node:http'
import { type BlockList, isIP } from 'node:net'
import { VERSION } from '../version.ts'
import type { SendingEndpoint } from './endpoints.ts'
import type { OutboxItem } from './outbox.ts'
import { signDelivery } from './signing.ts'
import { addressAllowed } from './url-guard.ts'

// node:https (and node:tls beneath it) takes 20-30 ms to load, a third of a start: it is loaded at
// the first delivery instead, so `serve` answers sooner and a process that never delivers never pays.
export const https = () => process.getBuiltinModule('node:https')

const TIMEOUT_MS = 10_000

export type Outcome = { ok: true; status: number } | { ok: false; status: number | null; error: string }

export interface Sent {
  outcome: Outcome
  number: number
  at: Date
  origin: string
}

/** The signed body of one attempt (SPEC 7). */
function deliveryBody(item: OutboxItem, sentAt: Date, attempt: number): string {
  // event data is stored as JSON text: spliced in as is, so nothing is re-serialised per attempt.
  return (
    `{"id":${JSON.stringify(item.event_id)},"type":${JSON.stringify(item.event_type)},"created_at":${JSON.stringify(item.event_created_at)},` +
    `"sent_at":${JSON.stringify(sentAt.toISOString())},"attempt":${attempt},"tenant_id":${JSON.stringify(item.tenant_id)},"data":${item.data}}`
  )
}

/** POSTs one payload; resolves with the outcome, never rejects. `inFlight` holds the request while it runs (SIGTERM aborts what is left). */
function post(
  agent: Agent,
  url: URL,
  headers: Record<string, string | number>,
  payload: string,
  allowed: BlockList,
  inFlight: Set<ClientRequest>,
): Promise<Outcome> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) && !addressAllowed(host, allowed)) {
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
    const timer = setTimeout(() => req.destroy(new Error(`no response within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS)
    inFlight.add(req)
    req.on('error', (error) => finish({ ok: false, status: null, error: error.message }))
    req.end(payload)
  })
}

/**
 * One attempt over the network: the signed body, posted through the agent `agentFor` gives for the
 * endpoint's origin. Never rejects: every failure is an outcome.
 */
export async function attemptDelivery(
  endpoint: SendingEndpoint,
  item: OutboxItem,
  agentFor: (url: URL) => Agent,
  allowed: BlockList,
  inFlight: Set<ClientRequest>,
): Promise<Sent> {
  const number = item.attempts + 1
  try {
    const url = new URL(endpoint.url)
    const sentAt = new Date()
    const payload = deliveryBody(item, sentAt, number)
    const headers = {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(payload),
      'User-Agent': `Bulwark-Webhooks/${VERSION}`,
      'X-Service-Event': item.event_type,
      'X-Service-Delivery': item.id,
      ...signDelivery({ secret: endpoint.secret, previousSecret: endpoint.previousSecret, messageId: item.event_id, sentAt, body: payload }),
    }
    const outcome = await post(agentFor(url), url, headers, payload, allowed, inFlight)
    return { outcome, number, at: new Date(), origin: url.origin }
  } catch (error) {
    return { outcome: { ok: false, status: null, error: (error as Error).message }, number, at: new Date(), origin: '?' }
  }
}
