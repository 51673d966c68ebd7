// The composition root: the one file that says what Bulwark is. Every route the API serves, every
// background service `serve` runs and every consequence hooked onto a change is listed here, by
// name; no module registers anything by being imported. `serve` and every CLI command that changes
// state open the same App, so a command can never forget a consequence (a fill, an outbox row).
//
// What happens when an order is placed (POST /api/v1/orders):
//   1. the HTTP adapter (createHttpServer) takes the request's turn, finds orderRoutes' spec, and
//      the guard checks the credential, its rate, its scope (orders:write) and its tenant;
//   2. the body is checked against the spec's schema (text well-formed, no unknown field);
//   3. the handler runs inside one write transaction, waiting asynchronously while another process
//      holds the lock (src/store/write-queue.ts): submitOrder runs the pre-trade checks (paused,
//      plan, price, max_open_trades, max_exposure_usd; a breach records a RISK_LIMIT_BREACHED
//      incident), writes the PENDING order and records `order.created`;
//   4. recording an event runs fanOut (hooked below), which writes a webhook delivery per
//      subscribed endpoint in that same transaction; an Idempotency-Key stores the answer there too;
//   5. after the commit, webhookSender delivers the outbox; when the next price arrives (a CLI
//      import), fillOnNewPrices (hooked below) fills the order in the import's transaction, with its
//      `order.filled` and `trade.opened` events and their deliveries.
import type { RouteSpec } from './http/route.ts'
import { openApiRoute } from './http/openapi.ts'
import { purgeExpired } from './http/idempotency.ts'
import { openDatabase, db } from './store/db.ts'
import { startMaintenance } from './store/maintenance.ts'
import type { Purge } from './store/retention.ts'
import { log } from './http/log.ts'
import type { Service } from './system/services.ts'
import { healthRoutes } from './system/health.ts'
import { metricsRoutes } from './system/metrics.ts'
import { authRoutes } from './auth/routes.ts'
import { modelRoutes } from './models/routes.ts'
import { workspaceRoutes } from './tenants/routes.ts'
import { onNewPrices } from './market/prices.ts'
import { signalRoutes } from './signals/routes.ts'
import { publicFeedRoutes } from './signals/public-routes.ts'
import { onSignalsPublished } from './signals/publisher.ts'
import { publisherSchedule } from './signals/scheduler.ts'
import { demoPrices } from './signals/demo.ts'
import { tradeRoutes } from './trading/routes.ts'
import { orderRoutes } from './trading/order-routes.ts'
import { fillOnNewPrices } from './trading/paper-broker.ts'
import { automateOnPublish } from './trading/automation.ts'
import { cancellationSettlement } from './trading/cancellations.ts'
import { riskRoutes } from './risk/routes.ts'
import { killSwitchRoutes } from './risk/kill-switch-routes.ts'
import { onEvent } from './webhooks/events.ts'
import { fanOut, webhookPurges } from './webhooks/outbox.ts'
import { webhookRoutes } from './webhooks/routes.ts'
import { webhookSender } from './webhooks/sender.ts'

export interface AppOptions {
  dataDir: string
  /** serve --demo: the synthetic price history is extended every day. */
  demo?: boolean
}

export interface App {
  /** Every route the API serves, in the order the router tries them. */
  routes: RouteSpec[]
  /** What `serve` starts after it listens, in this order, and stops in the reverse order. */
  services: Service[]
}

/**
 * The whole API. Pure (opens nothing), so a test can read the table the server runs.
 *
 * @example
 * appRoutes().map((r) => `${r.method} ${r.path}`) // ['GET /api/v1/health', ...]
 */
export function appRoutes(): RouteSpec[] {
  const routes: RouteSpec[] = [
    ...healthRoutes, ...metricsRoutes, openApiRoute(() => routes),
    ...authRoutes, ...modelRoutes, ...workspaceRoutes, ...signalRoutes, ...publicFeedRoutes,
    ...tradeRoutes, ...riskRoutes, ...killSwitchRoutes, ...orderRoutes, ...webhookRoutes,
  ]
  return routes
}

let hooked = false

/**
 * The consequences of a change, each run inside the transaction of the change that causes it, so a
 * change and its consequences commit together or not at all. Hooked once per process.
 */
function hookConsequences(): void {
  if (hooked) return
  hooked = true
  onEvent(fanOut)                         // an event -> a webhook delivery per subscribed endpoint
  onNewPrices(fillOnNewPrices)            // a price import -> fills of pending paper orders
  onSignalsPublished(automateOnPublish)   // a publish -> automation orders of EXECUTE tenants
}

/** What the nightly upkeep deletes (SPEC 8), in this order: deliveries before their events. */
const purges: Purge[] = [
  { name: 'idempotency_keys', begin: ({ nowMs }) => (limit) => purgeExpired(nowMs, limit) },
  ...webhookPurges,
]

const maintenance: Service = { name: 'maintenance', start: () => startMaintenance(db(), log, purges) }

/**
 * Opens the data dir's database and hooks up every consequence: what `serve` and every CLI command
 * that changes state call first.
 */
export function openApp(options: AppOptions): App {
  openDatabase(options.dataDir)
  hookConsequences()
  return {
    routes: appRoutes(),
    services: [webhookSender, publisherSchedule, cancellationSettlement, maintenance, ...(options.demo ? [demoPrices] : [])],
  }
}
