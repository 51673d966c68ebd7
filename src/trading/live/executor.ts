// The LIVE executor `serve` runs (SPEC 10): it works the outbox of LIVE orders (./outbox.ts) after
// their transactions commit. One lane per tenant with a venue, on that tenant's venue session
// (venues/sessions.ts: a pool of ccxt instances over shared kept-alive connections). A pass hands
// each due order to its move (./lifecycle.ts: cancel what was asked to be canceled, send what is
// queued or may have been sent), reads the venue's open orders every few seconds to pick up fills,
// and reconciles every minute. It reads committed rows (store.read) and writes each outcome in its own
// store.write(), never around a venue call.
import { log } from '../../shared/log.ts'
import { CATCH_UP_AFTER_MS, type Service } from '../../store/service.ts'
import type { Store } from '../../store/store.ts'
import { connectedVenues } from '../../venues/accounts.ts'
import { type Exchange, failureText } from '../../venues/exchange.ts'
import type { VenueSession, VenueSessions } from '../../venues/sessions.ts'
import { noteVenue } from '../../venues/status.ts'
import { cancelOnVenue, type MoveContext, sendOrder, syncOrder } from './lifecycle.ts'
import { dueLiveOrders, type LiveOrder, onLiveWork, tenantsWithLiveWork } from './outbox.ts'
import { reconcileTenant } from './reconciliation.ts'
import { PROTECTION_POLL_MS, tendProtections } from '../protection/poll.ts'
import { protectionDue, protectionOnVenue, tenantsWithDueProtections } from '../protection/store.ts'
import { readOpenOrders } from '../../venues/open-orders.ts'
import { mayWatch, noteLimits } from '../../venues/weight.ts'

export interface LiveExecutorOptions {
  sessions: VenueSessions
  /** How often working orders are read for fills (default 2000 ms). */
  pollMs?: number
  /** How often the venue is reconciled (default 60000 ms). */
  reconcileMs?: number
}

interface Lane {
  tenantId: string
  exchangeId: string
  running: boolean
  again: boolean
  turn: number
  polledAt: number
  reconciledAt: number
  protectedAt: number
}

/** Runs `work` over `items` on `pool.length` workers, each with its own instance. */
export async function onPool<T>(pool: Exchange[], items: T[], work: (item: T, exchange: Exchange) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    pool.map(async (exchange) => {
      while (next < items.length) await work(items[next++], exchange)
    }),
  )
}

