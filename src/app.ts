// The composition root: the one file that says what Bulwark is. Every route the API serves, every
// background service `serve` runs and every consequence hooked onto a change is listed here, by
// name; no module registers anything by being imported. `serve` and every CLI command that changes
// state open the same App, so a command can never forget a consequence (a fill, an outbox row).
//
// What happens when an order is placed (POST /api/v1/orders):
//   1. the HTTP adapter (http/server.ts) gives the request its turn (the kill switch goes first)
//      and http/routing.ts finds orderRoutes' spec; http/pipeline.ts has the guard made below
//      (createGuard) check the credential, its rate, its scope (orders:write) and its tenant;
//   2. the body is checked against the spec's schema (text well-formed, no unknown field), the
//      same schema its TypeScript type comes from;
//   3. the handler runs inside one write transaction, waiting asynchronously while another process
//      holds the lock (store/write-queue.ts): submitOrder (trading/pre-trade.ts) first asks the
//      circuit breakers (risk/breakers.ts tripBeforeOrder): one order more than
//      max_orders_per_minute, or a loss breaker at its limit, pulls the kill switch in this
//      transaction (CIRCUIT_BREAKER_TRIPPED) and the order is refused; then the pre-trade checks
//      (paused, plan, price, then trading/order-limits.ts: max_order_notional_usd, price_band_pct,
//      max_trades_per_day, max_open_trades, max_exposure_usd; a breach records a
//      RISK_LIMIT_BREACHED incident), writes the PENDING order and records `order.created`;
//   4. recording an event runs fanOut (hooked below), which writes a webhook delivery per
//      subscribed endpoint in that same transaction; an Idempotency-Key stores the answer there too;
//   5. after the commit, the webhook sender (a service below) delivers the outbox; when the next
//      price arrives (a CLI import), fillOnNewPrices (hooked below) fills the order in the import's
//      transaction (trading/fills.ts), with its `order.filled` and `trade.opened` events and their
//      deliveries, and evaluateOnNewPrices (hooked below) re-reads the circuit breakers of every
//      tenant the prices touched; a kill switch cancels it through the TradingHalt hooked below,
//      whether an operator pulls it, a breaker trips or the dead man's switch watch (a service
//      below) fires it at a missed deadline.
import type { Config } from './config.ts'
import { appRoutes, secretsOf, webhooksOf } from './app-routes.ts'
export { appRoutes } from './app-routes.ts'
import type { Guard, RouteSpec } from './http/route.ts'
import { purgeExpired } from './http/idempotency.ts'
import { openStore } from './store/open-store.ts'
import type { Store } from './store/store.ts'
import { startMaintenance } from './store/maintenance.ts'
import type { Purge } from './store/retention.ts'
import { log } from './shared/log.ts'
import { leased, type LeaseStates, type Service } from './store/service.ts'
import { observeRequest } from './system/metrics.ts'
import { createGuard } from './auth/guard.ts'
import { createOidcVerifier } from './auth/oidc.ts'
import { openSessions } from './auth/sessions.ts'
import { onNewPrices } from './market/prices.ts'
import { backfillChains } from './signals/chain-integrity.ts'
import { onSignalsPublished } from './signals/publisher.ts'
import { backtestRunner } from './backtests/runner.ts'
import { publishOnNewCandles, publisherSchedule } from './signals/scheduler.ts'
import { demoPrices } from './signals/demo.ts'
import { closeOpenTrades, fillOnNewPrices, flattenPlan } from './trading/paper-broker.ts'
import { automateOnPublish } from './trading/automation.ts'
import { cancelPendingOrders, cancellationSettlement, pendingOrderCount, settleCancellations } from './trading/cancellations.ts'
import { hookResumeCheck, hookTradingHalt } from './risk/kill-switch.ts'
import { checkResume } from './risk/breakers.ts'
import { breakerWatch, evaluateOnNewPrices } from './risk/breaker-watch.ts'
import { deadManSwitchWatch } from './risk/dead-man-switch-watch.ts'
import { onEvent } from './webhooks/events.ts'
import { fanOut } from './webhooks/outbox.ts'
import { webhookPurges } from './webhooks/retention.ts'
import { createWebhookSender } from './webhooks/sender.ts'
import { marketDataFeed } from './venues/market-data.ts'
import { binanceGateway } from './gateway/gateway.ts'
import { signaturePurges } from './gateway/binance/replays.ts'
import { alertReceiver } from './alerts/receiver.ts'
import { alertPurges } from './alerts/retention.ts'
import type { Mount } from './http/server.ts'
import type { BlockList } from 'node:net'
import type { SecretBox } from './store/secret-box.ts'
import { checkSecrets } from './store/secrets-fingerprint.ts'
import { createLiveExecutor } from './trading/live/executor.ts'
import { venueQuotes } from './trading/live/quotes.ts'
import { createVenueSessions } from './venues/sessions.ts'
import { protectionsDue } from './trading/protection/store.ts'
import { hookProtectionTerms } from './risk/profile.ts'

