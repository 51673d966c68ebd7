// The venue's HTTPS server on 127.0.0.1: each request is recorded, meets the fault switches, pays
// its request weight, has its parameters checked against the endpoint's documented list, is
// authenticated when the endpoint is signed, and is answered with JSON or Binance's {code, msg}.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { authenticate, readParams, type Params } from './auth.ts'
import { VenueError } from './errors.ts'
import { Faults, type Fault } from './faults.ts'
import type { Routes, VenueState } from './routes.ts'

export interface RequestRecord {
  at: number
  method: string
  path: string
  /** Every parameter but the signature. */
  params: Params
  apiKey?: string
  /** The status the client received (none when a fault gave it no answer). */
  status?: number
  /** The venue's refusal code, even when a fault lost the answer. */
  code?: number
  fault?: Fault['kind']
  /** Which connection carried it: 1 for the first the venue accepted, 2 for the next, ... */
  connection: number
}

export interface ServerOptions {
  /**
   * Closes a connection idle this long, without telling the client beforehand (no Keep-Alive
   * header), as a venue's load balancer does. Left out: Node's own timeout, announced to the client.
   */
  keepAliveMs?: number
}

interface Answer {
  status: number
  headers: Record<string, string>
  body: string
}

export class VenueServer {
  readonly requests: RequestRecord[] = []
  readonly faults = new Faults()
  port = 0
  private readonly server: Server
  private readonly hanging = new Set<ServerResponse>()
  private readonly delayed = new Set<NodeJS.Timeout>()
  private readonly connections = new WeakMap<object, number>()
  private accepted = 0
  private listening = false

  constructor(
    private readonly state: VenueState,
    private readonly routes: Routes,
    tls: { key: string; cert: string },
    options: ServerOptions = {},
  ) {
    const { keepAliveMs } = options
    const idle = keepAliveMs === undefined ? {} : { keepAliveTimeout: keepAliveMs, keepAliveTimeoutBuffer: 0 }
    this.server = createServer({ key: tls.key, cert: tls.cert, ...idle }, (req, res) => {
      // A Connection header of its own keeps Node from announcing its timeout (Keep-Alive: timeout=N).
      if (keepAliveMs !== undefined && req.headers.connection !== 'close') res.setHeader('Connection', 'keep-alive')
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks).toString('utf8')))
    })
    this.server.on('secureConnection', (socket) => this.connections.set(socket, ++this.accepted))
  }

  async listen(port = this.port): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject)
        resolve()
      })
    })
    this.port = (this.server.address() as AddressInfo).port
    this.listening = true
  }

  /** Closes the listener and every connection: new requests are refused until up(). */
  async down(): Promise<void> {
    if (!this.listening) return
    this.listening = false
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
    for (const res of this.hanging) res.destroy()
    this.server.closeAllConnections()
    await closed
  }

  async up(): Promise<void> {
    if (!this.listening) await this.listen(this.port)
  }

  private handle(req: IncomingMessage, res: ServerResponse, rawBody: string): void {
    const method = req.method ?? 'GET'
    const url = req.url ?? '/'
    const at = url.indexOf('?')
    const path = at < 0 ? url : url.slice(0, at)
    const query = at < 0 ? '' : url.slice(at + 1)
    const form = String(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')
    const header = req.headers['x-mbx-apikey']
    const record: RequestRecord = {
      at: this.state.now(),
      method,
      path,
      params: {},
      apiKey: typeof header === 'string' ? header : undefined,
      connection: this.connections.get(req.socket) ?? 0,
    }
    this.requests.push(record)
    const fault = this.faults.take(method, path)
    if (fault) record.fault = fault.kind
    if (fault?.kind === 'delay' && !fault.execute) {
      this.later(fault.ms, res, () => {
        const answer = this.answer(record, method, path, query, form ? rawBody : '', header)
        record.status = answer.status
        return answer
      })
      return
    }
    const executeFirst = fault?.kind === 'drop' || (fault !== undefined && fault.execute === true)
    if (fault && !executeFirst) {
      this.misbehave(fault, req, res, record)
      return
    }
    const answer = this.answer(record, method, path, query, form ? rawBody : '', header)
    record.status = answer.status
    if (fault?.kind === 'delay') {
      this.later(fault.ms, res, () => answer)
      return
    }
    if (fault) {
      this.misbehave(fault, req, res, record)
      return
    }
    res.writeHead(answer.status, answer.headers)
    res.end(answer.body)
  }

  /** Answers `ms` from now what `answer` says then; a client gone by then (or cut by down()) hears nothing. */
  private later(ms: number, res: ServerResponse, answer: () => Answer): void {
    this.hanging.add(res)
    res.on('close', () => this.hanging.delete(res))
    const timer = setTimeout(() => {
      this.delayed.delete(timer)
      const { status, headers, body } = answer()
      if (res.destroyed) return
      res.writeHead(status, headers)
      res.end(body)
    }, ms)
    this.delayed.add(timer)
  }

  private misbehave(fault: Fault, req: IncomingMessage, res: ServerResponse, record: RequestRecord): void {
    record.status = fault.kind === 'status' ? (fault.status ?? 503) : undefined
    if (fault.kind === 'drop') {
      req.socket.destroy()
    } else if (fault.kind === 'hang') {
      this.hanging.add(res)
      res.on('close', () => this.hanging.delete(res))
    } else if (fault.kind === 'status') {
      const status = fault.status ?? 503
      res.writeHead(status, { 'Content-Type': 'text/html' })
      res.end(`<html><body><h1>${status} ${STATUS_CODES[status]}</h1></body></html>`)
    }
  }

  private answer(record: RequestRecord, method: string, path: string, query: string, body: string, header: string | string[] | undefined): Answer {
    const headers: Record<string, string> = { 'Content-Type': 'application/json;charset=UTF-8' }
    const route = this.routes[`${method} ${path}`]
    if (!route) return { status: 404, headers: { 'Content-Type': 'text/plain' }, body: `test venue: no route ${method} ${path}` }
    try {
      const params = readParams(query, body)
      record.params = params
      const limiter = this.state.limiter
      const charged = limiter.charge(typeof route.weight === 'function' ? route.weight(params) : route.weight)
      headers[limiter.header()] = String(charged.used)
      if (charged.retryAfter !== undefined) {
        headers['Retry-After'] = String(charged.retryAfter)
        throw new VenueError(-1003, limiter.message())
      }
      const sent = Object.keys(params).length
      const read = Object.keys(params).filter((name) => route.params.includes(name)).length
      if (read < sent) throw new VenueError(-1104, `Not all sent parameters were read; read '${read}' parameter(s) but was sent '${sent}'.`)
      const key = route.security === 'NONE' ? undefined : authenticate(this.state.keys, header, { query, body }, params, this.state.now(), route.security)
      return { status: 200, headers, body: JSON.stringify(route.handle(params, key!)) }
    } catch (thrown) {
      if (!(thrown instanceof VenueError)) console.error('test venue: internal error', thrown)
      const error = thrown instanceof VenueError ? thrown : new VenueError(-1000, 'An unknown error occurred while processing the request.', 500)
      const { code, msg, status } = error
      record.code = code
      return { status, headers, body: JSON.stringify({ code, msg }) }
    }
  }

  async close(): Promise<void> {
    for (const timer of this.delayed) clearTimeout(timer)
    await this.down()
  }
}
