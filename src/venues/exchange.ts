// The one place Bulwark builds a ccxt exchange. ccxt is imported on first use, so a Bulwark with no
// venue and no market data never loads it. What this adds to a plain `new ccxt[id]()`: spot
// defaults, another server for the exchange's API (a testnet, a LAN gateway, the test venue) with
// a CA trusted besides the default ones, a first loadMarkets() that may fail without breaking the
// instance, and the venue's own error code (ccxt drops it from its messages).
import { readFileSync } from 'node:fs'
import type { SecureContext } from 'node:tls'
import type { Exchange } from 'ccxt'
import { loadCcxt } from './ccxt-loader.ts'
import { validationError } from '../shared/errors.ts'
import { parseOrigin } from '../shared/origin.ts'
import { useNativeHmac } from './native-hmac.ts'

export type { Exchange }

export interface ExchangeOptions {
  /** A ccxt id: 'binance', 'kraken', ... */
  exchange: string
  /** Scheme, host and port only (https://127.0.0.1:9443): replaces those of every API URL, paths kept. */
  venueUrl?: string
  /** A PEM file of CAs trusted for the venue, in addition to Node's default ones. */
  caFile?: string
  apiKey?: string
  secret?: string
  password?: string
  /**
   * The connection pool to send through (sharedTransport): the instances of one account share its
   * kept-alive connections instead of each opening its own.
   */
  transport?: Transport
}

/** An undici dispatcher: kept-alive connections to the venue, their TLS context built once. */
export interface Transport {
  dispatcher: unknown
  close(): Promise<void>
}

/**
 * A ccxt exchange for spot trading.
 *
 * @example
 * const exchange = await openExchange({ exchange: 'binance', venueUrl: 'https://127.0.0.1:9443', caFile: 'ca.pem', apiKey, secret })
 * const balance = await exchange.fetchBalance()
 */
export async function openExchange(options: ExchangeOptions): Promise<Exchange> {
  const origin = options.venueUrl === undefined ? undefined : originOf(options.venueUrl)
  const ccxt = await loadCcxt()
  const Class = Object.hasOwn(ccxt.exchanges, options.exchange)
    ? (ccxt.exchanges as Record<string, new (config: object) => Exchange>)[options.exchange]
    : undefined
  if (!Class) throw validationError('exchange', `"${options.exchange}" is not an exchange ccxt ${ccxt.version} knows`)
  const exchange = new Class({
    apiKey: options.apiKey,
    secret: options.secret,
    password: options.password,
    options: {
      defaultType: 'spot',
      fetchMarkets: { types: ['spot'] },
      fetchCurrencies: false,
      // binance otherwise asks for its margin pairs during loadMarkets whenever it holds a key.
      fetchMargins: false,
      recvWindow: 5000,
      warnOnFetchOpenOrdersWithoutSymbol: false,
    },
  })
  if (origin) pointAt(exchange, origin)
  useNativeHmac(exchange)
  if (options.transport) await sendThrough(exchange, options.transport)
  else if (options.caFile !== undefined) await sendThrough(exchange, await sharedTransport(exchange, options.caFile))
  recoverLoadMarkets(exchange)
  return exchange
}

/**
 * One pool of kept-alive connections for several instances of an exchange, trusting `caFile`
 * besides Node's default CAs. Its TLS context is built here, once: building one from the ~270
 * default CAs costs 20-60 ms of blocked event loop, which undici would otherwise pay at every new
 * connection. `exchange` lends its undici module (inside the executable, ccxt brings its own).
 *
 * @example
 * const transport = await sharedTransport(first, config.venues.caFile)
 * const second = await openExchange({ ...options, transport })
 */
export async function sharedTransport(exchange: Exchange, caFile?: string): Promise<Transport> {
  await exchange.loadFetchImplementation()
  if (!exchange.undiciModule) throw new Error('ccxt runs without undici here: the connections cannot be shared')
  const options = exchange.getDispatcherOptions(true)
  // node:tls is loaded here, when a venue is opened, not at every start.
  const { createSecureContext, getCACertificates } = process.getBuiltinModule('node:tls')
  const secureContext: SecureContext | undefined =
    caFile === undefined ? undefined : createSecureContext({ ca: [...getCACertificates('default'), readFileSync(caFile, 'utf8')] })
  const dispatcher = new exchange.undiciModule.Agent({ ...options, connect: { ...options.connect, ...(secureContext && { secureContext }) } })
  return { dispatcher, close: () => dispatcher.close() }
}

