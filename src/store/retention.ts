// Retention (SPEC section 8): the upkeep deletes rows that have outlived their use, a small batch
// per write transaction, so neither the event loop nor another writer (a CLI command, the webhook
// sender) waits behind it for long. Each feature owns the SQL for its own tables and hands it over
// as a Purge (src/app.ts wires them in); this module only sets the pace. It never imports a
// feature: store/ sits below them all.
import type { Store, Tx } from './store.ts'

const DAY_MS = 24 * 3600 * 1000
/** Rows per transaction: a few milliseconds of work, even on a slow disk. */
const PURGE_BATCH = 500

export interface PurgeContext {
  nowMs: number
  retentionMs: number
}

/** One batch: at most `limit` rows examined, inside the caller's transaction `tx`. */
export type PurgeStep = (tx: Tx, limit: number) => Promise<{ deleted: number; more: boolean }>

export interface Purge {
  /** The table whose rows it deletes; the key of the upkeep's log line. */
  name: string
  /** Starts one pass as of `context.nowMs`; its step keeps whatever cursor the pass needs. */
  begin(context: PurgeContext): PurgeStep
}

/** Rows deleted per table. */
export type Purged = Record<string, number>

/** Lets the event loop run (timers, answers) between two batches. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Runs every purge in order, batch by batch, each batch its own `store.write()`, and calls `done`
 * with the counts (and the error, if a batch failed: the rest waits for the next run). Between two
 * batches of one purge the event loop runs (setImmediate). A batch that finds the write lock taken
 * (a CLI command writing) waits for it inside store.write(), as long as any write may. `stopped` is
 * asked before each batch. Never rejects: every error goes to `done`.
 */
export async function runPurges(
  store: Store,
  purges: readonly Purge[],
  nowMs: number,
  retentionDays: number,
  stopped: () => boolean,
  done: (purged: Purged, error?: Error) => void,
): Promise<void> {
  const purged: Purged = Object.fromEntries(purges.map((p) => [p.name, 0]))
  const context = { nowMs, retentionMs: retentionDays * DAY_MS }
  let failure: Error | undefined
  try {
    for (const purge of purges) {
      if (stopped()) break
      const step = purge.begin(context)
      for (;;) {
        const { deleted, more } = await store.write((tx) => step(tx, PURGE_BATCH))
        purged[purge.name] += deleted
        if (!more || stopped()) break
        await turn()
      }
    }
  } catch (error) {
    failure = error as Error
  }
  done(purged, failure)
}
