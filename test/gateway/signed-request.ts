// Signed requests to the gateway as Binance's REST docs describe them (SPEC 14), built here with
// node:crypto and never with the server's code, so the tests are an independent oracle: the
// parameters (plus `timestamp` and `recvWindow`) as a query string or a form body, `signature` =
// lowercase hex HMAC-SHA256 of the query string followed by the body, keyed with the secret, and
// the key in X-MBX-APIKEY. `sign` builds the exact bytes and `send` sends them, so a test can send
// the same bytes twice (a replay) or change one part of them.
//
//   const res = await signedRequest(server, 'GET', '/api/v3/openOrders', {}, bot)
//   const req = sign('POST', '/api/v3/order', { symbol: 'BTCUSDT', ... }, bot)
//   await send(server, req); await send(server, req) // the second: 400 -1022
import { createHmac } from 'node:crypto'
import { GATEWAY_PATH, type GatewayRes } from './fixture.ts'

export interface Credentials {
  /** Sent as X-MBX-APIKEY; left out, no header. */
  apiKey?: string
  secret: string
}

export interface SignOptions {
  /** ms since the epoch (default now, one ms later than the last default if that was now). */
  timestamp?: number
  /** Sent when given (the gateway's default is 5000). */
  recvWindow?: number
  /** Parameters in a form body rather than the query string; the signature goes last in the body. */
  body?: boolean
}

/** A signed request, byte for byte. */
export interface SignedRequest {
  method: string
  /** Under /gateway/binance: /api/v3/order. */
  path: string
  /** Without the leading '?', signature included when the parameters are in it. */
  query: string
  body: string
  apiKey?: string
  signature: string
}

/** Lowercase hex HMAC-SHA256 of `payload` with `secret`: Binance's SIGNED rule. */
export function hmacHex(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('hex')
}

let lastTimestamp = 0
/** Now, but never the same millisecond twice in this process: two requests alike in every other byte stay two requests (the gateway refuses a signature it has seen). */
function nextTimestamp(): number {
  lastTimestamp = Math.max(Date.now(), lastTimestamp + 1)
  return lastTimestamp
}

/** The request as a Binance client signs it. */
export function sign(
  method: string,
  path: string,
  params: Record<string, string | number>,
  credentials: Credentials,
  options: SignOptions = {},
): SignedRequest {
  const all: Record<string, string> = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)]))
  if (options.recvWindow !== undefined) all.recvWindow = String(options.recvWindow)
  all.timestamp = String(options.timestamp ?? nextTimestamp())
  const payload = new URLSearchParams(all).toString()
  const signature = hmacHex(credentials.secret, payload)
  const signed = `${payload}&signature=${signature}`
  return {
    method,
    path,
    query: options.body ? '' : signed,
    body: options.body ? signed : '',
    apiKey: credentials.apiKey,
    signature,
  }
}

/** The same request with another signature (the rest of its bytes unchanged). */
export function withSignature(request: SignedRequest, signature: string): SignedRequest {
  const swap = (part: string) => part.replace(`signature=${request.signature}`, `signature=${signature}`)
  return { ...request, query: swap(request.query), body: swap(request.body), signature }
}

/** Sends `request` exactly as built; `headers` add to (or, with X-MBX-APIKEY, replace) its own. */
export async function send(server: { url: string }, request: SignedRequest, headers: Record<string, string> = {}): Promise<GatewayRes> {
  const all: Record<string, string> = {}
  if (request.apiKey !== undefined) all['X-MBX-APIKEY'] = request.apiKey
  if (request.body) all['Content-Type'] = 'application/x-www-form-urlencoded'
  Object.assign(all, headers)
  const url = `${server.url}${GATEWAY_PATH}${request.path}${request.query ? `?${request.query}` : ''}`
  const res = await fetch(url, { method: request.method, headers: all, body: request.body || undefined })
  const text = await res.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, json, text }
}

/**
 * A signed request to the gateway.
 *
 * @example
 * const res = await signedRequest(server, 'GET', '/api/v3/order', { symbol: 'BTCUSDT', orderId: 12 }, { apiKey, secret })
 * // res.status 400, res.json { code: -2013, msg: 'Order does not exist.' } for another key's order
 */
export function signedRequest(
  server: { url: string },
  method: string,
  path: string,
  params: Record<string, string | number>,
  credentials: Credentials,
  options: SignOptions = {},
): Promise<GatewayRes> {
  return send(server, sign(method, path, params, credentials, options))
}
