// node:http <-> the routes. One request: its turn (the kill switch goes first), routing, the
// pipeline, problem+json for every error in one place, one log line; HTTP the parser rejects still
// gets a problem+json answer.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { BlockList } from 'node:net'
import type { Duplex } from 'node:stream'
import { DomainError } from '../shared/errors.ts'
import { log, logRequest } from '../shared/log.ts'
import { newId } from '../store/ids.ts'
import type { SecretBox } from '../store/secret-box.ts'
import type { Store } from '../store/store.ts'
import { createPipeline, type RoutedRequest } from './pipeline.ts'
import { takeTurn } from './priority.ts'
import { problemReply, type Reply } from './problem.ts'
import type { Guard, RouteSpec } from './route.ts'
import { createRouting } from './routing.ts'

export interface ServerOptions {
  ratePerMinute: number
  /** Login attempts a minute per (address, e-mail); an address alone gets ten times as many. */
  loginPerMinute: number
  /** Proxies whose X-Forwarded-For is believed (--trusted-proxy); nobody else's is. */
  trustedProxies?: BlockList
  quiet?: boolean
  /** Who may call what: auth's guard, from src/app.ts. */
  guard: Guard
  /** Seals an answer that shows a secret once, kept for its idempotent replay. */
  secrets: SecretBox
  /** The database: each change is one of its write transactions. */
  store: Store
  /** Told of every answer (serve --metrics counts them). */
  observe?: (method: string, route: string, status: number, seconds: number) => void
  /** Paths answered by something else than the routes (the gateway's Binance dialect), each in its own shape. */
  mounts?: Mount[]
}

/** A prefix whose requests a handler of its own answers, in its own dialect. */
export interface Mount {
  /** A path prefix such as /gateway/binance: the path itself and everything under it. */
  prefix: string
  handle(req: IncomingMessage, requestId: string): Promise<{ reply: Reply; route: string }>
  /** The requests that skip the turn (./priority.ts), as urgent routes do: `path` is the part under the prefix. */
  urgent?(method: string, path: string): boolean
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The HTTP server for these routes (the app's whole list, from src/app.ts). */
export function createHttpServer(routes: RouteSpec[], options: ServerOptions): Server {
  const dispatch = createRouting(routes, createPipeline(options))
  const urgent = new Set(routes.filter((spec) => spec.urgent).map((spec) => `${spec.method} ${spec.path}`))
  const mounts = options.mounts ?? []
  const mountOf = (url: string) => mounts.find((m) => url.startsWith(m.prefix) && /^($|[/?])/.test(url.slice(m.prefix.length)))

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
      const path = (req.url ?? '').split('?')[0]
      const mount = mountOf(path)
      const first = mount ? mount.urgent?.(request.method, path.slice(mount.prefix.length)) : urgent.has(`${request.method} ${path}`)
      if (!first) await takeTurn()
      if (mount) {
        const answer = await mount.handle(req, requestId)
        request.route = answer.route
        reply = answer.reply
      } else reply = await dispatch(request)
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
  // An idle connection is kept 65 s (Node's default: 5 s), past the 60 s of common load balancers: a
  // bot that places an order every few seconds or minutes reuses its connection instead of opening
  // one before each (undici keeps it until a second before the announced timeout).
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000, keepAliveTimeout: 65_000, requireHostHeader: false }, onRequest)
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
