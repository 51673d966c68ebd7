// The open connections to each tenant's venue account, made once per connection of the account (a
// new PUT /api/v1/venue opens a new session): a pool of ccxt instances for the executor (one call at
// a time on each: ccxt keeps the last answer per instance, which the error reading needs) and one for
// price quotes, all sending through one pool of kept-alive connections whose TLS context is built
// once (./exchange.ts sharedTransport). So an order after a quiet spell goes out as fast as one right
// after another, and no poll builds a TLS context on the event loop. A session that cannot be opened
// (credentials, venue down) is tried again after REOPEN_MS. Also the clock: a venue that refuses a
// request's timestamp (-1021) is asked its time, and every instance of the session adopts it.
import type { VenueSettings } from '../config.ts'
import { log } from '../shared/log.ts'
import type { SecretBox } from '../store/secret-box.ts'
import type { Queries } from '../store/store.ts'
import { findVenueAccount, venueCredentials } from './accounts.ts'
import { type Exchange, failureText, openExchange, sharedTransport, type Transport } from './exchange.ts'
import { loadCcxt } from './ccxt-loader.ts'
import { rememberMarkets } from './markets.ts'

/** A session that could not be opened is opened again after this. */
const REOPEN_MS = 30_000

export interface VenueSession {
  tenantId: string
  /** The ccxt id of the account's exchange. */
  exchangeId: string
  /** Which connection of the account this session was opened for (its connected_at). */
  connection: string
  /** The executor's instances. */
  pool: Exchange[]
  /** The instance price quotes use, so that they never share an instance with an order's calls. */
  quotes: Exchange
  /** Asks the venue its time and makes every instance sign with it; after a -1021 refusal. */
  resyncClock(): Promise<void>
}

export interface VenueSessions {
  /**
   * The tenant's session for its current connection, its account read through `db` (committed
   * reads: the session's venue calls follow); throws when it has no venue or it cannot be opened now.
   */
  open(db: Queries, tenantId: string): Promise<VenueSession>
  /**
   * The session already open for the tenant, without reading its account: for its markets only
   * (symbols, precisions), never for a call that must use the tenant's current keys.
   */
  findOpen(tenantId: string): Promise<VenueSession> | undefined
  /** Closes every session's connections. */
  close(): Promise<void>
}

export interface VenueSessionOptions {
  venues: VenueSettings
  secrets: () => SecretBox
  /** ccxt instances per tenant for the executor, so that cancels go out side by side (default 8). */
  poolSize?: number
}

interface Entry {
  connection: string
  session: Promise<VenueSession & { transport: Transport }>
}

/**
 * Venue sessions, made at first use per tenant.
 *
 * @example
 * const sessions = createVenueSessions({ venues: config.venues, secrets })
 * const { quotes } = await sessions.open(store.read, tenantId)
 * await quotes.fetchTicker('BTC/USDT')
 */
export function createVenueSessions(options: VenueSessionOptions): VenueSessions {
  const poolSize = options.poolSize ?? 8
  const entries = new Map<string, Entry>()
  // A session that could not be opened, by tenant: not before `until` for the same connection.
  const broken = new Map<string, { connection: string; until: number }>()

  async function openSession(db: Queries, tenantId: string, connection: string): Promise<VenueSession & { transport: Transport }> {
    const credentials = await venueCredentials(db, tenantId, options.secrets())
    if (!credentials) throw new Error(`tenant ${tenantId} has no venue connected`)
    const source = { ...credentials, venueUrl: options.venues.url }
    // The first instance lends its undici module to the shared pool, then sends through it too.
    const quotes = await openExchange(source)
    const transport = await sharedTransport(quotes, options.venues.caFile)
    const own = quotes.fetchDispatcher
    quotes.fetchDispatcher = transport.dispatcher
    await own?.close()
    const pool = await Promise.all(Array.from({ length: poolSize }, () => openExchange({ ...source, transport })))
    try {
      await quotes.loadMarkets()
    } catch (error) {
      await transport.close()
      throw error
    }
    rememberMarkets(quotes.id, quotes.markets, quotes.precisionMode)
    // ccxt's own pacing holds every order ~10 ms even on an idle instance (measured: 12 ms a
    // createOrder against 2 ms without it). The executor paces itself instead: at most poolSize
    // calls at once, a poll every few seconds, and the venue's 429 Retry-After waited out.
    for (const exchange of [quotes, ...pool]) {
      exchange.enableRateLimit = false
      if (exchange !== quotes) exchange.setMarkets(quotes.markets)
    }
    return {
      tenantId,
      exchangeId: quotes.id,
      connection,
      pool,
      quotes,
      transport,
      resyncClock: async () => {
        await quotes.loadTimeDifference()
        for (const exchange of pool) exchange.options.timeDifference = quotes.options.timeDifference
      },
    }
  }

  return {
    async open(db, tenantId) {
      const account = await findVenueAccount(db, tenantId)
      if (!account?.connected_at) throw new Error(`tenant ${tenantId} has no venue connected`)
      const connection = account.connected_at
      const known = entries.get(tenantId)
      if (known && known.connection === connection) return known.session
      const failed = broken.get(tenantId)
      if (failed && failed.connection === connection && failed.until > Date.now()) {
        throw new Error(`the venue of tenant ${tenantId} could not be opened; trying again shortly`)
      }
      if (known) void known.session.then((s) => s.transport.close()).catch(() => undefined)
      const entry: Entry = { connection, session: openSession(db, tenantId, connection) }
      entry.session.catch((error) => {
        log({ level: 'warn', msg: 'venue session could not be opened', tenant_id: tenantId, error: failureText(error), retry_in_ms: REOPEN_MS })
        if (entries.get(tenantId) === entry) entries.delete(tenantId)
        broken.set(tenantId, { connection, until: Date.now() + REOPEN_MS })
      })
      entries.set(tenantId, entry)
      broken.delete(tenantId)
      return entry.session
    },
    findOpen(tenantId) {
      return entries.get(tenantId)?.session
    },
    async close() {
      const all = [...entries.values()]
      entries.clear()
      await Promise.allSettled(all.map(async (e) => (await e.session).transport.close()))
    },
  }
}

/**
 * Runs one call to the venue; refused for its timestamp (-1021), the clock is set by the venue's
 * and the call goes once more (a refused request did nothing). For the reads placeOnce and
 * cancelOnce do not make: polls, reconciliation, an order's fills.
 *
 * @example
 * const open = await withVenueClock(() => exchange.fetchOpenOrders(), session.resyncClock)
 */
export async function withVenueClock<T>(call: () => Promise<T>, resyncClock: () => Promise<void>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    const ccxt = await loadCcxt()
    if (!(error instanceof ccxt.InvalidNonce)) throw error
    await resyncClock()
    return call()
  }
}