/** ccxt fetches through undici with an Agent of its own per instance: use the shared one instead. */
async function sendThrough(exchange: Exchange, transport: Transport): Promise<void> {
  await exchange.loadFetchImplementation()
  const previous = exchange.fetchDispatcher
  exchange.fetchDispatcher = transport.dispatcher
  await previous?.close()
}

function originOf(venueUrl: string): string {
  const parsed = parseOrigin(venueUrl)
  if (!parsed.ok) throw validationError('venue_url', parsed.reason)
  return parsed.origin
}

/** Rewrites every API URL to the venue's origin; errors are still classified by the original URLs. */
function pointAt(exchange: Exchange, origin: string): void {
  const originals = new Map<string, string>()
  const rewrite = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const moved = value.replace(/^https?:\/\/[^/]+/, origin)
      if (moved !== value) originals.set(moved, value)
      return moved
    }
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v)]))
    return value
  }
  exchange.urls.api = rewrite(exchange.urls.api) as typeof exchange.urls.api
  // binance picks its spot error table by host (api.binance.com): show it the URL it would have used.
  const internal = exchange as unknown as { getExceptionsByUrl?: (url: string | undefined, kind: string) => unknown }
  const classify = internal.getExceptionsByUrl
  if (typeof classify !== 'function') return
  const prefixes = [...originals.keys()].sort((a, b) => b.length - a.length)
  internal.getExceptionsByUrl = (url, kind) => {
    const prefix = url === undefined ? undefined : prefixes.find((p) => url.startsWith(p))
    return classify.call(exchange, prefix === undefined ? url : originals.get(prefix) + url!.slice(prefix.length), kind)
  }
}

/** ccxt keeps a failed first loadMarkets() and hands it to every later call: load again instead. */
function recoverLoadMarkets(exchange: Exchange): void {
  const load = exchange.loadMarkets.bind(exchange)
  let failed = false
  exchange.loadMarkets = async (reload = false, params = {}) => {
    try {
      const markets = await load(reload || failed, params)
      failed = false
      return markets
    } catch (error) {
      failed = true
      throw error
    }
  }
}

/**
 * A failure's message as it may be logged or stored: a URL ccxt quotes in it loses its query string,
 * which carries the request's signature and nothing a reader needs.
 *
 * @example
 * failureText(new Error('binance GET https://host/api/v3/order?signature=ab12 timed out')) // 'binance GET https://host/api/v3/order timed out'
 */
export function failureText(error: unknown): string {
  return error instanceof Error ? error.message.replace(/\?\S*/g, '') : String(error)
}

export interface VenueErrorDetail {
  /** The venue's own code (Binance: -2010), when it answered with one. */
  code?: number
  /** The venue's message, or ccxt's for a failure with no answer (connection refused, timeout). */
  message: string
  /** Seconds the venue asked to wait (Retry-After of a 429 or 418). */
  retryAfterSeconds?: number
  /** Code and message in one line, e.g. "-2010 Account has insufficient balance for requested action.". */
  reason: string
}

function jsonOf(text: string | undefined): { code?: unknown; msg?: unknown } | undefined {
  const at = text?.indexOf('{') ?? -1
  if (at < 0) return undefined
  try {
    const value = JSON.parse(text!.slice(at))
    return value && typeof value === 'object' ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * The venue's code and message behind a ccxt error: from the body ccxt quotes in its message, or
 * from the raw last answer when ccxt kept only the message (InsufficientFunds and friends).
 *
 * @example
 * try { await exchange.createOrder('BTC/USDT', 'market', 'buy', 1) }
 * catch (error) { venueError(exchange, error).reason } // "-2010 Account has insufficient balance for requested action."
 */
export function venueError(exchange: Exchange, error: unknown): VenueErrorDetail {
  const text = error instanceof Error ? error.message : String(error)
  let body = jsonOf(text)
  if (typeof body?.msg !== 'string') {
    const last = jsonOf(exchange.last_http_response)
    body = typeof last?.msg === 'string' && text.includes(last.msg) ? last : undefined
  }
  const code = Number(body?.code)
  const known = typeof body?.msg === 'string' && Number.isFinite(code) && code !== 0
  // Quoted URLs lose their query strings: they carry signatures and nothing a reader needs.
  const message = known ? String(body!.msg) : failureText(error).replace(new RegExp(`^${exchange.id} `), '')
  const name = error instanceof Error ? error.name : ''
  const retryAfter = Number(exchange.last_response_headers?.['Retry-After'])
  const limited = ['DDoSProtection', 'RateLimitExceeded'].includes(name) && Number.isFinite(retryAfter)
  return {
    code: known ? code : undefined,
    message,
    retryAfterSeconds: limited ? retryAfter : undefined,
    reason: known ? `${code} ${message}` : message,
  }
}
