// The publisher's clock inside `serve`: one in-process node-cron task per model at its schedule_utc
// (UTC), and at start a catch-up of the runs missed while the server was down (every date after
// the model's last run, at most CATCH_UP_DAYS back; older dates publish history, only the newest
// one trades), so a server that was down at 00:05 publishes as soon as it is back. Every 15 minutes
// a due run that is still pending (prices imported after the schedule time, a fire missed while
// the host slept) is tried again; it writes only the pairs that now have their candle.
import cron, { type ScheduledTask } from 'node-cron'
import { registerService } from '../system/services.ts'
import { healthExtras } from '../system/health.ts'
import { catalogue, type Model } from '../models/catalogue.ts'
import { addDays, catchUpDates, dueDate, publishAndLog, runPending, utcDate } from './publisher.ts'

/** The next instant any model is scheduled to publish, strictly after `now`. */
export function nextPublishAt(models: Model[], now: Date): Date | null {
  let next: Date | null = null
  for (const model of models) {
    const today = utcDate(now)
    let at = new Date(`${today}T${model.schedule_utc}:00.000Z`)
    if (at <= now) at = new Date(`${addDays(today, 1)}T${model.schedule_utc}:00.000Z`)
    if (!next || at < next) next = at
  }
  return next
}

registerService({
  name: 'publisher',
  start() {
    const models = catalogue()
    const tasks: ScheduledTask[] = models.map((model) => {
      const [hour, minute] = model.schedule_utc.split(':').map(Number)
      // A function task runs in this process; node-cron only forks for a task given as a file path.
      return cron.schedule(`${minute} ${hour} * * *`, () => {
        const now = new Date()
        publishAndLog(model, utcDate(now), 'schedule', now)
      }, { name: `publish:${model.id}`, timezone: 'Etc/UTC', noOverlap: true })
    })
    tasks.push(cron.schedule('*/15 * * * *', () => {
      const now = new Date()
      for (const model of models) {
        const date = dueDate(model, now)
        if (runPending(model.id, date)) publishAndLog(model, date, 'retry', now)
      }
    }, { name: 'publish:retry', timezone: 'Etc/UTC', noOverlap: true }))
    healthExtras.nextPublishAt = () => nextPublishAt(models, new Date())?.toISOString() ?? null
    // Catch-up after listen, off the start path: the server answers while it runs.
    const catchUp = setImmediate(() => {
      const now = new Date()
      for (const model of models) {
        for (const date of catchUpDates(model, now)) publishAndLog(model, date, 'catch-up', now)
      }
    })
    return async () => {
      clearImmediate(catchUp)
      for (const task of tasks) await task.destroy()
      healthExtras.nextPublishAt = () => null
    }
  },
})
