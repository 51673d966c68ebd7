// The LIVE executor `serve` runs (SPEC 10): it works the outbox of LIVE orders (./outbox.ts) after
// their transactions commit. One lane per tenant with a venue, on that tenant's venue session
// (venues/sessions.ts: a pool of ccxt instances over shared kept-alive connections). A pass hands
// each due order to its move (./lifecycle.ts: cancel what was asked to be canceled, send what is
// queued or may have been sent), reads the venue's open orders every few seconds to pick up fills,
// and reconciles every minute.
import { log } from '../../shared/log.ts'
import { write } from '../../store/db.ts'
import { CATCH_UP_AFTER_MS, type Service } from '../../store/service.ts'
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

  async function pass(lane: Lane, session: VenueSession): Promise<void> {
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
    const due = dueLiveOrders(lane.tenantId, now)
    const cancels = due.filter((o) => o.cancel_by !== null)
    // A fenced order waits for settlement to name its cancel.
    const sends = due.filter((o) => o.cancel_by === null && !o.fenced && (o.state === 'QUEUED' || o.state === 'SENT' || o.state === 'UNKNOWN'))
    await onPool(pool, cancels, (order, exchange) => cancelOnVenue(order, exchange, context))
    // Protections before sends: a SELL waits for its pair's protection to be off the venue (SPEC 13).
    const sales = sends.filter((o) => o.side === 'SELL' && o.state === 'QUEUED' && protectionOnVenue(o.tenant_id, o.pair))
    if (sales.length > 0) {
      write(() => {
        for (const o of sales) protectionDue(o.tenant_id, o.pair, new Date())
      })
    }
    lane.protectedAt = await tendProtections(lane.tenantId, pool, context, lane.protectedAt, onPool)
    await onPool(pool, sends, (order, exchange) => sendOrder(order, exchange, context))
    if (now - lane.polledAt >= pollMs) {
      lane.polledAt = now
      const open = due.filter((o) => o.cancel_by === null && o.state === 'OPEN')
      if (open.length) await poll(pool, open, context)
    }
    if (now - lane.reconciledAt >= reconcileMs) {
      lane.reconciledAt = now
      try {
        await reconcileTenant(lane.tenantId, pool[0], session.resyncClock)
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
  async function poll(pool: Exchange[], open: LiveOrder[], context: MoveContext): Promise<void> {
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
    await onPool(pool, changed, (order, exchange) => syncOrder(order, exchange, context))
  }

  function run(tenantId: string, exchangeId: string): void {
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
          session = await sessions.open(tenantId)
        } catch {
          // Logged by the session when it failed; opened again after a pause (venues/sessions.ts).
          noteVenue(exchangeId, false, tenantId)
          break
        }
        current.exchangeId = session.exchangeId
        try {
          await pass(current, session)
        } catch (error) {
          noteVenue(exchangeId, false, tenantId)
          log({ level: 'warn', msg: 'live executor pass failed', tenant_id: tenantId, error: failureText(error) })
        }
      } while (current.again && !stopped)
      current.running = false
    })()
    running.add(job)
    job
      .finally(() => running.delete(job))
      .catch((error) => log({ level: 'error', msg: 'live executor job failed', tenant_id: tenantId, error: failureText(error) }))
  }

  /** Every tenant with LIVE work or a venue to reconcile. */
  function scan(): void {
    const now = Date.now()
    const withWork = new Set([...tenantsWithLiveWork(), ...tenantsWithDueProtections(now)])
    for (const venue of connectedVenues()) {
      const lane = lanes.get(venue.tenantId)
      const quiet = lane && now - lane.reconciledAt < reconcileMs && now - lane.polledAt < pollMs && now - lane.protectedAt < PROTECTION_POLL_MS
      const idle = !withWork.has(venue.tenantId) && quiet
      if (!idle) run(venue.tenantId, venue.exchange)
    }
  }

  return {
    name: 'live-executor',
    start() {
      onLiveWork(scan)
      // What a crash or a CLI left in the outbox, and the reconciliation at start, once the first answers are out.
      const first = setTimeout(scan, CATCH_UP_AFTER_MS)
      const timer = setInterval(scan, Math.min(pollMs, 1000))
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
