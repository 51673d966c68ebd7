// The API's route table for a Config (SPEC 2: one table, in the order the router tries it) and what
// health and metrics read of the publisher, the outbox, the venues and the leases. Part of the
// composition root (src/app.ts), kept apart so that each file stays readable.
import { ConfigError, type Config } from './config.ts'
import type { RouteSpec } from './http/route.ts'
import { openApiRoute } from './http/openapi.ts'
import type { Queries } from './store/store.ts'
import type { LeaseStates } from './store/service.ts'
import { healthRoutes, type HealthSources } from './system/health.ts'
import { metricsRoutes } from './system/metrics.ts'
import type { Sessions } from './auth/sessions.ts'
import { authRoutes } from './auth/routes.ts'
import { modelRoutes } from './models/routes.ts'
import { performanceRoutes } from './performance/routes.ts'
import { workspaceRoutes } from './tenants/routes.ts'
import { signalRoutes } from './signals/routes.ts'
import { publicFeedRoutes } from './signals/public-routes.ts'
import { consoleRoutes } from './console/routes.ts'
import { chainRoutes } from './signals/chain-routes.ts'
import { backtestRoutes } from './backtests/routes.ts'
import { catalogue } from './models/catalogue.ts'
import { nextPublishAt } from './signals/scheduler.ts'
import { tradeRoutes } from './trading/routes.ts'
import { orderRoutes } from './trading/order-routes.ts'
import { riskRoutes } from './risk/routes.ts'
import { killSwitchRoutes } from './risk/kill-switch-routes.ts'
import { equityRoutes } from './risk/equity-routes.ts'
import { deadManSwitchRoutes } from './risk/dead-man-switch-routes.ts'
import { backlog } from './webhooks/delivery-queue.ts'
import { webhookSettings, type WebhookSettings } from './webhooks/config.ts'
import { webhookRoutes } from './webhooks/routes.ts'
import { venueRoutes } from './venues/routes.ts'
import { gatewayKeyRoutes } from './gateway/key-routes.ts'
import { alertHookRoutes } from './alerts/hook-routes.ts'
import { venueStatuses } from './venues/status.ts'
import { venuesWithStaleMarks } from './risk/marks.ts'
import { openSecretBox, type SecretBox } from './store/secret-box.ts'
import { exchangesWithUnknownOrders } from './trading/live/outbox.ts'
import { disconnectVenue } from './trading/live/disconnect.ts'
import { venueQuotes } from './trading/live/quotes.ts'
import { createVenueSessions, type VenueSessions } from './venues/sessions.ts'
import { exchangesWithFailedProtections } from './trading/protection/store.ts'

/** What health and metrics report of the publisher, the outbox, the venues and this node's leases. */
export const healthSourcesFor = (leases: LeaseStates): HealthSources => ({
  leases: () => Object.fromEntries([...leases].sort(([a], [b]) => a.localeCompare(b))),
  nextPublishAt: async (db: Queries) => nextPublishAt(await catalogue(db), new Date())?.toISOString() ?? null,
  webhookBacklog: (db: Queries) => backlog(db),
  // what this process met calling each exchange; degraded too while a LIVE position on it is valued at
  // a stale mark, an order on it is UNKNOWN (the venue is not answering for it), or it refused to
  // protect a position (SPEC 13)
  venues: async (db: Queries) => {
    const statuses = venueStatuses()
    const troubled = [...(await venuesWithStaleMarks(db, new Date())), ...(await exchangesWithUnknownOrders(db)), ...(await exchangesWithFailedProtections(db))]
    for (const exchange of troubled) statuses[exchange] = 'degraded'
    return statuses
  },
})

/** The Config's webhook part, checked (a bad CA file is a bad flag). */
export function webhooksOf(config: Config): WebhookSettings {
  try {
    return webhookSettings(config.webhooks)
  } catch (error) {
    throw new ConfigError((error as Error).message)
  }
}

/**
 * The whole API for this Config. Pure (opens nothing), so a test can read the table the server runs.
 *
 * @example
 * appRoutes(commandConfig(dir), { sessions: openSessions(dir) }).map((r) => `${r.method} ${r.path}`) // ['GET /api/v1/health', ...]
 */
export function appRoutes(
  config: Config,
  parts: { sessions: Sessions; webhooks?: WebhookSettings; secrets?: () => SecretBox; venueSessions?: VenueSessions; leases?: LeaseStates },
): RouteSpec[] {
  const healthSources = healthSourcesFor(parts.leases ?? new Map())
  const webhooks = parts.webhooks ?? webhooksOf(config)
  const secrets = parts.secrets ?? secretsOf(config)
  const venueSessions = parts.venueSessions ?? createVenueSessions({ venues: config.venues, secrets })
  const routes: RouteSpec[] = [
    ...healthRoutes(healthSources),
    ...metricsRoutes(config.metrics, healthSources),
    openApiRoute(() => routes),
    ...authRoutes(parts.sessions),
    ...modelRoutes,
    ...performanceRoutes,
    ...workspaceRoutes,
    ...signalRoutes,
    ...backtestRoutes,
    ...publicFeedRoutes(config.publicFeed),
    ...consoleRoutes,
    ...chainRoutes(config.publicFeed),
    ...tradeRoutes,
    ...riskRoutes,
    ...equityRoutes,
    ...killSwitchRoutes,
    ...deadManSwitchRoutes,
    ...orderRoutes(venueQuotes(venueSessions)),
    ...webhookRoutes(webhooks),
    ...venueRoutes(config.venues, secrets, disconnectVenue),
    ...gatewayKeyRoutes(secrets),
    ...alertHookRoutes(config, secrets),
  ]
  return routes
}

/** The data dir's secret box, opened (its key file made) at the first secret sealed or opened. */
export function secretsOf(config: Config): () => SecretBox {
  let box: SecretBox | undefined
  return () => {
    box ??= openSecretBox(config.secretsDir)
    return box
  }
}