export function createLiveExecutor(options: LiveExecutorOptions): Service {
  const { sessions } = options
  const pollMs = options.pollMs ?? 2000
  const reconcileMs = options.reconcileMs ?? 60_000
  const lanes = new Map<string, Lane>()
  const startedAt = Date.now()
  let stopped = false
  const running = new Set<Promise<void>>()

  async function pass(store: Store, lane: Lane, session: VenueSession): Promise<void> {
    // Each pass starts on the instance after the last pass's first, so that calls spread over the pool.
    const turn = lane.turn++ % session.pool.length
    const pool = [...session.pool.slice(turn), ...session.pool.slice(0, turn)]
    // A pass that called nothing (a paused BUY held back, a retry not yet due) leaves /health as it was.
    const calls = { made: false, answered: true }
    const context: MoveContext = {
      startedAt,
      resyncClock: session.resyncClock,
      note: (answered) => {
        calls.made = true
        calls.answered &&= answered
      },
    }
    const now = Date.now()
    const due = await dueLiveOrders(store.read, lane.tenantId, now)
    const cancels = due.filter((o) => o.cancel_by !== null)
    // A fenced order waits for settlement to name its cancel.
    const sends = due.filter((o) => o.cancel_by === null && !o.fenced && (o.state === 'QUEUED' || o.state === 'SENT' || o.state === 'UNKNOWN'))
    await onPool(pool, cancels, (order, exchange) => cancelOnVenue(store, order, exchange, context))
    // Protections before sends: a SELL waits for its pair's protection to be off the venue (SPEC 13).
    const sales: LiveOrder[] = []
    for (const o of sends) if (o.side === 'SELL' && o.state === 'QUEUED' && (await protectionOnVenue(store.read, o.tenant_id, o.pair))) sales.push(o)
    if (sales.length > 0) {
      await store.write(async (tx) => {
        for (const o of sales) await protectionDue(tx, o.tenant_id, o.pair, new Date())
      })
    }
    lane.protectedAt = await tendProtections(store, lane.tenantId, pool, context, lane.protectedAt, onPool)
    await onPool(pool, sends, (order, exchange) => sendOrder(store, order, exchange, context))
    if (now - lane.polledAt >= pollMs) {
      lane.polledAt = now
      const open = due.filter((o) => o.cancel_by === null && o.state === 'OPEN')
      if (open.length) await poll(store, pool, open, context)
    }
    if (now - lane.reconciledAt >= reconcileMs) {
      lane.reconciledAt = now
      try {
        await reconcileTenant(store, lane.tenantId, pool[0], session.resyncClock)
        context.note(true)
      } catch (error) {
        noteLimits(pool[0], error)
        context.note(false)
        log({ level: 'warn', msg: 'venue reconciliation failed', tenant_id: lane.tenantId, error: failureText(error) })
      }
    }
    if (calls.made) noteVenue(lane.exchangeId, calls.answered, lane.tenantId)
  }

  /** One read of the venue's open orders; an order gone from it, or filled further, is read on its own. */
  async function poll(store: Store, pool: Exchange[], open: LiveOrder[], context: MoveContext): Promise<void> {
    let onVenue: Map<string, { filled?: number }>
    if (!mayWatch(pool[0].id)) return
    try {
      onVenue = await readOpenOrders(
        pool[0],
        open.map((o) => o.pair),
        context.resyncClock,
      )
      context.note(true)
    } catch (error) {
      noteLimits(pool[0], error)
      context.note(false)
      return
    }
    const changed = open.filter((o) => {
      const seen = onVenue.get(o.id)
      return !seen || (seen.filled ?? 0) > o.filled_quantity
    })
    await onPool(pool, changed, (order, exchange) => syncOrder(store, order, exchange, context))
  }

  /** Keeps a job until it ends, so that stopping waits for it. */
  function track(job: Promise<void>, what: string, tenantId?: string): void {
    running.add(job)
    job.finally(() => running.delete(job)).catch((error) => log({ level: 'error', msg: what, tenant_id: tenantId, error: failureText(error) }))
  }

  function run(store: Store, tenantId: string, exchangeId: string): void {
    if (stopped) return
    let lane = lanes.get(tenantId)
    if (!lane) {
      lane = { tenantId, exchangeId, running: false, again: false, turn: 0, polledAt: 0, reconciledAt: 0, protectedAt: 0 }
      lanes.set(tenantId, lane)
    }
    if (lane.running) {
      lane.again = true
      return
    }
    lane.running = true
    const current = lane
    const job = (async () => {
      do {
        current.again = false
        let session: VenueSession
        try {
          session = await sessions.open(store.read, tenantId)
        } catch {
          // Logged by the session when it failed; opened again after a pause (venues/sessions.ts).
          noteVenue(exchangeId, false, tenantId)
          break
        }
        current.exchangeId = session.exchangeId
        try {
          await pass(store, current, session)
        } catch (error) {
          noteVenue(exchangeId, false, tenantId)
          log({ level: 'warn', msg: 'live executor pass failed', tenant_id: tenantId, error: failureText(error) })
        }
      } while (current.again && !stopped)
      current.running = false
    })()
    track(job, 'live executor job failed', tenantId)
  }

  /** Every tenant with LIVE work or a venue to reconcile. */
  async function scan(store: Store): Promise<void> {
    if (stopped) return
    const now = Date.now()
    const withWork = new Set([...(await tenantsWithLiveWork(store.read)), ...(await tenantsWithDueProtections(store.read, now))])
    for (const venue of await connectedVenues(store.read)) {
      const lane = lanes.get(venue.tenantId)
      const quiet = lane && now - lane.reconciledAt < reconcileMs && now - lane.polledAt < pollMs && now - lane.protectedAt < PROTECTION_POLL_MS
      const idle = !withWork.has(venue.tenantId) && quiet
      if (!idle) run(store, venue.tenantId, venue.exchange)
    }
  }

  return {
    name: 'live-executor',
    start({ store }) {
      // One scan at a time: a signal during one asks for another after it.
      let scanning = false
      let rescan = false
      const sweep = () => {
        if (scanning) {
          rescan = true
          return
        }
        scanning = true
        const job = (async () => {
          try {
            do {
              rescan = false
              await scan(store)
            } while (rescan && !stopped)
          } finally {
            scanning = false
          }
        })()
        track(job, 'live executor scan failed')
      }
      // A named tenant's lane runs at once (a bot waits for its order's answer); a lane never run
      // yet, or no name, goes through the sweep.
      onLiveWork((hint) => {
        const exchange = hint && (hint.exchange ?? lanes.get(hint.tenantId)?.exchangeId)
        if (hint && exchange) run(store, hint.tenantId, exchange)
        else sweep()
      })
      // What a crash or a CLI left in the outbox, and the reconciliation at start, once the first answers are out.
      const first = setTimeout(sweep, CATCH_UP_AFTER_MS)
      const timer = setInterval(sweep, Math.min(pollMs, 1000))
      timer.unref()
      return async () => {
        stopped = true
        clearTimeout(first)
        onLiveWork(undefined)
        clearInterval(timer)
        await Promise.allSettled([...running])
        await sessions.close()
      }
    },
  }
}
