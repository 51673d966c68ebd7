// Which run dates are due: a model runs once per UTC date at its schedule_utc, on the candle of the
// day before; a start owes every date missed since its last run (at most CATCH_UP_DAYS).
// Reads table publish_runs (model_id, date, as_of, signals, missing_pairs, first_run_at, last_run_at).
import { query, type Queries } from '../store/store.ts'
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
const lastRunDate = query<[string], { date: string | null }>('SELECT max(date) AS date FROM publish_runs WHERE model_id = ?')

/**
 * The run dates a start owes: every date after the model's last run up to the newest due one, at
 * most CATCH_UP_DAYS of them (oldest first), or just the newest due one for a model that never ran.
 * The newest is always included, so a run still missing pairs is retried.
 */
export async function catchUpDates(db: Queries, model: Model, now: Date): Promise<string[]> {
  const due = dueDate(model, now)
  const last = (await db.get(lastRunDate, [model.id]))?.date
  const dates: string[] = []
  if (last) {
    let date = addDays(due, -(CATCH_UP_DAYS - 1))
    if (date <= last) date = addDays(last, 1)
    for (; date < due; date = addDays(date, 1)) dates.push(date)
  }
  dates.push(due)
  return dates
}

const missingOf = query<[string, string], { missing_pairs: number }>('SELECT missing_pairs FROM publish_runs WHERE model_id = ? AND date = ?')

/** True while the run of that date has not happened, or left pairs without a signal (it is retried). */
export async function runPending(db: Queries, modelId: string, date: string): Promise<boolean> {
  const run = await db.get(missingOf, [modelId, date])
  return !run || run.missing_pairs > 0
}

const incompleteSince = query<[string, string], { date: string }>(
  'SELECT date FROM publish_runs WHERE model_id = ? AND missing_pairs > 0 AND date >= ? ORDER BY date',
)

/**
 * The runs owed now, oldest first: what a start catches up, and every run of the last
 * CATCH_UP_DAYS still missing pairs, less those complete. What new candles are run against.
 */
export async function owedDates(db: Queries, model: Model, now: Date): Promise<string[]> {
  const dates = new Set(await catchUpDates(db, model, now))
  for (const { date } of await db.all(incompleteSince, [model.id, addDays(dueDate(model, now), -(CATCH_UP_DAYS - 1))])) dates.add(date)
  const owed: string[] = []
  for (const date of dates) if (await runPending(db, model.id, date)) owed.push(date)
  return owed.sort()
}
