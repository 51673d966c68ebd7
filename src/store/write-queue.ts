// Writes that find the database locked by another process (a CLI command, Litestream, a sqlite3
// shell holding BEGIN IMMEDIATE). SQLite's own busy handler sleeps inside the call, and this
// process has one thread: a 5 s busy_timeout froze every request, /health included, for 5 s. In
// `serve` the busy timeout is a few milliseconds instead, and a write that still finds the lock
// taken waits here, asynchronously: the event loop keeps serving reads and health while the queue
// retries the write lock every few milliseconds, without blocking, for up to 5 s. Urgent writes
// (the kill switch) go to the front of the line; the rest keep their order. A write still waiting
// after 5 s fails with DatabaseBusyError (503 database_busy with Retry-After).
import { db, withBusyTimeout, write } from './db.ts'

/** How long a write may wait for the lock before it is refused. */
export const BUSY_DEADLINE_MS = 5000
/** SQLite's busy handler inside `serve`: short enough never to stall the event loop noticeably. */
const SERVE_BUSY_TIMEOUT_MS = 10
export const RETRY_EVERY_MS = 5
/** A turn of the queue gives up the thread after this long, so reads get their turn too. */
const TURN_BUDGET_MS = 20

/** From now on a statement waits at most SERVE_BUSY_TIMEOUT_MS inside SQLite (serve, once it answers). */
export function waitForLocksAsynchronously(): void {
  db().pragma(`busy_timeout = ${SERVE_BUSY_TIMEOUT_MS}`)
}

/** The write lock stayed taken for BUSY_DEADLINE_MS; nothing of the change was written. */
export class DatabaseBusyError extends Error {
  constructor(waitedMs: number) {
    super(
      `the database is locked by another process (a CLI command, a backup or a shell); gave up after ${(waitedMs / 1000).toFixed(1)} s, nothing was written: retry shortly`,
    )
  }
}

/** True for SQLite's SQLITE_BUSY and its extended codes. */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY')
}

interface Waiter {
  work: () => unknown
  urgent: boolean
  since: number
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

const line: Waiter[] = []
/** A turn of the queue is already scheduled. */
let turnDue = false
let busySince: number | undefined

/**
 * Runs `work` in one write transaction as soon as the write lock is free, waiting asynchronously
 * (at most BUSY_DEADLINE_MS) while another process holds it. `work` must be synchronous; it runs
 * whole or not at all, and may run after other queued writes.
 *
 * @example
 * const result = await writeWhenFree(() => operateKillSwitchNow(tenantId, request), { urgent: true })
 */
export async function writeWhenFree<T>(work: () => T, options: { urgent?: boolean } = {}): Promise<T> {
  const urgent = options.urgent === true
  // While others wait, a newcomer queues behind them (unless urgent) instead of overtaking them.
  if (line.length === 0 || urgent) {
    try {
      const result = write(work)
      busySince = undefined
      return result
    } catch (error) {
      if (!isBusy(error)) throw error
    }
  }
  return new Promise<T>((resolve, reject) => {
    const waiter: Waiter = { work, urgent, since: Date.now(), resolve: resolve as (value: unknown) => void, reject }
    const at = urgent ? line.findIndex((w) => !w.urgent) : -1
    if (at === -1) line.push(waiter)
    else line.splice(at, 0, waiter)
    noteLockTaken(waiter.since)
    scheduleTurn()
  })
}

/** Since when the write lock has been found taken, with no write getting it since (undefined: it was free last time). */
export function writesBlockedSince(): number | undefined {
  return busySince
}

/** A probe (health) found the lock taken at `now`, or free (undefined). */
export function noteLockTaken(now: number | undefined): void {
  busySince = now === undefined ? undefined : (busySince ?? now)
}

function turn(): void {
  turnDue = false
  const now = Date.now()
  for (let i = line.length - 1; i >= 0; i--) {
    if (now - line[i].since >= BUSY_DEADLINE_MS) {
      const [late] = line.splice(i, 1)
      late.reject(new DatabaseBusyError(now - late.since))
    }
  }
  const started = performance.now()
  // Not even the few milliseconds of the busy handler here: this runs every few milliseconds.
  withBusyTimeout(db(), 0, () => {
    while (line.length && performance.now() - started < TURN_BUDGET_MS) {
      const head = line[0]
      let result: unknown
      try {
        result = write(head.work)
      } catch (error) {
        if (isBusy(error)) break
        line.shift()
        head.reject(error)
        continue
      }
      line.shift()
      busySince = undefined
      head.resolve(result)
    }
  })
  if (line.length) scheduleTurn()
}

function scheduleTurn(): void {
  if (turnDue) return
  turnDue = true
  setTimeout(turn, RETRY_EVERY_MS)
}
