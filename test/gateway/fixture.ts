// Shared by the gateway tests (SPEC 14): the test venue and a Bulwark server pointed at it
// (--venue-url, --ca-file), a tenant whose venue account is connected and who holds a gateway key,
// and the real ccxt `binance` class aimed at the gateway exactly as a bot's config aims it: every
// `urls.api` entry on api.binance.com moved under http://HOST:PORT/gateway/binance, paths kept.
//
//   let venue: Venue, server: Server, api: Api
//   gatewaySuite(test, (s) => ({ venue, server, api } = s))
//   const bot = await gatewayTenant(server, api, venue, 'acme', { USDT: 10_000 })
//   const exchange = gatewayExchange(server, bot)
//   await exchange.createOrder('BTC/USDT', 'market', 'buy', 0.01)
import ccxt, { type Exchange } from 'ccxt'
import type { Test } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import type { VenueOptions } from '../support/venue/index.ts'
import { type Api, type LiveSuite, type LiveTenant, liveSuite, liveTenant } from '../venue/fixture-live.ts'

export type { Api, LiveSuite as GatewaySuite }

/** The host every spot and sapi URL of ccxt's binance class is on. */
const BINANCE = 'https://api.binance.com'
export const GATEWAY_PATH = '/gateway/binance'

/**
 * A test venue and a server on it for a whole suite, started before the first test (then handed to
 * `ready`), stopped after the last.
 */
export function gatewaySuite(test: Test, ready: (suite: LiveSuite) => void, venueOptions: VenueOptions = {}): void {
  liveSuite(test, ready, venueOptions)
}

/** A tenant with a connected venue account and one gateway key: what a bot is configured with. */
export interface GatewayBot extends LiveTenant {
  keyId: string
  apiKey: string
  secret: string
}

/**
 * A tenant `slug` with `balances` on its own venue account, connected through the API, and a gateway
 * key created by its owner (POST /api/v1/gateway/keys).
 */
export async function gatewayTenant(
  server: Server,
  api: Api,
  venue: LiveSuite['venue'],
  slug: string,
  balances: Record<string, number> = {},
): Promise<GatewayBot> {
  const live = await liveTenant(server, api, venue, slug, balances)
  return { ...live, ...(await gatewayKey(api, live.tenant.jwt, `${slug} bot`)) }
}

/** Another gateway key of the tenant whose owner session is `jwt`. */
export async function gatewayKey(api: Api, jwt: string, name: string): Promise<{ keyId: string; apiKey: string; secret: string }> {
  const created = await api('POST', '/api/v1/gateway/keys', { token: jwt, body: { name } })
  assert.is(created.status, 200, created.text)
  return { keyId: created.json.id, apiKey: created.json.api_key, secret: created.json.api_secret }
}

/**
 * ccxt's binance class as a spot bot sets it up (`defaultType` spot, spot markets only, every other
 * option ccxt's default), its API URLs on the gateway; with `credentials`, signed with that gateway
 * key. `options` add to or replace ccxt's.
 *
 * @example
 * const exchange = gatewayExchange(server, { apiKey, secret })
 * await exchange.loadMarkets() // exchangeInfo, and the sapi calls ccxt makes with a key
 */
export function gatewayExchange(
  server: { url: string },
  credentials: { apiKey?: string; secret?: string } = {},
  options: Record<string, unknown> = {},
): Exchange {
  const exchange = new ccxt.binance({
    apiKey: credentials.apiKey,
    secret: credentials.secret,
    options: { defaultType: 'spot', fetchMarkets: ['spot'], ...options },
  })
  const api = exchange.urls.api as Record<string, string>
  for (const [name, url] of Object.entries(api)) {
    if (url.startsWith(`${BINANCE}/`)) api[name] = `${server.url}${GATEWAY_PATH}${url.slice(BINANCE.length)}`
  }
  return exchange
}

/** The Binance error a ccxt call met: its code and msg, from the body ccxt quotes. */
export async function binanceRefusal(call: Promise<unknown>): Promise<{ code: number; msg: string }> {
  try {
    await call
  } catch (error) {
    const text = String((error as Error).message)
    const body = JSON.parse(text.slice(text.indexOf('{')))
    return { code: body.code, msg: body.msg }
  }
  assert.unreachable('the call was not refused')
  throw new Error('unreachable')
}

export interface GatewayRes {
  status: number
  headers: Headers
  json: any
  text: string
}

/** A raw request to the gateway (path under /gateway/binance), for what ccxt would not send. */
export async function gatewayRequest(server: { url: string }, method: string, path: string, headers: Record<string, string> = {}): Promise<GatewayRes> {
  const res = await fetch(`${server.url}${GATEWAY_PATH}${path}`, { method, headers })
  const text = await res.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, json, text }
}
