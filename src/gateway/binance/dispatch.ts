// The gateway's front door (SPEC 14): a request under /gateway/binance becomes a call of one of the
// dialect's routes, after Binance's request security and the gateway's own rate limit, and every
// refusal, ours or Binance's, is answered in Binance's shape and status. A bot's client never sees
// problem+json, never a stack trace.
import type { IncomingMessage } from 'node:http'
import type { BlockList } from 'node:net'
import { clientAddress } from '../../http/client-address.ts'
import type { Reply } from '../../http/problem.ts'
import { RateLimiter } from '../../http/rate-limit.ts'
import { DomainError } from '../../shared/errors.ts'
import { log } from '../../shared/log.ts'
import { collectBody, hasBody } from '../../shared/request-body.ts'
import type { SecretBox } from '../../store/secret-box.ts'
import { isBusy } from '../../store/sqlite/busy.ts'
import { DatabaseUnavailableError, type Store } from '../../store/store.ts'
import type { GatewayKey } from '../keys.ts'
import { BinanceError, errorReply, unsupported } from './errors.ts'
import { authenticate, type Params, readParams, ReplayGuard, type Signed } from './signed.ts'

export const GATEWAY_PREFIX = '/gateway/binance'
/** Requests a minute per key (or per address, without a key): Binance's own figure for an IP. */
export const GATEWAY_RATE_PER_MINUTE = 1200
const BODY_LIMIT = 64 * 1024

/** One call of a route, its request checked. */
export interface GatewayCall {
  method: string
  /** The path under the prefix: /api/v3/order. */
  path: string
  params: Params
  /** The signing key: always there on a SIGNED route, absent on a NONE one. */
  key: GatewayKey | undefined
  /** A SIGNED route's key and signature: a change records the signature with itself (./replays.ts). */
  signed: Signed | undefined
  now: Date
  requestId: string
}

export interface GatewayRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  /** Under the prefix, exactly: /api/v3/order. */
  path: string
  /** NONE: public, answered without a key, as Binance does; SIGNED: a gateway key and its signature. */
  security: 'NONE' | 'SIGNED'
  handle(call: GatewayCall): Promise<Reply>
}

export interface GatewayOptions {
  store: Store
  secrets: () => SecretBox
  routes: GatewayRoute[]
  trustedProxies?: BlockList
  ratePerMinute?: number
}

/** What the server needs of the gateway: an answer, and the route to log it under. */
export type GatewayHandler = (req: IncomingMessage, requestId: string) => Promise<{ reply: Reply; route: string }>

// The paths a Binance client may try that the gateway will never serve (REST only: SPEC 14).
const UNSUPPORTED = [/\/userDataStream$/, /^\/ws(\/|$)/, /^\/stream(\/|$)/, /\/listenKey$/]

/**
 * The gateway's handler for the HTTP server.
 *
 * @example
 * const gateway = createGateway({ store, secrets, routes: binanceRoutes(...) })
 * const { reply } = await gateway(req, 'req_1') // reply.status 200, body '{}' for GET /gateway/binance/api/v3/ping
 */
export function createGateway(options: GatewayOptions): GatewayHandler {
  const replays = new ReplayGuard()
  const limiter = new RateLimiter(options.ratePerMinute ?? GATEWAY_RATE_PER_MINUTE)
  const byRoute = new Map(options.routes.map((route) => [`${route.method} ${route.path}`, route]))
  const knownPaths = new Set(options.routes.map((route) => route.path))

  function take(who: string, now: Date): void {
    const decision = limiter.take(who, now.getTime())
    if (decision.allowed) return
    throw new BinanceError(-1003, `Too many requests; current limit is ${decision.limit} requests per minute. Please use the gateway less often.`, {
      'Retry-After': String(decision.resetSeconds),
    })
  }

  async function call(req: IncomingMessage, requestId: string, path: string, rawQuery: string): Promise<Reply> {
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET')
    const route = byRoute.get(`${method} ${path}`)
    if (!route) {
      if (UNSUPPORTED.some((pattern) => pattern.test(path))) throw unsupported()
      if (knownPaths.has(path)) throw new BinanceError(-1020, `This operation is not supported: ${method} ${path}.`, {}, 405)
      throw new BinanceError(-1020, `This operation is not supported: ${path} is not an endpoint of the gateway.`, {}, 404)
    }
    const rawBody = await readForm(req)
    const { params, signatures } = readParams(rawQuery, rawBody)
    const now = new Date()
    const address = () => `address:${clientAddress(req, options.trustedProxies)}`
    let signed: Signed | undefined
    if (route.security === 'SIGNED') {
      const request = { method, path, header: req.headers['x-mbx-apikey'], rawQuery, rawBody, params, signatures }
      try {
        signed = await authenticate(options.store.read, options.secrets(), replays, request, now.getTime())
      } catch (error) {
        // Failed attempts count against their address, so a flood of bad keys or signatures meets 429 too.
        take(address(), now)
        throw error
      }
    }
    take(signed ? `key:${signed.key.id}` : address(), now)
    return route.handle({ method, path, params, key: signed?.key, signed, now, requestId })
  }

  return async (req, requestId) => {
    const url = req.url ?? ''
    const queryAt = url.indexOf('?')
    const path = (queryAt === -1 ? url : url.slice(0, queryAt)).slice(GATEWAY_PREFIX.length) || '/'
    const rawQuery = queryAt === -1 ? '' : url.slice(queryAt + 1)
    try {
      return { reply: await call(req, requestId, path, rawQuery), route: `${GATEWAY_PREFIX}${byRoute.has(`${req.method} ${path}`) ? path : '/*'}` }
    } catch (error) {
      if (!req.complete) req.resume()
      return { reply: errorReply(asBinanceError(error, requestId)), route: `${GATEWAY_PREFIX}${path.length < 64 ? path : '/*'}` }
    }
  }
}

/** Any failure as Binance would word it; a database that cannot answer is a retryable 503. */
function asBinanceError(error: unknown, requestId: string): BinanceError {
  if (error instanceof BinanceError) return error
  if (error instanceof DatabaseUnavailableError || isBusy(error)) {
    return new BinanceError(-1001, 'Internal error; unable to process your request. Please try again.', { 'Retry-After': '1' }, 503)
  }
  if (error instanceof DomainError) return new BinanceError(-1000, error.detail)
  log({ level: 'error', request_id: requestId, msg: 'gateway: unhandled error', error: error instanceof Error ? error.stack : String(error) })
  return new BinanceError(-1000, `An unknown error occurred while processing the request (request id ${requestId}).`, {}, 500)
}

/** The body as Binance takes it: a form (application/x-www-form-urlencoded), at most 64 KiB. */
async function readForm(req: IncomingMessage): Promise<string> {
  if (!hasBody(req)) return ''
  const body = await collectBody(req, BODY_LIMIT, {
    tooLarge: () => new BinanceError(-1000, `The request body is larger than ${BODY_LIMIT} bytes.`, { Connection: 'close' }, 413),
    incomplete: () => new BinanceError(-1000, 'The request was closed before its body arrived.', {}, 400),
  })
  const type = req.headers['content-type'] ?? ''
  if (body.length > 0 && !/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
    throw new BinanceError(-1000, `Content-Type must be application/x-www-form-urlencoded, got ${JSON.stringify(type.slice(0, 100))}.`, {}, 415)
  }
  return body.toString('utf8')
}
