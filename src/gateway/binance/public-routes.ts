// STUB: the market-data helper replaces this file (ping, time, exchangeInfo, ticker, klines, depth,
// and the sapi calls ccxt makes while loading markets with a key).
import type { GatewayDeps } from '../gateway.ts'
import type { GatewayRoute } from './dispatch.ts'

/** The routes answered without a key (and the sapi calls a spot-only account answers). */
export function publicRoutes(_deps: GatewayDeps): GatewayRoute[] {
  return []
}
