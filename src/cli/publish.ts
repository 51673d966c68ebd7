import { parseArgs, str, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, STORE_FLAGS } from '../config.ts'
import { openApp } from '../app.ts'
import { catalogue } from '../models/catalogue.ts'
import { publish, type PublishOutcome } from '../signals/publisher.ts'
import { parseDate, utcDay } from '../shared/dates.ts'

const FLAGS = { date: 'string', model: 'string', ...STORE_FLAGS } as const

function summary(o: PublishOutcome): string {
  const head = `${o.model_id} ${o.date} (as of ${o.as_of}):`
  if (o.status === 'already_published') return `${head} already published, nothing to do`
  if (o.status === 'skipped') return `${head} skipped`
  const counts = { ENTER_LONG: 0, HOLD: 0, EXIT_LONG: 0 }
  for (const s of o.signals) counts[s.action]++
  const written = `${o.signals.length} signal${o.signals.length === 1 ? '' : 's'} written (ENTER_LONG ${counts.ENTER_LONG}, HOLD ${counts.HOLD}, EXIT_LONG ${counts.EXIT_LONG})`
  const state = o.status === 'incomplete' ? `; ${o.missing} pair${o.missing === 1 ? '' : 's'} still without prices, run again once they are imported` : ''
  const history = o.live ? '' : '; a past date: no orders placed'
  return [`${head} ${written}${state}${history}`, ...o.notes.map((n) => `  ${n}`)].join('\n')
}

export const publishCommand: CliCommand = {
  name: 'publish',
  usage: 'bulwark publish [--date YYYY-MM-DD] [--model ID] [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary: "run the signal publisher now, from each pair's candle of the day before --date (default today, UTC); idempotent per model and date",
  examples: ['bulwark publish', 'bulwark publish --date 2026-11-22 --model trend-follower'],
  async run(argv) {
    const args = parseArgs(argv, FLAGS)
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    const date = str(args, 'date')
    const now = new Date()
    if (date !== undefined) {
      const parsed = parseDate(date)
      if (!parsed.ok) throw new UsageError(`--date ${JSON.stringify(date)} ${parsed.reason}`)
      // Today's run reads yesterday's candle, the newest closed one; a later run has no candle yet.
      if (date > utcDay(now)) throw new UsageError(`--date ${date} is in the future; the latest is today, ${utcDay(now)} (UTC)`)
    }
    const modelId = str(args, 'model')
    const app = await openApp(commandConfig(args.flags))
    try {
      const models = await catalogue(app.store.read)
      if (modelId !== undefined && !models.some((m) => m.id === modelId)) {
        process.stderr.write(`error: no model ${modelId}; models: ${models.map((m) => m.id).join(', ')}\n`)
        return 1
      }
      // Each model's run is its own change: publish opens them.
      const outcomes = await publish(app.store, { date, modelId, now })
      for (const o of outcomes) {
        for (const warning of o.warnings) process.stderr.write(`warning: ${warning}\n`)
        process.stdout.write(`${summary(o)}\n`)
      }
      return outcomes.some((o) => o.status === 'skipped') ? 1 : 0
    } finally {
      await app.close()
    }
  },
}
