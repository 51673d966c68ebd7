// Background services of `serve` (publisher schedule, webhook sender, maintenance): listed in
// src/app.ts, started after the server listens with the Store they work on, stopped in reverse order
// on SIGTERM before the database closes.
import type { Store } from './store.ts'
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
