// The routes a bot reaches without a key, as on Binance (SPEC 14): ping and time answered here,
// the market data relayed from the server's own exchange (./market-proxy.ts), and the sapi calls
// ccxt makes while loading markets with a key (./sapi-routes.ts).
import type { GatewayDeps } from '../gateway.ts'
import type { GatewayRoute } from './dispatch.ts'
import { binanceReply } from './errors.ts'
import { MarketProxy, relayed } from './market-proxy.ts'
import { sapiRoutes } from './sapi-routes.ts'

/**
 * The market-data endpoints relayed, each with the parameters Binance documents for it (rest-api.md,
 * "Market data endpoints"): only these go on to the venue, so a bot's stray parameter neither
 * reaches it nor splits the cache. What ccxt's binance calls for spot: fetchMarkets exchangeInfo,
 * fetchTicker and fetchTickers ticker/24hr, fetchOrderBook depth, fetchOHLCV klines.
 */
export const MARKET_ENDPOINTS: Record<string, readonly string[]> = {
  '/api/v3/exchangeInfo': ['symbol', 'symbols', 'permissions', 'showPermissionSets', 'symbolStatus'],
  '/api/v3/ticker/price': ['symbol', 'symbols', 'symbolStatus'],
  '/api/v3/ticker/24hr': ['symbol', 'symbols', 'type', 'symbolStatus'],
  '/api/v3/klines': ['symbol', 'interval', 'startTime', 'endTime', 'timeZone', 'limit'],
  '/api/v3/depth': ['symbol', 'limit', 'symbolStatus'],
}

/** The routes answered without a key, and the sapi calls a spot-only account answers. */
export function publicRoutes(deps: GatewayDeps): GatewayRoute[] {
  const proxy = new MarketProxy(deps.venues)
  const market = Object.entries(MARKET_ENDPOINTS).map(
    ([path, names]): GatewayRoute => ({
      method: 'GET',
      path,
      security: 'NONE',
      handle: async (call) => {
        const query = new URLSearchParams()
        for (const [name, value] of Object.entries(call.params)) if (names.includes(name)) query.append(name, value)
        return relayed(await proxy.get(path, query.toString()))
      },
    }),
  )
  return [
    // Answered here: whether the gateway is up is what a bot's ping asks.
    { method: 'GET', path: '/api/v3/ping', security: 'NONE', handle: async () => binanceReply(200, {}) },
    // This server's clock, not the venue's: the gateway checks each signed request's timestamp
    // against its own clock, so a bot that syncs to this time is inside its recvWindow here.
    { method: 'GET', path: '/api/v3/time', security: 'NONE', handle: async (call) => binanceReply(200, { serverTime: call.now.getTime() }) },
    ...market,
    ...sapiRoutes(proxy),
  ]
}
