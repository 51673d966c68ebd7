// The request pipeline, for one matched route: credential and its rate (or login's limits), scope
// and role, path parameters, query and body validated against the spec, the spec's async check,
// then the handler inside one write transaction for a change (waiting asynchronously for a lock
// another process holds), with Idempotency-Key replays stored in that same transaction.
import type { BlockList } from 'node:net'
import type { IncomingMessage } from 'node:http'
import { DomainError, type ErrorCode, type FieldError } from '../shared/errors.ts'
import type { SecretBox } from '../store/secret-box.ts'
import { type Store, type Tx, transactionOver } from '../store/store.ts'
import { checkNoBody, parseJson, readBody } from './body.ts'
import { clientAddress } from './client-address.ts'
import { statusOf } from './errors.ts'
import { checkKey, remember, replay, requestHash } from './idempotency.ts'
import type { Reply } from './problem.ts'
import { RateLimiter, rateHeaders, type RateDecision } from './rate-limit.ts'
import { Raw, RecordedRefusal, type Ctx, type Guard, type Principal, type RouteSpec } from './route.ts'
import { validate, validateQuery } from './schema.ts'

const ANONYMOUS: Principal = { kind: 'session', tenantId: '', credentialId: '', userId: null, email: '', role: null, scopes: [] }
const LOGIN_PATH = '/api/v1/auth/login'

/** A request as the router hands it on: its matched pattern, raw path parameters and query. */
export interface RoutedRequest {
  method: string
  url: string
  node: IncomingMessage
  requestId: string
  route?: string
  params?: Record<string, string>
  query?: Record<string, string | string[]>
}

export interface PipelineOptions {
  ratePerMinute: number
  /** Login attempts a minute per (address, e-mail); an address alone gets ten times as many. */
  loginPerMinute: number
  /** Proxies whose X-Forwarded-For is believed (--trusted-proxy); nobody else's is. */
  trustedProxies?: BlockList
  /** Who may call what: auth's guard, from src/app.ts. */
  guard: Guard
  /** Seals an answer that shows a secret once, kept for its idempotent replay. */
  secrets: SecretBox
  /** The database: each change is one of its write transactions. */
  store: Store
}

/** ctx.tx of a handler that runs in no transaction: any use is a programming error. */
const NO_TRANSACTION: Tx = {
  get engine(): never {
    throw transactionOver()
  },
  get: () => Promise.reject(transactionOver()),
  all: () => Promise.reject(transactionOver()),
  run: () => Promise.reject(transactionOver()),
  savepoint: () => Promise.reject(transactionOver()),
  afterCommit: () => {
    throw transactionOver()
  },
}

/**
 * The function that answers a request once its route is known.
 *
 * @example
 * const run = createPipeline({ ratePerMinute: 1200, loginPerMinute: 10, guard })
 * const reply = await run(spec, request)
 */
