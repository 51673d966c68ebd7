// node:http <-> itty-router. A request: router -> guard -> validation -> idempotency -> handler ->
// JSON, with errors turned into problem+json in one place and one log line per request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { BlockList } from 'node:net'
import type { Duplex } from 'node:stream'
import { IttyRouter } from 'itty-router'
import { newId } from '../store/ids.ts'
import { writeWhenFree } from '../store/write-queue.ts'
import { readBody, parseJson } from './body.ts'
import { DomainError, type ErrorCode, type FieldError } from '../shared/errors.ts'
import { statusOf } from './errors.ts'
import { checkKey, remember, replay, requestHash } from './idempotency.ts'
import { log, logRequest } from '../shared/log.ts'
import { problemReply, type Reply } from './problem.ts'
import { takeTurn } from './priority.ts'
import { RateLimiter, rateHeaders, type RateDecision } from './rate-limit.ts'
import { clientAddress } from './client-address.ts'
import { Raw, RecordedRefusal, type Ctx, type Guard, type Principal, type RouteSpec } from './route.ts'
import { validate, validateQuery } from './schema.ts'

export interface ServerOptions {
  ratePerMinute: number
  /** Login attempts a minute per (address, e-mail); an address alone gets ten times as many. */
  loginPerMinute: number
  /** Proxies whose X-Forwarded-For is believed (--trusted-proxy); nobody else's is. */
  trustedProxies?: BlockList
  quiet?: boolean
  /** Who may call what: auth's guard, from src/app.ts. */
  guard: Guard
  /** Told of every answer (serve --metrics counts them). */
  observe?: (method: string, route: string, status: number, seconds: number) => void
}

const ANONYMOUS: Principal = { kind: 'session', tenantId: '', credentialId: '', userId: null, email: '', role: null, scopes: [] }
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
const LOGIN_PATH = '/api/v1/auth/login'

interface RoutedRequest {
  method: string
  url: string
  node: IncomingMessage
  requestId: string
  route?: string
  params?: Record<string, string>
  query?: Record<string, string | string[]>
}

