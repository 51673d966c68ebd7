import { parseArgs, positiveNumber, required, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, STORE_FLAGS } from '../config.ts'
import { openApp } from '../app.ts'
import { createTenant, SLUG_PATTERN, TenantExists, type Plan } from '../tenants/tenants.ts'
import { validate } from '../http/schema.ts'
import { riskProfileChangeSchema } from '../risk/profile.ts'
import { DomainError } from '../shared/errors.ts'

const FLAGS = { plan: 'string', 'max-open-trades': 'string', 'max-exposure-usd': 'string', ...STORE_FLAGS } as const

/** The limits given as flags, within the bounds PATCH /api/v1/risk/profile keeps; else a usage error naming the flag. */
function withinProfileBounds(limits: { max_open_trades?: number; max_exposure_usd?: number }): void {
  const given = Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined))
  if (Object.keys(given).length === 0) return
  try {
    validate(given, riskProfileChangeSchema)
  } catch (error) {
    if (!(error instanceof DomainError)) throw error
    const first = error.extra.errors?.[0]
    throw new UsageError(first ? `--${first.field.replaceAll('_', '-')} ${first.message}` : error.detail)
  }
}

export const tenantCreate: CliCommand = {
  name: 'tenant create',
  usage: 'bulwark tenant create SLUG --plan SIGNAL|EXECUTE [--max-open-trades N] [--max-exposure-usd X] [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary: 'create a tenant with its workspace and risk profile (defaults 5 trades, 10000 USD)',
  examples: ['bulwark tenant create acme --plan EXECUTE', 'bulwark tenant create solo --plan SIGNAL --max-open-trades 3 --max-exposure-usd 2500'],
  async run(argv) {
    const args = parseArgs(argv, FLAGS)
    const [slug, extra] = args.positional
    if (!slug) throw new UsageError('SLUG is required')
    if (extra) throw new UsageError(`unexpected argument ${extra}`)
    if (!new RegExp(SLUG_PATTERN).test(slug)) throw new UsageError(`SLUG must be lowercase letters, digits and hyphens (${SLUG_PATTERN})`)
    const plan = required(args, 'plan')
    if (plan !== 'SIGNAL' && plan !== 'EXECUTE') throw new UsageError('--plan must be SIGNAL or EXECUTE')
    const maxOpenTrades = positiveNumber(args, 'max-open-trades', true)
    const maxExposureUsd = positiveNumber(args, 'max-exposure-usd', false)
    withinProfileBounds({ max_open_trades: maxOpenTrades, max_exposure_usd: maxExposureUsd })
    const app = await openApp(commandConfig(args.flags))
    try {
      const tenant = await app.store.write((tx) => createTenant(tx, { slug, plan: plan as Plan, maxOpenTrades, maxExposureUsd }))
      process.stdout.write(`created tenant ${tenant.slug} (${tenant.id}), plan ${tenant.plan}\n`)
      return 0
    } catch (err) {
      if (err instanceof TenantExists) {
        process.stderr.write(`error: ${err.message}\n`)
        return 1
      }
      throw err
    } finally {
      await app.close()
    }
  },
}
