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
import { failureText } from '../../venues/exchange.ts'
import type { VenueSession, VenueSessions } from '../../venues/sessions.ts'
import { noteVenue } from '../../venues/status.ts'
import { cancelOnVenue, type MoveContext, sendOrder } from './lifecycle.ts'
import { dueLiveOrders, findDueLiveOrder, type LiveOrder, onLiveWork, tenantsWithLiveWork } from './outbox.ts'
import { reconcileTenant } from './reconciliation.ts'
import { PROTECTION_POLL_MS, tendProtections } from '../protection/poll.ts'
import { protectionDue, protectionOnVenue, tenantsWithDueProtections } from '../protection/store.ts'
import { mayWatch, noteLimits } from '../../venues/weight.ts'
import { onPool, pollOpenOrders } from './pool.ts'
import { keepWarm, Warmth } from './warmth.ts'

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
  /** A full pass is asked for. */
  again: boolean
  /** Orders whose move was asked (a new order, a cancel), made before anything else and on their own. */
  urgent: Set<string>
  turn: number
  polledAt: number
  reconciledAt: number
  protectedAt: number
  /** What the lane traded lately, so that it keeps the venue warm for the next order (./warmth.ts). */
  warmth: Warmth
}

function newLane(tenantId: string, exchangeId: string): Lane {
  return {
    tenantId,
    exchangeId,
    running: false,
    again: false,
    urgent: new Set(),
    turn: 0,
    polledAt: 0,
    reconciledAt: 0,
    protectedAt: 0,
    warmth: new Warmth(),
  }
}

export function createLiveExecutor(options: LiveExecutorOptions): Service {
  const { sessions } = options
  const pollMs = options.pollMs ?? 2000
  const reconcileMs = options.reconcileMs ?? 60_000
  const lanes = new Map<string, Lane>()
  const startedAt = Date.now()
  let stopped = false
  const running = new Set<Promise<void>>()

  /** The pool, starting on the instance after the last turn's first (calls spread over it), and what the moves' calls met. */
  function turnOf(lane: Lane, session: VenueSession) {
    const turn = lane.turn++ % session.pool.length
    const pool = [...session.pool.slice(turn), ...session.pool.slice(0, turn)]
    // A turn that called nothing (a paused BUY held back, a retry not yet due) leaves /health as it was.
    const calls = { made: false, answered: true }
    const context: MoveContext = {
      startedAt,
      resyncClock: session.resyncClock,
      note: (answered) => {
        calls.made = true
        calls.answered &&= answered
      },
    }
    const done = () => {
      if (!calls.made) return
      lane.warmth.called(Date.now())
      noteVenue(lane.exchangeId, calls.answered, lane.tenantId)
    }
    return { pool, context, done }
  }

  /**
   * The moves a caller waits for (a bot's new order or cancel, SPEC 14), without the reads of a
   * full pass: each order read alone, canceled or sent. One that needs more (a SELL whose pair's
   * protection rests on the venue, a retry not yet due) is left to a full pass.
   */
  async function moveNow(store: Store, lane: Lane, session: VenueSession, ids: string[]): Promise<void> {
    const { pool, context, done } = turnOf(lane, session)
    const now = Date.now()
    const movableAlone = async (order: LiveOrder) => {
      if (order.cancel_by !== null) return true
      if (order.state !== 'QUEUED' || order.fenced) return false
      return order.side === 'BUY' || !(await protectionOnVenue(store.read, order.tenant_id, order.pair))
    }
    const orders: LiveOrder[] = []
    for (const id of ids) {
      const order = await findDueLiveOrder(store.read, lane.tenantId, id, now)
      if (!order) continue
      lane.warmth.traded(order.pair, now)
      if (await movableAlone(order)) orders.push(order)
      else lane.again = true
    }
    await onPool(pool, orders, (order, exchange) =>
      order.cancel_by !== null ? cancelOnVenue(store, order, exchange, context) : sendOrder(store, order, exchange, context),
    )
    done()
  }

  async function pass(store: Store, lane: Lane, session: VenueSession): Promise<void> {
    const { pool, context, done } = turnOf(lane, session)
    const now = Date.now()
    // An order asked for during this pass is moved right after it, on its own.
    const due = (await dueLiveOrders(store.read, lane.tenantId, now)).filter((o) => !lane.urgent.has(o.id))
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
      if (open.length) await pollOpenOrders(store, pool, open, context)
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
    done()
    // A pass runs every second or two: one that called nothing keeps the venue warm when it is time.
    const pairs = lane.warmth.due(Date.now())
    if (pairs.length > 0 && mayWatch(lane.exchangeId)) {
      lane.warmth.called(Date.now())
      await keepWarm(store, lane.tenantId, session.quotes, pairs)
    }
  }

  /** Keeps a job until it ends, so that stopping waits for it. */
  function track(job: Promise<void>, what: string, tenantId?: string): void {
    running.add(job)
    job.finally(() => running.delete(job)).catch((error) => log({ level: 'error', msg: what, tenant_id: tenantId, error: failureText(error) }))
  }

  /** Runs the tenant's lane: the move of `orderId` when named, else a full pass; after the one running, if one is. */
  function run(store: Store, tenantId: string, exchangeId: string, orderId?: string): void {
    if (stopped) return
    let lane = lanes.get(tenantId)
    if (!lane) {
      lane = newLane(tenantId, exchangeId)
      lanes.set(tenantId, lane)
    }
    if (orderId === undefined) lane.again = true
    else lane.urgent.add(orderId)
    if (lane.running) return
    lane.running = true
    const current = lane
    const job = (async () => {
      while ((current.again || current.urgent.size > 0) && !stopped) {
        const urgent = [...current.urgent]
        current.urgent.clear()
        const full = current.again
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
          if (urgent.length > 0) await moveNow(store, current, session, urgent)
          if (full) await pass(store, current, session)
        } catch (error) {
          noteVenue(exchangeId, false, tenantId)
          log({ level: 'warn', msg: 'live executor pass failed', tenant_id: tenantId, error: failureText(error) })
        }
      }
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
        if (hint && exchange) run(store, hint.tenantId, exchange, hint.orderId)
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
