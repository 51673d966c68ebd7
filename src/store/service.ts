// Background services of `serve` (publisher schedule, webhook sender, maintenance): listed in
// src/app.ts, started after the server listens with the Store they work on, stopped in reverse order
// on SIGTERM before the database closes.
import type { Lease, Store } from './store.ts'
/**
 * How long after start a service begins the work a restart owes (a sweep of its outbox, what a crash
 * left): the first answers come first, and this is far inside every promise about that work (a dead
 * man's switch past its deadline fires within 1 s of a start).
 */
export const CATCH_UP_AFTER_MS = 150

export interface Service {
  name: string
  start(context: ServiceContext): () => void | Promise<void>
}

/** What a service is started with: the data dir, and the store it reads and writes. */
export interface ServiceContext {
  dataDir: string
  store: Store
}

/** What a node's /health says of each background service: it runs here, or waits for the holder's lease. */
export type LeaseStates = Map<string, 'held' | 'standby'>

/** How often a standby node tries to take a service's lease (a dead holder's is taken within 10 s, SPEC 15). */
export const LEASE_RETRY_MS = 2000

/**
 * `service`, run on one node at a time (SPEC 15): it starts once this node holds the lease named
 * after it and stops when the lease is lost (its connection died: another node may hold it now); a
 * node without it tries again every LEASE_RETRY_MS. On SQLite the lease is always granted, so the
 * service starts at once, as it always has. `states` gets the service's state for /health.
 *
 * @example
 * const states: LeaseStates = new Map()
 * const services = [createWebhookSender(settings), deadManSwitchWatch].map((s) => leased(s, states, log))
 */
export function leased(service: Service, states: LeaseStates, log: (line: Record<string, unknown>) => void, retryMs = LEASE_RETRY_MS): Service {
  return {
    name: service.name,
    start(context) {
      let stopped = false
      let lease: Lease | undefined
      let stopService: (() => void | Promise<void>) | undefined
      let turn: Promise<void> = Promise.resolve()
      states.set(service.name, 'standby')
      const check = async () => {
        if (stopped) return
        if (lease && !lease.held()) {
          log({ level: 'warn', msg: 'lease lost: the service stops here', service: service.name })
          states.set(service.name, 'standby')
          lease = undefined
          const stop = stopService
          stopService = undefined
          await stop?.()
        }
        if (lease) return
        try {
          lease = await context.store.lease(`service:${service.name}`)
        } catch (error) {
          lease = undefined // the database is unreachable: tried again at the next turn
          log({ level: 'warn', msg: 'lease not taken', service: service.name, error: error instanceof Error ? error.message : String(error) })
        }
        if (!lease) return
        if (stopped) {
          await lease.release()
          return
        }
        states.set(service.name, 'held')
        if (context.store.engine === 'postgres') log({ level: 'info', msg: 'lease taken: the service runs here', service: service.name })
        stopService = service.start(context)
      }
      // One check at a time, in order.
      const next = () => {
        turn = turn.then(check).catch((error) => log({ level: 'error', msg: 'lease check failed', service: service.name, error: String(error) }))
      }
      next()
      const timer = setInterval(next, retryMs)
      timer.unref()
      return async () => {
        stopped = true
        clearInterval(timer)
        await turn
        await stopService?.()
        await lease?.release()
        states.set(service.name, 'standby')
      }
    },
  }
}
