// Writes that find the database locked by another process (a CLI command, Litestream, a sqlite3
// shell holding BEGIN IMMEDIATE). SQLite's own busy handler sleeps inside the call, and this
// process has one thread: a 5 s busy_timeout froze every request, /health included, for 5 s. So the
// engine's writer never waits inside SQLite: a write that finds the lock taken waits in the engine's
// queue (./engine.ts), asynchronously, retrying every few milliseconds for up to 5 s; then it fails
// with DatabaseBusyError (503 database_busy with Retry-After).

/** How long a write may wait for the lock before it is refused. */
export const BUSY_DEADLINE_MS = 5000
export const RETRY_EVERY_MS = 5

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
