// The LIVE executor `serve` runs (SPEC 10): it works the outbox of LIVE orders (./outbox.ts) after
// their transactions commit. One lane per tenant with a venue, each with a small pool of ccxt
// instances (one call at a time on each: ccxt keeps the last answer per instance, which the error
// reading needs). A pass cancels what was asked to be canceled, sends what is queued (never an
// opening order while the fleet or its model is paused), and reads the venue's open orders every
// few seconds to pick up fills. Reconciliation runs at start and every minute.
import type { VenueSettings } from '../../config.ts'
import { log } from '../../shared/log.ts'
import type { Service } from '../../shared/service.ts'
import type { SecretBox } from '../../store/secret-box.ts'
import { connectedVenues, venueCredentials } from '../../venues/accounts.ts'
import { type Exchange, openExchange } from '../../venues/exchange.ts'
import { noteVenue } from '../../venues/status.ts'
import { rememberMarkets } from '../../venues/markets.ts'
import { cancelTask, placeTask, syncTask, type TaskContext } from './order-tasks.ts'
import { dueLiveOrders, type LiveOrder, onLiveWork, tenantsWithLiveWork } from './outbox.ts'
import { reconcileTenant } from './reconciliation.ts'

export interface LiveExecutorOptions {
  venues: VenueSettings
  secrets: () => SecretBox
  /** ccxt instances per tenant, so that cancels go out side by side (default 8). */
  poolSize?: number
  /** How often working orders are read for fills (default 2000 ms). */
  pollMs?: number
  /** How often the venue is reconciled (default 60000 ms). */
  reconcileMs?: number
}

/** A pool that could not be opened (credentials, venue down) is opened again after this. */
const REOPEN_MS = 30_000

interface Lane {
  tenantId: string
  exchangeId: string
  /** Which connection of the account the pool was opened for: a new PUT /api/v1/venue opens a new pool. */
  connection: string
  pool: Promise<Exchange[]>
  running: boolean
  again: boolean
  turn: number
  polledAt: number
  reconciledAt: number
}

/** Runs `work` over `items` on `pool.length` workers, each with its own instance. */
async function onPool<T>(pool: Exchange[], items: T[], work: (item: T, exchange: Exchange) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    pool.map(async (exchange) => {
      while (next < items.length) await work(items[next++], exchange)
    }),
  )
}