export function createPipeline(options: PipelineOptions): (spec: RouteSpec, request: RoutedRequest) => Promise<Reply> {
  const credentialLimiter = new RateLimiter(options.ratePerMinute)
  // Login is limited per (address, e-mail), so somebody else's failures never lock a user out, and
  // per address, so one address cannot try many e-mails quickly.
  const loginLimiter = new RateLimiter(options.loginPerMinute)
  const loginAddressLimiter = new RateLimiter(options.loginPerMinute * 10)

  function limitLogin(decision: RateDecision, headers: Record<string, string>, per: string): void {
    Object.assign(headers, rateHeaders(decision))
    if (!decision.allowed)
      throw new DomainError('rate_limited', `more than ${decision.limit} login attempts a minute ${per}; retry in ${decision.resetSeconds} s`, {
        headers: rateHeaders(decision),
      })
  }

  /** Every answer to a rate-limited caller carries its RateLimit headers, refusals included. */
  async function run(spec: RouteSpec, request: RoutedRequest): Promise<Reply> {
    const headers: Record<string, string> = {}
    try {
      return await answer(spec, request, headers)
    } catch (error) {
      throw error instanceof DomainError && 'RateLimit-Limit' in headers ? withHeaders(error, headers) : error
    }
  }

  async function answer(spec: RouteSpec, request: RoutedRequest, headers: Record<string, string>): Promise<Reply> {
    const req = request.node
    const now = new Date()
    let principal = ANONYMOUS
    const login = spec.path === LOGIN_PATH
    const address = login ? clientAddress(req, options.trustedProxies) : ''
    if (spec.access !== 'public') {
      principal = await options.guard.authenticate(req.headers.authorization, now)
      const decision = credentialLimiter.take(principal.credentialId, now.getTime())
      Object.assign(headers, rateHeaders(decision))
      if (!decision.allowed)
        throw new DomainError('rate_limited', `more than ${decision.limit} requests a minute for this credential; retry in ${decision.resetSeconds} s`, {
          headers: rateHeaders(decision),
        })
      options.guard.authorize(principal, spec.access)
    } else if (login) {
      limitLogin(loginAddressLimiter.take(address, now.getTime()), headers, 'from this address')
    }
    const params: Record<string, string> = {}
    for (const [name, value] of Object.entries(request.params ?? {})) {
      try {
        params[name] = decodeURIComponent(value)
      } catch {
        throw new DomainError('not_found', `no resource at ${new URL(request.url).pathname}`)
      }
    }
    const query = validateQuery(request.query ?? {}, spec.query ?? {})
    // An operation that takes no body (every one but a GET whose spec has none) accepts none, an
    // empty one or {}: anything else is refused here, before its handler reads any state.
    const rawBody = spec.body || spec.method !== 'GET' ? await readBody(req) : undefined
    let body: unknown
    if (spec.body) {
      if (rawBody === undefined)
        throw new DomainError('validation_failed', 'a JSON request body is required', { errors: [{ field: 'body', message: 'is required' }] })
      body = validate(parseJson(rawBody), spec.body)
    } else if (rawBody !== undefined) {
      checkNoBody(rawBody, `${spec.method} ${spec.path}`)
    }
    if (login) {
      const email = String((body as { email: string }).email).toLowerCase()
      limitLogin(loginLimiter.take(`${address} ${email}`, now.getTime()), headers, 'for this e-mail from this address')
    }
    const url = new URL(request.url)
    const store = options.store
    const ctx: Ctx = { params, query, body, principal, requestId: request.requestId, now, url, req, headers, db: store.read, tx: NO_TRANSACTION, store }
    if (spec.check) await spec.check(ctx)
    /** The handler's ctx inside the change's transaction. */
    const within = (tx: Tx): Ctx => ({ ...ctx, db: tx, tx })

    const idempotencyKey = req.headers['idempotency-key']
    if (spec.method === 'POST' && spec.access !== 'public' && typeof idempotencyKey === 'string') {
      checkKey(idempotencyKey)
      // Nothing, an empty body and {} are the same request to an operation that takes no body.
      const hash = requestHash(spec.method, url.pathname + url.search, spec.body ? rawBody : undefined)
      const outcome = await store.write(
        async (tx) => {
          const previous = await replay(tx, principal.tenantId, idempotencyKey, hash, now.getTime(), options.secrets)
          if (previous) {
            const replayed = { ...headers, 'Idempotent-Replayed': 'true' }
            if (previous.status !== 200) throw refusalOf(previous.body, replayed)
            return { status: previous.status, headers: { ...replayed, 'Content-Type': 'application/json' }, body: previous.body }
          }
          const result = await spec.handler(within(tx))
          if (result instanceof RecordedRefusal) {
            // A refusal that recorded something (an incident) is an outcome too: a retry replays it
            // instead of recording the breach again.
            const { code, detail, extra } = result.error
            await remember(tx, principal.tenantId, idempotencyKey, hash, statusOf(code), { code, detail, errors: extra.errors }, undefined, now.getTime())
            return result
          }
          await remember(tx, principal.tenantId, idempotencyKey, hash, 200, result, spec.sealOnReplay ? options.secrets : undefined, now.getTime())
          return jsonReply(result, headers)
        },
        { urgent: spec.urgent },
      )
      if (outcome instanceof RecordedRefusal) throw withHeaders(outcome.error, headers)
      return outcome
    }
    // A change is one transaction, which waits asynchronously while another process holds the lock.
    const writes = spec.method !== 'GET' && spec.transaction !== false
    const result = writes ? await store.write(async (tx) => spec.handler(within(tx)), { urgent: spec.urgent }) : await spec.handler(ctx)
    if (result instanceof RecordedRefusal) throw withHeaders(result.error, headers)
    if (result instanceof Raw)
      return { status: result.status, headers: { ...headers, ...result.headers, 'Content-Type': result.contentType }, body: result.body }
    return jsonReply(result, headers)
  }

  return run
}

/** A stored refusal, thrown again as it was first answered (with this request's id). */
function refusalOf(stored: string, headers: Record<string, string>): DomainError {
  const { code, detail, errors } = JSON.parse(stored) as { code: ErrorCode; detail: string; errors?: FieldError[] }
  return new DomainError(code, detail, { errors, headers })
}

function withHeaders(error: DomainError, headers: Record<string, string>): DomainError {
  return new DomainError(error.code, error.detail, { ...error.extra, headers: { ...headers, ...error.extra.headers } })
}

function jsonReply(result: unknown, headers: Record<string, string>): Reply {
  // Encoded once: Content-Length and the socket then use the same bytes, with no second pass.
  return { status: 200, headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' }, body: Buffer.from(JSON.stringify(result)) }
}
