// Nightly database upkeep inside `serve`: delete what has outlived its retention (the purges that
// src/app.ts hands in, see ./retention.ts), fold the WAL back into the database file and
// truncate it (it otherwise only shrinks when no reader is ever active), and let SQLite refresh its
// planner statistics. The purges also run once shortly after start, so a server restarted every
// day still purges. A plain timer: node-cron's background tasks cannot run inside the one executable.
import { log as logLine } from '../shared/log.ts'
import { runPurges, type Purge, type Purged } from './retention.ts'
import type { CheckpointReport, Store } from './store.ts'

const HOUR_UTC = 3
const MINUTE_UTC = 30
/** After the first answers, not before them: a start serves first and tidies up after. */
const START_PURGE_DELAY_MS = 1000
// TRUNCATE waits for readers (a CLI command, Litestream's long read) through the busy handler, which
// blocks this event loop; cap the wait, a busy checkpoint is simply retried the next night.
const CHECKPOINT_BUSY_MS = 250

export interface MaintenanceReport {
  checkpoint: CheckpointReport
  duration_ms: number
}

export type MaintenanceLog = (line: Record<string, unknown>) => void

/** The first 03:30 UTC strictly after `after`. */
export function nextMaintenanceAt(after: Date): Date {
  const at = new Date(Date.UTC(after.getUTCFullYear(), after.getUTCMonth(), after.getUTCDate(), HOUR_UTC, MINUTE_UTC))
  if (at.getTime() <= after.getTime()) at.setUTCDate(at.getUTCDate() + 1)
  return at
}

/**
 * The checkpoint and the statistics, now (the nightly round runs this after its purges). SQLite's
 * only: undefined on PostgreSQL, whose own checkpointer and autovacuum do this.
 */
export async function runMaintenance(store: Store): Promise<MaintenanceReport | undefined> {
  if (store.engine === 'postgres') return undefined
  const started = performance.now()
  const checkpoint = await store.checkpoint(CHECKPOINT_BUSY_MS)
  return checkpoint && { checkpoint, duration_ms: Math.round(performance.now() - started) }
}

/**
 * Runs upkeep every night at 03:30 UTC, and the purges once START_PURGE_DELAY_MS after the call,
 * until the returned stop function is called (it waits for the round in progress). Each round logs
 * one line with the rows purged per table.
 */
export function startMaintenance(
  store: Store,
  log: MaintenanceLog = logLine,
  retention: { purges: readonly Purge[]; days: number } = { purges: [], days: 30 },
): () => Promise<void> {
  const { purges } = retention
  let due = nextMaintenanceAt(new Date())
  let timer: NodeJS.Timeout
  let stopped = false
  let current: Promise<void> | undefined

  // Retention first, then (at night) the checkpoint, which then also folds the deletes into the file.
  const round = async (reason: 'start' | 'nightly') => {
    const started = performance.now()
    let purged: Purged = {}
    let failure: Error | undefined
    await runPurges(
      store,
      purges,
      Date.now(),
      retention.days,
      () => stopped,
      (counts, purgeError) => {
        purged = counts
        failure = purgeError
      },
    )
    if (stopped) return // the database is closing; the next start purges again
    let checkpoint: CheckpointReport | undefined
    if (reason === 'nightly') {
      try {
        checkpoint = (await runMaintenance(store))?.checkpoint
      } catch (error) {
        failure ??= error as Error
      }
    }
    const line = { reason, purged, retention_days: retention.days, ...(checkpoint && { checkpoint }), duration_ms: Math.round(performance.now() - started) }
    if (failure) log({ level: 'error', msg: 'maintenance failed', error: failure.message, ...line })
    else log({ level: 'info', msg: 'maintenance', ...line })
  }
  /** One round at a time: a round asked for while one runs waits for it. Never rejects. */
  const start = (reason: 'start' | 'nightly') => {
    const previous = current
    current = (async () => {
      await previous
      await round(reason)
    })().catch((error) => log({ level: 'error', msg: 'maintenance failed', reason, error: error instanceof Error ? error.message : String(error) }))
  }

  const arm = () => {
    timer = setTimeout(fire, Math.max(0, due.getTime() - Date.now()))
    timer.unref() // never what keeps the process alive, nor what delays its exit
  }
  const fire = () => {
    // The wall clock can differ from the timer's monotonic clock (NTP steps): wait for real 03:30.
    if (Date.now() < due.getTime()) return arm()
    due = nextMaintenanceAt(new Date(Math.max(Date.now(), due.getTime())))
    arm()
    start('nightly')
  }

  arm()
  // With nothing to purge there is nothing to do at start: the checkpoint is for the night.
  const startTimer = purges.length ? setTimeout(() => start('start'), START_PURGE_DELAY_MS).unref() : undefined
  return async () => {
    stopped = true
    clearTimeout(timer)
    clearTimeout(startTimer)
    await current
  }
}
