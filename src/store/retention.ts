// Retention (SPEC section 8): the upkeep deletes rows that have outlived their use, a small batch
// per BEGIN IMMEDIATE transaction, so neither the event loop nor another writer (a CLI command, the
// webhook sender) waits behind it for long. Each feature owns the SQL for its own tables and hands
// it over as a Purge (src/app.ts wires them in); this module only sets the pace. It never
// imports a feature: store/ sits below them all.
import { write } from './db.ts'
import { isBusy } from './write-queue.ts'

const DAY_MS = 24 * 3600 * 1000
/** Rows per transaction: a few milliseconds of work, even on a slow disk. */
const PURGE_BATCH = 500
/** A batch that finds the write lock taken (a CLI command writing) is tried again this often, this long. */
const BUSY_RETRY_MS = 50
const BUSY_GIVE_UP_MS = 10_000

export interface PurgeContext {
  nowMs: number
  retentionMs: number
}

/** One batch: at most `limit` rows examined, inside the caller's transaction. */
export type PurgeStep = (limit: number) => { deleted: number; more: boolean }

export interface Purge {
  /** The table whose rows it deletes; the key of the upkeep's log line. */
  name: string
  /** Starts one pass as of `context.nowMs`; its step keeps whatever cursor the pass needs. */
  begin(context: PurgeContext): PurgeStep
}

/** Rows deleted per table. */
export type Purged = Record<string, number>

/**
 * Runs every purge in order, batch by batch, and calls `done` with the counts (and the error, if a
 * batch failed: the rest waits for the next run). Between two batches of one purge the event loop
 * runs (setImmediate); a run where every purge is done after one batch finishes in the same tick.
 * `stopped` is asked before each batch.
 */
export function runPurges(
  purges: readonly Purge[],
  nowMs: number,
  retentionDays: number,
  stopped: () => boolean,
  done: (purged: Purged, error?: Error) => void,
): void {
  const purged: Purged = Object.fromEntries(purges.map((p) => [p.name, 0]))
  const context = { nowMs, retentionMs: retentionDays * DAY_MS }
  let index = 0
  let step: PurgeStep | undefined
  let busySince: number | undefined
  const next = (): void => {
    try {
      while (index < purges.length) {
        if (stopped()) {
          done(purged)
          return
        }
        const purge = purges[index]
        step ??= purge.begin(context)
        const { deleted, more } = write(() => step!(PURGE_BATCH))
        busySince = undefined
        purged[purge.name] += deleted
        if (more) {
          setImmediate(next)
          return
        }
        index++
        step = undefined
      }
    } catch (error) {
      // BEGIN IMMEDIATE failed before the step ran: the same batch is simply tried again.
      busySince ??= Date.now()
      if (isBusy(error) && Date.now() - busySince < BUSY_GIVE_UP_MS) setTimeout(next, BUSY_RETRY_MS)
      else done(purged, error as Error)
      return
    }
    done(purged)
  }
  next()
}
