// `bulwark kill-switch` and `bulwark resume`: the operator's kill switch, for one tenant or all of
// them in one transaction (every tenant is switched, or none is).
import { parseArgs, str, UsageError, type ParsedArgs } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, STORE_FLAGS } from '../config.ts'
import { openApp, type App } from '../app.ts'
import { allTenants, findTenant, type Tenant } from '../tenants/tenants.ts'
import { catalogue, findModel } from '../models/catalogue.ts'
import { operateKillSwitch, type KillSwitchAction, type KillSwitchResult } from '../risk/kill-switch.ts'
import { DomainError } from '../shared/errors.ts'

const FLAGS = {
  tenant: 'string',
  all: 'boolean',
  model: 'string',
  actor: 'string',
  reason: 'string',
  'reset-breakers': 'boolean',
  ...STORE_FLAGS,
} as const
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/

async function run(argv: string[], action: KillSwitchAction): Promise<number> {
  const args: ParsedArgs = parseArgs(argv, FLAGS)
  if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
  const slug = str(args, 'tenant')
  const all = args.flags.all === true
  if ((slug === undefined) === !all) throw new UsageError('give exactly one of --tenant SLUG and --all')
  const actor = str(args, 'actor') ?? 'operator@localhost'
  if (!EMAIL.test(actor)) throw new UsageError('--actor must be an e-mail address')
  const reason = str(args, 'reason')
  if (reason !== undefined && (reason.length === 0 || reason.length > 500)) throw new UsageError('--reason must be 1 to 500 characters')
  const modelId = str(args, 'model')
  const resetBreakers = args.flags['reset-breakers'] === true
  if (resetBreakers && action !== 'RESUME') throw new UsageError('--reset-breakers is only for resume')
  const app = await openApp(commandConfig(args.flags))
  try {
    return await operate(app, { action, slug, modelId, reason, actor, resetBreakers })
  } finally {
    await app.close()
  }
}

/** The kill switch (or resume) for the tenants named, all in one transaction: every one or none. */
async function operate(
  app: App,
  given: { action: KillSwitchAction; slug: string | undefined; modelId: string | undefined; reason: string | undefined; actor: string; resetBreakers: boolean },
): Promise<number> {
  const { action, slug, modelId, reason, actor, resetBreakers } = given
  const db = app.store.read
  if (modelId !== undefined && modelId !== 'all' && !(await findModel(db, modelId))) {
    const models = await catalogue(db)
    process.stderr.write(`error: no model ${modelId}; models: ${models.map((m) => m.id).join(', ')}, or all\n`)
    return 1
  }
  let tenants: Tenant[]
  if (slug === undefined) {
    tenants = await allTenants(db)
    if (tenants.length === 0) {
      process.stdout.write('no tenants\n')
      return 0
    }
  } else {
    const tenant = await findTenant(db, slug)
    if (!tenant) {
      process.stderr.write(`error: no tenant ${slug}\n`)
      return 1
    }
    tenants = [tenant]
  }
  const now = new Date()
  const request = { action, model_id: modelId, reason, ...(resetBreakers ? { reset_breakers: true } : {}) }
  let results: { slug: string; result: KillSwitchResult }[]
  try {
    results = await app.store.write(async (tx) => {
      const switched: { slug: string; result: KillSwitchResult }[] = []
      for (const t of tenants) {
        try {
          switched.push({ slug: t.slug, result: await operateKillSwitch(tx, t.id, request, actor, now) })
        } catch (error) {
          if (error instanceof DomainError) throw new DomainError(error.code, `${t.slug}: ${error.detail}`)
          throw error
        }
      }
      return switched
    })
  } catch (error) {
    // A loss breaker still holding refuses the resume: one line, and no tenant was switched.
    if (!(error instanceof DomainError)) throw error
    process.stderr.write(`error: ${error.detail}${tenants.length > 1 ? ' (no tenant was resumed)' : ''}\n`)
    return 1
  }
  for (const { slug: s, result: r } of results) {
    process.stdout.write(
      `${s}: ${r.status} trading_paused=${r.trading_paused} model_id=${r.model_id} canceled_orders=${r.canceled_orders} incident_id=${r.incident_id}\n`,
    )
  }
  return 0
}

export const killSwitchCommand: CliCommand = {
  name: 'kill-switch',
  usage: 'bulwark kill-switch --tenant SLUG|--all [--model ID] [--actor EMAIL] [--reason TEXT] [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary: 'engage CANCEL_AND_PAUSE: pause trading and cancel pending orders, for the fleet or one model; records the incident',
  examples: ['bulwark kill-switch --all --actor oncall@example.com --reason "exchange outage"', 'bulwark kill-switch --tenant acme --model trend-follower'],
  run: (argv) => run(argv, 'CANCEL_AND_PAUSE'),
}

export const resumeCommand: CliCommand = {
  name: 'resume',
  usage:
    'bulwark resume --tenant SLUG|--all [--model ID] [--reset-breakers] [--actor EMAIL] [--reason TEXT] [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary:
    'resume automation for the fleet (every model pause lifted too) or one model; refused while a loss breaker holds unless --reset-breakers; records the incident',
  examples: ['bulwark resume --tenant acme --actor oncall@example.com', 'bulwark resume --all'],
  run: (argv) => run(argv, 'RESUME'),
}
