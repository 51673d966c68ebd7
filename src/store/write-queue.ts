// Writes that find the database locked by another process (a CLI command, Litestream, a sqlite3
// shell holding BEGIN IMMEDIATE). SQLite's own busy handler sleeps inside the call, and this
// process has one thread: a 5 s busy_timeout froze every request, /health included, for 5 s. In
// `serve` the busy timeout is a few milliseconds instead, and a write that still finds the lock
// taken waits in the Store's queue (src/store/sqlite/engine.ts), asynchronously, retrying every few
// milliseconds for up to 5 s; then it fails with DatabaseBusyError (503 database_busy with Retry-After).
import { db } from './db.ts'

/** How long a write may wait for the lock before it is refused. */
export const BUSY_DEADLINE_MS = 5000
/** SQLite's busy handler inside `serve`: short enough never to stall the event loop noticeably. */
const SERVE_BUSY_TIMEOUT_MS = 10
export const RETRY_EVERY_MS = 5

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