export function createLiveExecutor(options: LiveExecutorOptions): Service {
  const poolSize = options.poolSize ?? 8
  const pollMs = options.pollMs ?? 2000
  const reconcileMs = options.reconcileMs ?? 60_000
  const lanes = new Map<string, Lane>()
  const broken = new Map<string, number>()
  const startedAt = Date.now()
  let stopped = false
  const running = new Set<Promise<void>>()

  async function openPool(tenantId: string): Promise<Exchange[]> {
    const credentials = venueCredentials(tenantId, options.secrets())
    if (!credentials) throw new Error(`tenant ${tenantId} has no venue connected`)
    const source = { ...credentials, venueUrl: options.venues.url, caFile: options.venues.caFile }
    const first = await openExchange(source)
    await first.loadMarkets()
    rememberMarkets(first.id, first.markets)
    const rest = await Promise.all(Array.from({ length: poolSize - 1 }, () => openExchange(source)))
    for (const exchange of rest) exchange.setMarkets(first.markets)
    // ccxt's own pacing holds every order ~10 ms even on an idle instance (measured: 12 ms a
    // createOrder against 2 ms without it). The executor paces itself instead: at most poolSize
    // calls at once, a poll every pollMs, and the venue's 429 Retry-After waited out (placement.ts).
    for (const exchange of [first, ...rest]) exchange.enableRateLimit = false
    return [first, ...rest]
  }

  function laneOf(tenantId: string, exchangeId: string, connection: string): Lane {
    const known = lanes.get(tenantId)
    if (known && known.connection === connection) return known
    const lane: Lane = { tenantId, exchangeId, connection, pool: openPool(tenantId), running: false, again: false, turn: 0, polledAt: 0, reconciledAt: 0 }
    lane.pool.catch(() => {
      // The pass that awaits the pool logs why; the next lane is opened once REOPEN_MS has passed.
      if (lanes.get(tenantId) === lane) lanes.delete(tenantId)
      broken.set(tenantId, Date.now() + REOPEN_MS)
    })
    lanes.set(tenantId, lane)
    return lane
  }

  async function pass(lane: Lane): Promise<void> {
    // ccxt paces the calls of each instance (binance: a slot every few ms): each pass starts on the
    // instance that rested longest, so one order at a time never waits for the previous one's slot.
    const opened = await lane.pool
    const turn = lane.turn++ % opened.length
    const pool = [...opened.slice(turn), ...opened.slice(0, turn)]
    // A pass that called nothing (a paused BUY held back, a retry not yet due) leaves /health as it was.
    const calls = { made: false, answered: true }
    const context: TaskContext = {
      startedAt,
      note: (answered) => {
        calls.made = true
        calls.answered &&= answered
      },
    }
    const now = Date.now()
    const due = dueLiveOrders(lane.tenantId, now)
    const cancels = due.filter((o) => o.cancel_by !== null)
    // A fenced order waits for settlement to name its cancel; a paused BUY waits for RESUME.
    const sends = due.filter((o) => o.cancel_by === null && !o.fenced && (o.state === 'QUEUED' || o.state === 'SENT') && !(o.side === 'BUY' && o.paused))
    await onPool(pool, cancels, (order, exchange) => cancelTask(order, exchange, context))
    await onPool(pool, sends, (order, exchange) => placeTask(order, exchange, context))
    if (now - lane.polledAt >= pollMs) {
      lane.polledAt = now
      const open = due.filter((o) => o.cancel_by === null && o.state === 'OPEN')
      if (open.length) await poll(pool, open, context)
    }
    if (now - lane.reconciledAt >= reconcileMs) {
      lane.reconciledAt = now
      try {
        await reconcileTenant(lane.tenantId, pool[0])
        context.note(true)
      } catch (error) {
        context.note(false)
        log({
          level: 'warn',
          msg: 'venue reconciliation failed',
          tenant_id: lane.tenantId,
          error: error instanceof Error ? error.message.replace(/\?\S*/g, '') : String(error),
        })
      }
    }
    if (calls.made) noteVenue(lane.exchangeId, calls.answered)
  }

  /** One read of the venue's open orders; an order gone from it, or filled further, is read on its own. */
  async function poll(pool: Exchange[], open: LiveOrder[], context: TaskContext): Promise<void> {
    let onVenue: Map<string, { filled: number }>
    try {
      const venueOrders = await pool[0].fetchOpenOrders()
      onVenue = new Map(venueOrders.map((o) => [o.clientOrderId ?? '', { filled: o.filled ?? 0 }]))
      context.note(true)
    } catch {
      context.note(false)
      return
    }
    const changed = open.filter((o) => {
      const seen = onVenue.get(o.id)
      return !seen || seen.filled > o.filled_quantity
    })
    await onPool(pool, changed, (order, exchange) => syncTask(order, exchange, context))
  }

  function run(tenantId: string, exchangeId: string, connection: string): void {
    if (stopped || (broken.get(tenantId) ?? 0) > Date.now()) return
    const lane = laneOf(tenantId, exchangeId, connection)
    if (lane.running) {
      lane.again = true
      return
    }
    lane.running = true
    const job = (async () => {
      do {
        lane.again = false
        try {
          await pass(lane)
        } catch (error) {
          noteVenue(exchangeId, false)
          log({
            level: 'warn',
            msg: 'live executor pass failed',
            tenant_id: tenantId,
            error: error instanceof Error ? error.message.replace(/\?\S*/g, '') : String(error),
          })
        }
      } while (lane.again && !stopped)
      lane.running = false
    })()
    running.add(job)
    job.finally(() => running.delete(job))
  }

  /** Every tenant with LIVE work or a venue to reconcile. */
  function scan(): void {
    const withWork = new Set(tenantsWithLiveWork())
    for (const venue of connectedVenues()) {
      const lane = lanes.get(venue.tenantId)
      const idle = !withWork.has(venue.tenantId) && lane && Date.now() - lane.reconciledAt < reconcileMs && Date.now() - lane.polledAt < pollMs
      if (!idle) run(venue.tenantId, venue.exchange, venue.connectedAt)
    }
  }

  return {
    name: 'live-executor',
    start() {
      onLiveWork(scan)
      scan()
      const timer = setInterval(scan, Math.min(pollMs, 1000))
      timer.unref()
      return async () => {
        stopped = true
        onLiveWork(undefined)
        clearInterval(timer)
        await Promise.allSettled([...running])
      }
    },
  }
}
