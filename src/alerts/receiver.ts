// POST /hooks/alerts/{id} (SPEC 16): alerts from TradingView and other senders that cannot sign or
// add a header. The hook's id is in the path, its secret in the message. Checks, in this order:
// the hook is live (404), the sender's address is within the hook's source_cidrs (403), the body is
// at most 16 KiB (413) and a JSON object whatever its Content-Type (400 naming body), the secret
// matches (401); these write nothing but a counter. Then the hook's rate (429), the message (400
// naming the field), its age (400 alert_stale), each logged as REFUSED; then one change: a
// duplicate's first order, or the order through the pre-trade checks (./intake.ts). Answers are
// problem+json like the API's; a LIVE order goes to the venue after commit, never waited for.
import type { IncomingMessage } from 'node:http'
import type { BlockList } from 'node:net'
import { clientAddress } from '../http/client-address.ts'
import { problemReply, type Reply } from '../http/problem.ts'
import { RateLimiter, rateHeaders } from '../http/rate-limit.ts'
import type { Mount } from '../http/server.ts'
import { cidrList } from '../shared/cidr.ts'
import { DomainError, notFound } from '../shared/errors.ts'
import { collectBody } from '../shared/request-body.ts'
import { isId } from '../store/ids.ts'
import type { SecretBox } from '../store/secret-box.ts'
import type { Store } from '../store/store.ts'
import type { VenueQuotes } from '../trading/live/quotes.ts'
import { findReceivingHook, type ReceivingHook } from './hooks.ts'
import { acceptAlert, recordRefusal, refusalCounter } from './intake.ts'
import { alertIdOf, parseAlert, readEnvelope, secretMatches, staleness, withoutSecret } from './message.ts'

export const ALERTS_PREFIX = '/hooks/alerts'
/** Bytes of a message at most: TradingView's are a few hundred. */
export const ALERT_BODY_LIMIT = 16_384
/** Alerts a minute per hook (SPEC 16). */
export const ALERTS_PER_MINUTE = 60

const ROUTE = `${ALERTS_PREFIX}/:id`
const HOOK_PATH = /^\/hooks\/alerts\/([^/?]{1,64})\/?(?:\?.*)?$/

export interface AlertReceiverDeps {
  store: Store
  secrets: () => SecretBox
  /** LIVE alerts are priced at the venue before their transaction, as POST /api/v1/orders does. */
  quotes: VenueQuotes
  /** Proxies whose X-Forwarded-For is believed (--trusted-proxy): the sender's address for source_cidrs. */
  trustedProxies?: BlockList
}

/** Refusals that wrote nothing, since this process started: alerts to hooks that do not exist or are revoked. */
const counts = { unknown_hook: 0 }

/** What this process refused without a hook to count it on (for metrics). */
export function receiverCounts(): Readonly<typeof counts> {
  return counts
}

/** The body, at most ALERT_BODY_LIMIT bytes (collectBody leaves the stream whole, so a 413 can still be answered). */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return collectBody(req, ALERT_BODY_LIMIT, {
    tooLarge: () => new DomainError('payload_too_large', `the alert message is larger than ${ALERT_BODY_LIMIT} bytes`, { headers: { Connection: 'close' } }),
    // The sender went away mid-body: its fault, not a server error.
    incomplete: () => new DomainError('invalid_json', 'the body ended before it was complete', { errors: [{ field: 'body', message: 'is incomplete' }] }),
  })
}

/** Whether the sender's address is one the hook takes alerts from (any, without source_cidrs or with none listed). */
function sourceAllowed(hook: ReceivingHook, address: string): boolean {
  if (!hook.source_cidrs?.length) return true
  const list: BlockList = cidrList(hook.source_cidrs, 'source_cidrs')
  return address !== '?' && list.check(address, address.includes(':') ? 'ipv6' : 'ipv4')
}

const json = (status: number, body: unknown): Reply => ({ status, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })

/**
 * The receiver as the HTTP server mounts it.
 *
 * @example
 * createHttpServer(app.routes, { ...options, mounts: [alertReceiver({ store, secrets, quotes, trustedProxies })] })
 */
export function alertReceiver(deps: AlertReceiverDeps): Mount {
  const limiter = new RateLimiter(ALERTS_PER_MINUTE)
  const countRefusal = refusalCounter(deps.store)

  async function receive(req: IncomingMessage, id: string): Promise<Reply> {
    const hook = await findReceivingHook(deps.store.read, id, deps.secrets())
    if (!hook) {
      counts.unknown_hook++
      throw notFound('alert hook')
    }
    const address = clientAddress(req, deps.trustedProxies)
    if (!sourceAllowed(hook, address)) {
      await countRefusal(hook.id)
      throw new DomainError('source_forbidden', `alerts to this hook are taken only from its source_cidrs; this one came from ${address}`)
    }
    const envelope = readEnvelope(await readBody(req))
    if (!secretMatches(envelope, hook.secret)) {
      await countRefusal(hook.id)
      throw new DomainError('alert_unauthorized', "the message's secret is missing or is not this hook's")
    }
    const now = new Date()
    const rate = limiter.take(hook.id, now.getTime())
    if (!rate.allowed) {
      throw new DomainError('rate_limited', `this hook takes at most ${ALERTS_PER_MINUTE} alerts a minute; retry in ${rate.resetSeconds} s`, {
        headers: rateHeaders(rate),
      })
    }
    const logged = withoutSecret(envelope)
    let message: ReturnType<typeof parseAlert>
    try {
      message = parseAlert(envelope)
      const stale = staleness(message, hook.max_age_seconds, now)
      if (stale) throw stale
    } catch (error) {
      if (error instanceof DomainError) await recordRefusal(deps.store, hook, alertIdOf(envelope), logged, error, now)
      throw error
    }
    return json(200, await acceptAlert(deps.store, deps.quotes, hook, message, logged, now))
  }

  return {
    prefix: ALERTS_PREFIX,
    async handle(req, requestId) {
      const path = HOOK_PATH.exec(req.url ?? '')
      const route = path ? ROUTE : `${ALERTS_PREFIX}/*`
      let reply: Reply
      try {
        if (!path || !isId('ahk', path[1])) {
          counts.unknown_hook++
          throw notFound('alert hook')
        }
        if (req.method !== 'POST') {
          throw new DomainError('method_not_allowed', `${req.method} is not allowed here: alerts are POSTed`, { headers: { Allow: 'POST' } })
        }
        reply = await receive(req, path[1])
      } catch (error) {
        reply = problemReply(error, requestId)
      }
      // What was not read (a refusal before the body, a 413) is drained, never parsed.
      if (!req.complete) req.resume()
      return { reply, route }
    },
  }
}
