// Nightly database upkeep inside `serve`: fold the WAL back into the database file and truncate it
// (it otherwise only shrinks when no reader is ever active), and let SQLite refresh its planner
// statistics. A plain timer: node-cron's background tasks cannot run inside the one executable.
import type Database from 'better-sqlite3'
import { log as logLine } from '../http/log.ts'

const HOUR_UTC = 3
const MINUTE_UTC = 30
// TRUNCATE waits for readers (a CLI command, Litestream's long read) through the busy handler, which
// blocks this event loop; cap the wait, a busy checkpoint is simply retried the next night.
const CHECKPOINT_BUSY_MS = 250

export interface MaintenanceReport {
  checkpoint: { busy: number; log: number; checkpointed: number }
  duration_ms: number
}

export type MaintenanceLog = (line: Record<string, unknown>) => void

/** The first 03:30 UTC strictly after `after`. */
export function nextMaintenanceAt(after: Date): Date {
  const at = new Date(Date.UTC(after.getUTCFullYear(), after.getUTCMonth(), after.getUTCDate(), HOUR_UTC, MINUTE_UTC))
  if (at.getTime() <= after.getTime()) at.setUTCDate(at.getUTCDate() + 1)
  return at
}

/** One round of upkeep, now. */
export function runMaintenance(db: Database.Database): MaintenanceReport {
  const started = performance.now()
  const busyTimeout = db.pragma('busy_timeout', { simple: true }) as number
  let checkpoint: MaintenanceReport['checkpoint']
  db.pragma(`busy_timeout = ${CHECKPOINT_BUSY_MS}`)
  try {
    checkpoint = (db.pragma('wal_checkpoint(TRUNCATE)') as MaintenanceReport['checkpoint'][])[0]
  } finally {
    db.pragma(`busy_timeout = ${busyTimeout}`)
  }
  db.pragma('optimize')
  return { checkpoint, duration_ms: Math.round(performance.now() - started) }
}

/** Runs upkeep every night at 03:30 UTC until the returned stop function is called. */
export function startMaintenance(db: Database.Database, log: MaintenanceLog = logLine): () => void {
  let due = nextMaintenanceAt(new Date())
  let timer: NodeJS.Timeout

  const arm = () => {
    timer = setTimeout(fire, Math.max(0, due.getTime() - Date.now()))
    timer.unref() // never what keeps the process alive, nor what delays its exit
  }
  const fire = () => {
    // The wall clock can differ from the timer's monotonic clock (NTP steps): wait for real 03:30.
    if (Date.now() < due.getTime()) return arm()
    try {
      log({ level: 'info', msg: 'maintenance', ...runMaintenance(db) })
    } catch (error) {
      log({ level: 'error', msg: 'maintenance failed', error: (error as Error).message })
    }
    due = nextMaintenanceAt(new Date(Math.max(Date.now(), due.getTime())))
    arm()
  }

  arm()
  return () => clearTimeout(timer)
}
