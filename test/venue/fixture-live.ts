// Shared by the LIVE trading tests: a Bulwark server pointed at the test venue, a tenant whose venue
// account is connected through the real API, and waits on what the executor does after commit.
import * as assert from 'uvu/assert'
import { startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import type { Test } from 'uvu'
import { startVenue, venueKey, type Venue, type VenueOptions } from '../support/venue/index.ts'
import { checkedClient, importCloses, withDb } from '../trading/market.ts'

export type Api = Awaited<ReturnType<typeof checkedClient>>

export interface LiveTenant {
  tenant: TenantFixture
  /** The venue account the tenant's key trades (the test venue's account name). */
  account: string
  trader: string
}

/** A server on `dataDir` (a fresh one if left out) that reaches the test venue. */
export function liveServer(venue: Venue, dataDir?: string, args: string[] = []): Promise<Server> {
  return startServer({ dataDir, args: ['--venue-url', venue.url, '--ca-file', venue.caFile, ...args] })
}

export interface LiveSuite {
  venue: Venue
  server: Server
  api: Api
}

/**
 * A test venue and a server on it for a whole suite: started before its first test (then handed to
 * `ready`), stopped after its last.
 *
 * @example
 * let venue: Venue, server: Server, api: Api
 * liveSuite(test, (s) => ({ venue, server, api } = s))
 */
export function liveSuite(test: Test, ready: (suite: LiveSuite) => void, venueOptions: VenueOptions = {}): void {
  let suite: LiveSuite | undefined
  test.before(async () => {
    const venue = await startVenue(venueOptions)
    const server = await liveServer(venue)
    suite = { venue, server, api: await checkedClient(server) }
    ready(suite)
  })
  test.after(async () => {
    await suite?.server.stop()
    await suite?.venue.close()
  })
}

/**
 * A test venue for a suite whose tests start (and SIGKILL) servers of their own: `serve(dataDir?)`
 * starts one on it; after the last test, every server still running is killed and the venue closed.
 *
 * @example
 * const crashes = crashSuite(test)
 * const { server, api } = await crashes.serve()
 */
export function crashSuite(test: Test): { venue: () => Venue; serve(dataDir?: string): Promise<{ server: Server; api: Api }> } {
  let venue: Venue | undefined
  const servers: Server[] = []
  test.before(async () => {
    venue = await startVenue()
  })
  test.after(async () => {
    // stop() waits for an exit that already happened when a test SIGKILLed the server: skip those.
    for (const server of servers) if (server.process.exitCode === null && server.process.signalCode === null) await server.stop('SIGKILL')
    await venue?.close()
  })
  return {
    venue: () => venue!,
    async serve(dataDir) {
      const server = await liveServer(venue!, dataDir)
      servers.push(server)
      return { server, api: await checkedClient(server) }
    },
  }
}

/** A tenant with `balances` on its own venue account, connected with a key that cannot withdraw. */
export async function liveTenant(server: Server, api: Api, venue: Venue, slug: string, balances: Record<string, number>): Promise<LiveTenant> {
  const tenant = await tenantFixture(server, slug)
  const key = venueKey(slug, slug)
  await venue.addKey({ ...key, restrictions: { enableWithdrawals: false } })
  await venue.setBalances(balances, slug)
  const connected = await api('PUT', '/api/v1/venue', { token: tenant.jwt, body: { exchange: 'binance', api_key: key.apiKey, api_secret: key.secret } })
  assert.is(connected.status, 200, connected.text)
  return { tenant, account: slug, trader: await tenant.key(['orders:write', 'trades:read', 'risk:admin', 'risk:read']) }
}

/** Bulwark's last close and the venue's price, set together. */
export async function priceBoth(server: Server, venue: Venue, pair: string, date: string, bulwark: number, onVenue: number): Promise<void> {
  await importCloses(server, [[pair, date, bulwark]])
  await venue.setPrice(pair, onVenue)
}

/** Polls until `check` returns a value (not undefined), or fails after `ms`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > until) assert.unreachable(`${what}: not within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Waits until the order's status is one of `statuses`; returns the order. */
export async function orderReaches(api: Api, token: string, id: string, statuses: string[], ms?: number): Promise<any> {
  return eventually(
    `order ${id} ${statuses.join('|')}`,
    async () => {
      const order = (await api('GET', `/api/v1/orders/${id}`, { token })).json
      return statuses.includes(order.status) ? order : undefined
    },
    ms,
  )
}

/** The tenant's outbox rows as the database holds them. */
export function outboxOf(server: Server, orderId: string): Promise<{ state: string; venue_order_id: string | null; cancel_by: string | null } | undefined> {
  return withDb(server, (db) => db.get('SELECT state, venue_order_id, cancel_by FROM venue_orders WHERE order_id = ?', [orderId]))
}

/** Incidents of a tenant with this action, oldest first. */
export function incidentsOf(server: Server, slug: string, action: string): Promise<{ id: string; reason: string; actor: string }[]> {
  return withDb(server, (db) =>
    db.all('SELECT i.id, i.reason, i.actor FROM incidents i JOIN tenants t ON t.id = i.tenant_id WHERE t.slug = ? AND i.action = ? ORDER BY i.seq', [
      slug,
      action,
    ]),
  )
}