export interface App {
  /** Every route the API serves, in the order the router tries them. */
  routes: RouteSpec[]
  /** What `serve` starts after it listens, in this order, and stops in the reverse order. */
  services: Service[]
  /** Told of every HTTP answer when serve runs with --metrics. */
  observe: ((method: string, route: string, status: number, seconds: number) => void) | undefined
  /** Who may call what (credential, scope, role), for every route that is not public. */
  guard: Guard
  /** The data dir's secret box (sealed idempotent replays, venue credentials), opened at first use. */
  secrets: () => SecretBox
  /** The database every route, service and command of this App reads and writes. */
  store: Store
  /** What answers outside the routes, in its own dialect: the gateway (SPEC 14). */
  mounts(trustedProxies?: BlockList): Mount[]
  /** Settles the kill switch's cancellations still owed, then closes the store (after the write in progress). */
  close(): Promise<void>
}

let hooked = false

/**
 * The consequences of a change, each run inside the transaction of the change that causes it (each
 * listener is handed its tx and awaited in order), so a change and its consequences commit together
 * or not at all. Hooked once per process.
 */
function hookConsequences(): void {
  if (hooked) return
  hooked = true
  onEvent(fanOut) // an event -> a webhook delivery per subscribed endpoint
  onNewPrices(fillOnNewPrices) // a price import -> fills of pending paper orders
  onNewPrices(evaluateOnNewPrices) // ... then the circuit breakers of every tenant the prices touched
  onSignalsPublished(automateOnPublish) // a publish -> automation orders of EXECUTE tenants
  // a kill switch -> its scope's pending orders canceled and, for FLATTEN, open trades closed
  hookTradingHalt({ pendingOrderCount, cancelPendingOrders, flattenPlan, closeOpenTrades })
  hookProtectionTerms(protectionsDue)
  hookResumeCheck(checkResume) // a fleet RESUME -> refused while a loss breaker holds, unless reset_breakers
}

/** What the nightly upkeep deletes (SPEC 8), in this order: deliveries before their events. */
const purges: Purge[] = [
  {
    name: 'idempotency_keys',
    begin:
      ({ nowMs }) =>
      (tx, limit) =>
        purgeExpired(tx, nowMs, limit),
  },
  ...webhookPurges,
  ...signaturePurges,
  ...alertPurges,
]

/**
 * Opens the data dir's database and hooks up every consequence: what `serve` and every CLI command
 * that changes state call first.
 */
export async function openApp(config: Config): Promise<App> {
  const webhooks = webhooksOf(config)
  // SQLite in the data dir, or PostgreSQL when --database names one (SPEC 15).
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl })
  // Before anything is served: a node with other secrets could open nothing the others sealed.
  await checkSecrets(store, config.secretsDir)
  await backfillChains(store) // signals written before the chain (sql/013) get their links, once
  const sessions = openSessions(config.secretsDir)
  hookConsequences()
  const maintenance: Service = {
    name: 'maintenance',
    start: (context) => startMaintenance(context.store, log, { purges, days: config.retentionDays }),
  }
  const secrets = secretsOf(config)
  // One session per tenant's venue account, shared by the executor and the price quotes of LIVE orders.
  const venueSessions = createVenueSessions({ venues: config.venues, secrets })
  const leases: LeaseStates = new Map()
  return {
    routes: appRoutes(config, { sessions, webhooks, secrets, venueSessions, leases }),
    secrets,
    store,
    mounts: (trustedProxies) => [
      binanceGateway({ store, secrets, venueSessions, venues: config.venues, quotes: venueQuotes(venueSessions) }, trustedProxies),
      alertReceiver({ store, secrets, quotes: venueQuotes(venueSessions), trustedProxies }),
    ],
    // Each on one node at a time, under its lease (SPEC 15); on SQLite the lease is always granted.
    services: [
      createWebhookSender(webhooks),
      publisherSchedule,
      cancellationSettlement,
      // LIVE orders to their venues after commit; ccxt is loaded once a tenant has a venue connected
      createLiveExecutor({ sessions: venueSessions }),
      breakerWatch,
      deadManSwitchWatch,
      // backtests in worker threads, one RUNNING per tenant; the candles are read here a pair per turn
      backtestRunner({ databaseUrl: config.databaseUrl }),
      maintenance,
      ...(config.demo ? [demoPrices] : []),
      // ccxt is loaded only here, when an exchange is configured; stored candles -> the runs that lacked them, at once
      ...(config.marketData
        ? [marketDataFeed({ exchange: config.marketData, venueUrl: config.venues.url, caFile: config.venues.caFile }, { onCandles: publishOnNewCandles })]
        : []),
    ].map((service) => leased(service, leases, log)),
    observe: config.metrics ? observeRequest : undefined,
    guard: createGuard({ sessions, oidc: config.oidc && createOidcVerifier(config.oidc), store }),
    async close() {
      // A command that pulled a kill switch (a breaker a price import tripped) settles its own
      // cancellations: no settlement service runs in its process.
      await settleCancellations(store)
      await store.close()
    },
  }
}
