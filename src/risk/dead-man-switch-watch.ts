// The watch that fires dead man's switches (SPEC 9: within 1 s of the deadline). A timer runs to the
// nearest deadline, never further than 250 ms ahead, and reads the nearest deadline again each
// time: the API arms, re-arms and heartbeats at any time, and whatever it changed is seen within a
// quarter second without any hook from the routes. At start it fires what passed while serve was
// down. Each switch fires in its own transaction (the kill switch, the FIRED status, the event),
// so one tenant's failure never holds back another's.
import { DatabaseBusyError, isBusy } from '../store/sqlite/busy.ts'
import { log } from '../shared/log.ts'
import { CATCH_UP_AFTER_MS, type Service } from '../store/service.ts'
import type { Store } from '../store/store.ts'
import { dueSwitches, fireIfOverdue } from './dead-man-switch.ts'

/** The longest the watch sleeps: a switch armed meanwhile waits at most this before it is seen. */
const LOOK_EVERY_MS = 250
/** Another process holds the write lock (a CLI import, a backup): try again soon, without spinning. */
const BUSY_RETRY_MS = 50
/** A firing that failed for another reason is logged and retried this much later, not every tick. */
const FAILED_RETRY_MS = 60_000

/** Another process holds the write lock: SQLite said so, or the Store's queue gave up waiting for it. */
const busy = (error: unknown) => error instanceof DatabaseBusyError || isBusy(error)

/** Fires every switch due now; returns how long to sleep before looking again. */
async function fireDue(store: Store, failing: Map<string, number>): Promise<number> {
  const nowMs = Date.now()
  for (const [tenant, until] of failing) if (until <= nowMs) failing.delete(tenant)
  const { due, next } = await dueSwitches(store.read, new Date(nowMs), new Set(failing.keys()))
  for (const tenantId of due) {
    const now = new Date()
    try {
      const fired = await store.write((tx) => fireIfOverdue(tx, tenantId, now))
      if (fired) {
        log({
          level: 'warn',
          msg: "dead man's switch fired",
          tenant_id: tenantId,
          incident_id: fired.incident_id,
          deadline: fired.deadline,
          fired_at: fired.fired_at,
        })
      }
    } catch (error) {
      if (busy(error)) return BUSY_RETRY_MS
      failing.set(tenantId, Date.now() + FAILED_RETRY_MS)
      log({
        level: 'error',
        msg: "dead man's switch could not fire; retrying in 60 s",
        tenant_id: tenantId,
        error: error instanceof Error ? error.message : String(error),
      })
    }
  }
  if (next === undefined) return LOOK_EVERY_MS
  return Math.min(LOOK_EVERY_MS, Math.max(1, next - Date.now()))
}

export const deadManSwitchWatch: Service = {
  name: 'dead-man-switch',
  start({ store }) {
    const failing = new Map<string, number>()
    let timer: NodeJS.Timeout | undefined
    let stopped = false
    /** The look in progress, which stopping waits for: the store closes after the services stop. */
    let running: Promise<void> | undefined
    const look = async () => {
      let wait = LOOK_EVERY_MS
      try {
        wait = await fireDue(store, failing)
      } catch (error) {
        // The read of the due switches can meet the lock too; anything else is logged, and the watch goes on.
        if (busy(error)) wait = BUSY_RETRY_MS
        else log({ level: 'error', msg: "dead man's switch watch failed", error: error instanceof Error ? error.message : String(error) })
      }
      if (stopped) return
      timer = setTimeout(tick, wait)
      timer.unref()
    }
    // look() catches its own errors.
    const tick = () => {
      running = look().finally(() => {
        running = undefined
      })
    }
    // A deadline that passed while the server was down fires right after the first answers.
    timer = setTimeout(tick, CATCH_UP_AFTER_MS)
    timer.unref()
    return async () => {
      stopped = true
      clearTimeout(timer)
      await running
    }
  },
}
