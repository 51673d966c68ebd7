// Which run dates are due: a model runs once per UTC date at its schedule_utc, on the candle of the
// day before; a start owes every date missed since its last run (at most CATCH_UP_DAYS).
// Reads table publish_runs (model_id, date, as_of, signals, missing_pairs, first_run_at, last_run_at).
import { statement } from '../store/db.ts'
import { addDays, utcDay } from '../shared/dates.ts'
import type { Model } from '../models/catalogue.ts'

/** The candle a run dated `date` reads: the day before, closed at the run day's midnight UTC. */
export function asOfFor(date: string): string {
  return addDays(date, -1)
}

/** The newest run date whose schedule time has come: today once past HH:MM UTC, else yesterday. */
export function dueDate(model: Model, now: Date): string {
  const today = utcDay(now)
  return now.toISOString().slice(11, 16) >= model.schedule_utc ? today : addDays(today, -1)
}

/** How far back a start catches up runs missed while the server was down. */
export const CATCH_UP_DAYS = 7
const lastRunDate = statement<[string], { date: string | null }>('SELECT max(date) AS date FROM publish_runs WHERE model_id = ?')

/**
 * The run dates a start owes: every date after the model's last run up to the newest due one, at
 * most CATCH_UP_DAYS of them (oldest first), or just the newest due one for a model that never ran.
 * The newest is always included, so a run still missing pairs is retried.
 */
export function catchUpDates(model: Model, now: Date): string[] {
  const due = dueDate(model, now)
  const last = lastRunDate().get(model.id)?.date
  const dates: string[] = []
  if (last) {
    let date = addDays(due, -(CATCH_UP_DAYS - 1))
    if (date <= last) date = addDays(last, 1)
    for (; date < due; date = addDays(date, 1)) dates.push(date)
  }
  dates.push(due)
  return dates
}

const missingOf = statement<[string, string], { missing_pairs: number }>('SELECT missing_pairs FROM publish_runs WHERE model_id = ? AND date = ?')

/** True while the run of that date has not happened, or left pairs without a signal (it is retried). */
export function runPending(modelId: string, date: string): boolean {
  const run = missingOf().get(modelId, date)
  return !run || run.missing_pairs > 0
}

const incompleteSince = statement<[string, string], { date: string }>(
  'SELECT date FROM publish_runs WHERE model_id = ? AND missing_pairs > 0 AND date >= ? ORDER BY date',
)

/**
 * The runs owed now, oldest first: what a start catches up, and every run of the last
 * CATCH_UP_DAYS still missing pairs, less those complete. What new candles are run against.
 */
export function owedDates(model: Model, now: Date): string[] {
  const dates = new Set(catchUpDates(model, now))
  for (const { date } of incompleteSince().all(model.id, addDays(dueDate(model, now), -(CATCH_UP_DAYS - 1)))) dates.add(date)
  return [...dates].filter((date) => runPending(model.id, date)).sort()
}
