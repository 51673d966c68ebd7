// Public market data for the gateway (SPEC 14): a GET relayed to the server's own exchange (the
// --venue-url origin, else Binance's), its answer kept for at most 1 s so that a fleet of bots
// polling the same ticker costs the venue one request a second, not one per bot. The venue's status
// and body are relayed as they came (its refusals included: they are Binance's words already); a
// venue silent for 7 s is -1007, inside ccxt's default 10 s timeout, so a bot sees Binance's "send
// status unknown" rather than a timeout of its own.
import type { VenueSettings } from '../../config.ts'
import type { Reply } from '../../http/problem.ts'
import { log } from '../../shared/log.ts'
import { openExchange, sharedTransport, type Transport } from '../../venues/exchange.ts'
import { BinanceError } from './errors.ts'

/** Where the answers come from without --venue-url. */
export const BINANCE_ORIGIN = 'https://api.binance.com'
/** How long an answer is served again; counted from when its request left, so no answer is older. */
export const MARKET_CACHE_MS = 1000
/** The venue's time to answer before -1007 (SPEC 14). */
export const VENUE_TIMEOUT_MS = 7000
/** Distinct requests kept; a bot asks a handful, a fleet a few dozen. */
const MAX_ENTRIES = 256

/** What the venue answered. */
export interface VenueAnswer {
  status: number
  contentType: string
  body: Buffer
  /** The venue's Retry-After with a 429 or 418: the wait is the bot's too, the server's address being the one limited. */
  retryAfter?: string
}

interface Client {
  undici: { request(url: string, options: object): Promise<UndiciResponse> }
  transport: Transport
}

interface UndiciResponse {
  statusCode: number
  headers: Record<string, string | string[] | undefined>
  body: { arrayBuffer(): Promise<ArrayBuffer> }
}

interface Entry {
  expires: number
  answer: Promise<VenueAnswer>
}

export class MarketProxy {
  private client: Promise<Client> | undefined
  private readonly cache = new Map<string, Entry>()
  readonly origin: string

  constructor(
    private readonly venues: VenueSettings,
    private readonly timeoutMs = VENUE_TIMEOUT_MS,
  ) {
    this.origin = venues.url ?? BINANCE_ORIGIN
  }

  /**
   * The venue's answer to GET `path`?`query`, at most MARKET_CACHE_MS old; requests for the same
   * path and query while one is on its way wait for that one.
   *
   * @example
   * const answer = await proxy.get('/api/v3/ticker/price', 'symbol=BTCUSDT') // { status: 200, body: '{"symbol":"BTCUSDT","price":"65000.00"}' }
   */
  get(path: string, query: string): Promise<VenueAnswer> {
    const id = query === '' ? path : `${path}?${query}`
    const now = Date.now()
    const known = this.cache.get(id)
    if (known && known.expires > now) return known.answer
    if (known) this.cache.delete(id)
    const entry: Entry = { expires: now + MARKET_CACHE_MS, answer: this.fetch(id) }
    this.keep(id, entry)
    // A failure is not kept: the next request tries the venue again.
    entry.answer.catch(() => {
      if (this.cache.get(id) === entry) this.cache.delete(id)
    })
    return entry.answer
  }

  private keep(id: string, entry: Entry): void {
    if (this.cache.size >= MAX_ENTRIES) {
      const now = Date.now()
      for (const [key, old] of this.cache) if (old.expires <= now) this.cache.delete(key)
      // Still full of fresh answers: the oldest goes (a Map iterates in insertion order).
      if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!)
    }
    this.cache.set(id, entry)
  }

  private async fetch(pathAndQuery: string): Promise<VenueAnswer> {
    const signal = AbortSignal.timeout(this.timeoutMs)
    try {
      const { undici, transport } = await this.connect()
      // No header of the bot's goes along (its X-MBX-APIKEY least of all): the request is the server's.
      const res = await undici.request(`${this.origin}${pathAndQuery}`, {
        method: 'GET',
        headers: { 'accept-encoding': 'gzip' },
        dispatcher: transport.dispatcher,
        signal,
      })
      let body: Buffer = Buffer.from(await res.body.arrayBuffer())
      if (header(res, 'content-encoding') === 'gzip') body = await gunzip(body)
      const retryAfter = header(res, 'retry-after')
      return { status: res.statusCode, contentType: header(res, 'content-type') ?? 'application/json;charset=UTF-8', body, retryAfter }
    } catch (error) {
      const path = pathAndQuery.split('?')[0]
      if (signal.aborted) {
        log({ level: 'warn', msg: 'gateway: the venue did not answer in time', path, timeout_ms: this.timeoutMs })
        throw new BinanceError(-1007, 'Timeout waiting for response from backend server. Send status unknown; execution status unknown.')
      }
      log({ level: 'warn', msg: 'gateway: the venue could not be reached', path, error: error instanceof Error ? error.message : String(error) })
      throw new BinanceError(-1001, 'Internal error; unable to process your request. Please try again.', { 'Retry-After': '1' }, 503)
    }
  }

  /**
   * The connections to the venue, opened at the first request: one pool of kept-alive connections
   * trusting --ca-file, its TLS context built once (src/venues/exchange.ts), never one per request.
   */
  private connect(): Promise<Client> {
    this.client ??= (async () => {
      // A ccxt instance only lends its undici module (inside the executable, ccxt brings its own).
      const lender = await openExchange({ exchange: 'binance' })
      const transport = await sharedTransport(lender, this.venues.caFile)
      await lender.fetchDispatcher?.close()
      return { undici: lender.undiciModule, transport }
    })()
    this.client.catch(() => {
      this.client = undefined
    })
    return this.client
  }
}

function header(res: UndiciResponse, name: string): string | undefined {
  const value = res.headers[name]
  return Array.isArray(value) ? value[0] : value
}

function gunzip(body: Buffer): Promise<Buffer> {
  const zlib = process.getBuiltinModule('node:zlib')
  return new Promise((resolve, reject) => zlib.gunzip(body, (error, result) => (error ? reject(error) : resolve(result))))
}

/** A venue's answer as the gateway's own. */
export function relayed(answer: VenueAnswer): Reply {
  const headers: Record<string, string> = { 'Content-Type': answer.contentType }
  if (answer.retryAfter !== undefined) headers['Retry-After'] = answer.retryAfter
  return { status: answer.status, headers, body: answer.body }
}