/** The HTTP server for these routes (the app's whole list, from src/app.ts). */
export function createHttpServer(routes: RouteSpec[], options: ServerOptions): Server {
  const router = IttyRouter()
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
    const rawBody = spec.body ? await readBody(req) : undefined
    let body: unknown
    if (spec.body) {
      if (rawBody === undefined)
        throw new DomainError('validation_failed', 'a JSON request body is required', { errors: [{ field: 'body', message: 'is required' }] })
      body = validate(parseJson(rawBody), spec.body)
    }
    if (login) {
      const email = String((body as { email: string }).email).toLowerCase()
      limitLogin(loginLimiter.take(`${address} ${email}`, now.getTime()), headers, 'for this e-mail from this address')
    }
    const url = new URL(request.url)
    const ctx: Ctx = { params, query, body, principal, requestId: request.requestId, now, url, req, headers }
    if (spec.check) await spec.check(ctx)

    const idempotencyKey = req.headers['idempotency-key']
    if (spec.method === 'POST' && spec.access !== 'public' && typeof idempotencyKey === 'string') {
      checkKey(idempotencyKey)
      const hash = requestHash(spec.method, url.pathname + url.search, rawBody)
      const outcome = await writeWhenFree(
        () => {
          const previous = replay(principal.tenantId, idempotencyKey, hash, now.getTime())
          if (previous) {
            const replayed = { ...headers, 'Idempotent-Replayed': 'true' }
            if (previous.status !== 200) throw refusalOf(previous.body, replayed)
            return { status: previous.status, headers: { ...replayed, 'Content-Type': 'application/json' }, body: previous.body }
          }
          const result = spec.handler(ctx)
          if (result instanceof Promise) throw new Error(`${spec.method} ${spec.path} must be synchronous to support Idempotency-Key`)
          if (result instanceof RecordedRefusal) {
            // A refusal that recorded something (an incident) is an outcome too: a retry replays it
            // instead of recording the breach again.
            const { code, detail, extra } = result.error
            remember(principal.tenantId, idempotencyKey, hash, statusOf(code), { code, detail, errors: extra.errors }, false, now.getTime())
            return result
          }
          remember(principal.tenantId, idempotencyKey, hash, 200, result, spec.sealOnReplay === true, now.getTime())
          return jsonReply(result, headers)
        },
        { urgent: spec.urgent },
      )
      if (outcome instanceof RecordedRefusal) throw withHeaders(outcome.error, headers)
      return outcome
    }
    // A change is one transaction, which waits asynchronously while another process holds the lock.
    const writes = spec.method !== 'GET' && spec.transaction !== false
    const result = writes ? await writeWhenFree(() => spec.handler(ctx), { urgent: spec.urgent }) : await spec.handler(ctx)
    if (result instanceof RecordedRefusal) throw withHeaders(result.error, headers)
    if (result instanceof Raw)
      return { status: result.status, headers: { ...headers, ...result.headers, 'Content-Type': result.contentType }, body: result.body }
    return jsonReply(result, headers)
  }

  for (const spec of routes) {
    const register = (router as unknown as Record<string, (path: string, handler: (r: RoutedRequest) => Promise<Reply>) => void>)[spec.method.toLowerCase()]
    register(spec.path, (request) => run(spec, request))
  }

  // Paths without parameters (most of the API) are looked up directly, skipping itty-router's URL
  // parse and its scan of every pattern. Anything unusual (parameters, trailing or double slashes,
  // dot segments, escapes, a fragment) goes through the router as before.
  const exact = new Map<string, RouteSpec>()
  const table = router.routes as unknown as [string, RegExp][]
  routes.forEach((spec, i) => {
    // Only where the router would pick this very route: no earlier pattern matches the path too.
    const shadowed = table.slice(0, i).some(([method, pattern]) => method === spec.method && pattern.test(spec.path))
    if (!/[:*]/.test(spec.path) && !shadowed) exact.set(`${spec.method} ${spec.path}`, spec)
  })
  const PLAIN_PATH = /^(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$/

  function exactRoute(request: RoutedRequest): RouteSpec | undefined {
    const target = request.node.url ?? ''
    const mark = target.indexOf('?')
    const path = mark < 0 ? target : target.slice(0, mark)
    const spec = exact.get(`${request.method} ${path}`)
    if (!spec || !PLAIN_PATH.test(path) || target.includes('#')) return undefined
    const query: Record<string, string | string[]> = { __proto__: null } as never
    if (mark >= 0) {
      // The same reading as itty-router's, so both paths see the same query.
      for (const [name, value] of new URLSearchParams(target.slice(mark + 1))) query[name] = query[name] ? ([] as string[]).concat(query[name], value) : value
    }
    request.route = spec.path
    request.params = {}
    request.query = query
    return spec
  }

  function allowedMethods(pathname: string): string[] {
    const methods = new Set<string>()
    for (const [method, pattern] of router.routes as unknown as [string, RegExp][]) if (pattern.test(pathname)) methods.add(method)
    if (methods.has('GET')) methods.add('HEAD')
    return [...methods]
  }

  async function dispatch(request: RoutedRequest): Promise<Reply> {
    const req = request.node
    if (req.httpVersion === '1.1' && req.headers.host === undefined)
      throw new DomainError('validation_failed', 'an HTTP/1.1 request needs a Host header', { errors: [{ field: 'Host', message: 'is required' }] })
    if (!request.url.startsWith('http://localhost/')) throw new DomainError('not_found', 'request target must be an absolute path')
    const url = request.url
    const spec = exactRoute(request)
    if (spec) return run(spec, request)
    let reply: Reply | undefined
    try {
      reply = (await router.fetch(request as never)) as Reply | undefined
    } catch (err) {
      if (err instanceof TypeError && /URL/i.test(err.message)) throw new DomainError('not_found', 'request target is not a valid URL path')
      throw err
    }
    if (reply) return reply
    const pathname = new URL(url).pathname
    const allowed = allowedMethods(pathname)
    if (allowed.length)
      throw new DomainError('method_not_allowed', `${req.method} is not allowed on ${pathname}; allowed: ${allowed.join(', ')}`, {
        headers: { Allow: allowed.join(', ') },
      })
    throw new DomainError('not_found', `no route for ${req.method} ${pathname.slice(0, 200)}`)
  }

  const urgent = new Set(routes.filter((spec) => spec.urgent).map((spec) => `${spec.method} ${spec.path}`))

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = process.hrtime.bigint()
    const incoming = req.headers['x-request-id']
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : newId('req')
    const request: RoutedRequest = {
      method: req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET'),
      url: `http://localhost${req.url ?? ''}`,
      node: req,
      requestId,
    }
    let reply: Reply
    try {
      if (!urgent.has(`${request.method} ${(req.url ?? '').split('?')[0]}`)) await takeTurn()
      reply = await dispatch(request)
    } catch (err) {
      reply = problemReply(err, requestId)
      if (reply.status === 413) req.resume()
    }
    if (res.headersSent || res.destroyed) return
    res.writeHead(reply.status, { ...reply.headers, 'X-Request-Id': requestId, 'Content-Length': Buffer.byteLength(reply.body) })
    res.end(reply.body)
    options.observe?.(req.method ?? '', request.route ?? 'unmatched', reply.status, Number(process.hrtime.bigint() - started) / 1e9)
    if (!options.quiet) {
      logRequest({
        level: 'info',
        request_id: requestId,
        method: req.method,
        route: request.route ?? 'unmatched',
        status: reply.status,
        duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
      })
    }
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err) => {
      log({ level: 'error', msg: 'response failed', error: String(err) })
      res.destroy()
    })
  }
  // requireHostHeader off: the missing Host is refused in dispatch, as problem+json like the rest.
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000, keepAliveTimeout: 5_000, requireHostHeader: false }, onRequest)
  // Expectations other than 100-continue are ignored (RFC 9110 10.1.1 allows it) rather than 417.
  server.on('checkExpectation', onRequest)
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerMalformed(err, socket, options.quiet === true))
  return server
}

/** HTTP the parser rejects (bad framing, oversized headers, timeouts) never reaches the router:
 * it still gets a problem+json answer with a request id, and the connection is closed. */
function answerMalformed(err: NodeJS.ErrnoException, socket: Duplex, quiet: boolean): void {
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy()
    return
  }
  const requestId = newId('req')
  const reason =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? 'request line and headers are too large'
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'the request did not arrive in time'
        : `malformed HTTP request (${String(err.code ?? 'parse error').slice(0, 60)})`
  const reply = problemReply(new DomainError('validation_failed', reason, { errors: [{ field: 'request', message: reason }] }), requestId)
  const head = [
    `HTTP/1.1 ${reply.status} Bad Request`,
    ...Object.entries(reply.headers).map(([k, v]) => `${k}: ${v}`),
    `X-Request-Id: ${requestId}`,
    `Content-Length: ${Buffer.byteLength(reply.body)}`,
    'Connection: close',
  ]
  socket.end(`${head.join('\r\n')}\r\n\r\n${reply.body}`)
  if (!quiet) log({ level: 'info', request_id: requestId, route: 'malformed', status: reply.status, error: err.code })
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
