// The publisher's clock inside `serve`: one in-process node-cron task per model at its schedule_utc
// (UTC), and at start a catch-up of the runs missed while the server was down (every date after
// the model's last run, at most CATCH_UP_DAYS back; older dates publish history, only the newest
// one trades), so a server that was down at 00:05 publishes as soon as it is back. Every 15 minutes
// a due run that is still pending (prices imported after the schedule time, a fire missed while
// the host slept) is tried again; it writes only the pairs that now have their candle. And when
// market data stores candles (src/app.ts hands publishOnNewCandles to it), every run still owed is
// tried at once: a start whose catch-up found no candles completes right after the back-fill.
import type { ScheduledTask } from 'node-cron'
import type { Service } from '../store/service.ts'
import type { Store } from '../store/store.ts'
import { log } from '../shared/log.ts'
import { catalogue, type Model } from '../models/catalogue.ts'
import { addDays, utcDay } from '../shared/dates.ts'
import { publishAndLog } from './publisher.ts'
import { catchUpDates, dueDate, owedDates, runPending } from './run-dates.ts'

/** The next instant any model is scheduled to publish, strictly after `now`. */
export function nextPublishAt(models: Model[], now: Date): Date | null {
  let next: Date | null = null
  for (const model of models) {
    const today = utcDay(now)
    let at = new Date(`${today}T${model.schedule_utc}:00.000Z`)
    if (at <= now) at = new Date(`${addDays(today, 1)}T${model.schedule_utc}:00.000Z`)
    if (!next || at < next) next = at
  }
  return next
}

// node-cron builds an Intl.DateTimeFormat for its first task, and ICU's first use costs a start
// ~30 ms: the tasks are made a moment after the server starts answering. The catch-up runs right
// after them in the same turn, so a schedule minute that passed meanwhile is published, not lost.
const SETUP_DELAY_MS = 500

/** node-cron, loaded with the schedule (it loads child_process and ICU): off every start's path. */
type Cron = typeof import('node-cron').default

/** Runs the publishes a tick owes; never throws (a failure is logged), so no tick's promise is dropped unhandled. */
async function logged(what: string, work: () => Promise<void>): Promise<void> {
  try {
    await work()
  } catch (error) {
    log({ level: 'error', msg: `publisher ${what} failed`, error: error instanceof Error ? error.message : String(error) })
  }
}

/** Each task returns its runs' promise: node-cron's noOverlap waits for it, and stop() awaits the one running (track). */
function scheduleTasks(cron: Cron, store: Store, models: Model[], track: (run: Promise<void>) => Promise<void>): ScheduledTask[] {
  const tasks = models.map((model) => {
    const [hour, minute] = model.schedule_utc.split(':').map(Number)
    // A function task runs in this process; node-cron only forks for a task given as a file path.
    return cron.schedule(
      `${minute} ${hour} * * *`,
      () => {
        const now = new Date()
        return track(
          logged('schedule', async () => {
            await publishAndLog(store, model, utcDay(now), 'schedule', now)
          }),
        )
      },
      { name: `publish:${model.id}`, timezone: 'Etc/UTC', noOverlap: true },
    )
  })
  tasks.push(
    cron.schedule(
      '*/15 * * * *',
      () => {
        const now = new Date()
        return track(
          logged('retry', async () => {
            for (const model of models) {
              const date = dueDate(model, now)
              if (await runPending(store.read, model.id, date)) await publishAndLog(store, model, date, 'retry', now)
            }
          }),
        )
      },
      { name: 'publish:retry', timezone: 'Etc/UTC', noOverlap: true },
    ),
  )
  return tasks
}

async function catchUp(store: Store, models: Model[]): Promise<void> {
  const now = new Date()
  for (const model of models) {
    for (const date of await catchUpDates(store.read, model, now)) await publishAndLog(store, model, date, 'catch-up', now)
  }
}

/** Candles were stored (market data says so after its commit): every run owed now that lacks pairs is run again. */
export async function publishOnNewCandles(store: Store, now = new Date()): Promise<void> {
  for (const model of await catalogue(store.read)) {
    for (const date of await owedDates(store.read, model, now)) await publishAndLog(store, model, date, 'candles', now)
  }
}

/** The daily publisher: node-cron at each model's schedule_utc, the 15-minute retry, the catch-up at start. */
export const publisherSchedule: Service = {
  name: 'publisher',
  start({ store }) {
    let tasks: ScheduledTask[] = []
    // Off the start path: the server answers while the schedule is set up and the catch-up runs.
    let stopped = false
    // The runs under way: stop() waits for them, so none writes after the database closes.
    const running = new Set<Promise<void>>()
    const track = (run: Promise<void>): Promise<void> => {
      running.add(run)
      void run.finally(() => running.delete(run))
      return run
    }
    const setup = setTimeout(() => {
      void track(
        logged('setup', async () => {
          const cron = (await import('node-cron')).default
          if (stopped) return
          const models = await catalogue(store.read)
          if (stopped) return
          tasks = scheduleTasks(cron, store, models, track)
          await catchUp(store, models)
        }),
      )
    }, SETUP_DELAY_MS)
    return async () => {
      stopped = true
      clearTimeout(setup)
      for (const task of tasks) await task.destroy()
      await Promise.all(running)
    }
  },
}
