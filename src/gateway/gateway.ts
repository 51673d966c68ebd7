// The gateway (SPEC 14): existing bots speak Binance's spot REST API to Bulwark under
// /gateway/binance, and every order they send passes Bulwark's risk gate on its way to the tenant's
// venue. Wired here from the app's parts; the dialect itself is ./binance/.
import type { BlockList } from 'node:net'
import type { VenueSettings } from '../config.ts'
import type { Mount } from '../http/server.ts'
import type { SecretBox } from '../store/secret-box.ts'
import type { Store } from '../store/store.ts'
import type { VenueQuotes } from '../trading/live/quotes.ts'
import type { VenueSessions } from '../venues/sessions.ts'
import { createGateway, GATEWAY_PREFIX } from './binance/dispatch.ts'
import { orderRoutes } from './binance/order-routes.ts'
import { publicRoutes } from './binance/public-routes.ts'

/** What the dialect's routes are made of. */
export interface GatewayDeps {
  store: Store
  secrets: () => SecretBox
  /** The tenants' venue sessions: the executor's, shared for the reads a bot makes. */
  venueSessions: VenueSessions
  /** Where public market data comes from (--venue-url, --ca-file): the server's own exchange. */
  venues: VenueSettings
  quotes: VenueQuotes
}

/**
 * The gateway as the HTTP server mounts it.
 *
 * @example
 * createHttpServer(app.routes, { ...options, mounts: [binanceGateway(deps, trustedProxies)] })
 */
export function binanceGateway(deps: GatewayDeps, trustedProxies?: BlockList): Mount {
  const handle = createGateway({ store: deps.store, secrets: deps.secrets, trustedProxies, routes: [...publicRoutes(deps), ...orderRoutes(deps)] })
  // A bot's order and cancel wait on the venue, and a pause or a kill switch lets reducing orders
  // through: neither queues behind reads (the rate limit bounds how many come).
  const urgent = (method: string, path: string) => method !== 'GET' && ORDER_PATHS.has(path)
  return { prefix: GATEWAY_PREFIX, handle, urgent }
}

const ORDER_PATHS = new Set(['/api/v3/order', '/api/v3/openOrders'])
