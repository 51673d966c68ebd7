// `bulwark venue connect|show|disconnect`: a tenant's venue account from the operator's shell, with
// the same check against the venue as PUT /api/v1/venue. The secret comes on stdin (first line;
// a passphrase, for the exchanges that have one, on the second), never as a flag.
import { parseArgs, readStdin, required, str, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, exchangeId, VENUE_FLAGS, venueSettings, STORE_FLAGS } from '../config.ts'
import { openApp, type App } from '../app.ts'
import type { Queries } from '../store/store.ts'
import { openSecretBox } from '../store/secret-box.ts'
import { DomainError } from '../shared/errors.ts'
import { findTenant, type Tenant } from '../tenants/tenants.ts'
import { checkVenueConnect, findVenueAccount, saveVenueAccount, type VenueAccount, type VenueConnect } from '../venues/accounts.ts'
import { verifyVenueKey } from '../venues/verify.ts'
import { unknownExchange } from '../venues/exchange-ids.ts'
import { disconnectVenue } from '../trading/live/disconnect.ts'

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/

async function tenantOrExit(db: Queries, slug: string): Promise<Tenant | undefined> {
  const tenant = await findTenant(db, slug)
  if (!tenant) process.stderr.write(`error: no tenant ${slug}\n`)
  return tenant
}

/**
 * `--tenant SLUG [--data-dir DIR]` and nothing else: the App opened and `work` run with the tenant,
 * or 1 when there is none (said on stderr); the App closed after.
 */
async function withTenant(argv: string[], work: (app: App, tenant: Tenant) => Promise<number>): Promise<number> {
  const args = parseArgs(argv, { tenant: 'string', ...STORE_FLAGS })
  if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
  const slug = required(args, 'tenant')
  const app = await openApp(commandConfig(args.flags))
  try {
    const tenant = await tenantOrExit(app.store.read, slug)
    return tenant ? await work(app, tenant) : 1
  } finally {
    await app.close()
  }
}

function describe(slug: string, a: VenueAccount): string {
  if (a.status === 'DISCONNECTED') return `${slug}: no venue connected\n`
  const withdraw = a.can_withdraw === null ? 'unknown (the venue does not tell)' : String(a.can_withdraw)
  return `${slug}: ${a.exchange} ${a.status}, key ${a.api_key_hint}, can_trade=${a.can_trade} can_withdraw=${withdraw}, checked ${a.checked_at}, connected by ${a.connected_by}\n`
}

/** Where each field of a connection comes from on the command line. */
const SOURCES: Record<string, string> = {
  exchange: '--exchange',
  api_key: '--api-key',
  api_secret: 'the API secret (stdin, first line)',
  password: 'the passphrase (stdin, second line)',
}

/** The connection checked as PUT /api/v1/venue checks it; a bad field is a usage error naming where it came from. */
function connectInput(input: VenueConnect): VenueConnect {
  try {
    return checkVenueConnect(input)
  } catch (error) {
    if (!(error instanceof DomainError)) throw error
    const first = error.extra.errors?.[0]
    throw new UsageError(first ? `${SOURCES[first.field] ?? first.field} ${first.message}` : error.detail)
  }
}

export const venueConnect: CliCommand = {
  name: 'venue connect',
  usage:
    'bulwark venue connect --tenant SLUG --exchange ID --api-key KEY [--actor EMAIL] [--venue-url URL] [--ca-file FILE] [--data-dir DIR] [--secrets-dir DIR] [--database URL] < secret',
  summary: "check a tenant's exchange key against the venue and store it encrypted; the secret is read from stdin",
  examples: ['printf %s "$SECRET" | bulwark venue connect --tenant acme --exchange binance --api-key "$KEY"'],
  async run(argv) {
    const args = parseArgs(argv, { tenant: 'string', exchange: 'string', 'api-key': 'string', actor: 'string', ...VENUE_FLAGS, ...STORE_FLAGS })
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    const slug = required(args, 'tenant')
    const apiKey = required(args, 'api-key')
    const actor = str(args, 'actor') ?? 'operator@localhost'
    if (!EMAIL.test(actor)) throw new UsageError('--actor must be an e-mail address')
    let exchange: string
    let venues: ReturnType<typeof venueSettings>
    try {
      exchange = exchangeId(required(args, 'exchange'), '--exchange')!
      venues = venueSettings(args.flags)
    } catch (error) {
      throw new UsageError((error as Error).message)
    }
    const unknown = await unknownExchange(exchange)
    if (unknown) throw new UsageError(`--exchange ${unknown}`)
    const [secret = '', password] = (await readStdin()).split(/\r?\n/)
    if (secret.length < 8) throw new UsageError('the API secret must come on stdin (first line, at least 8 characters)')
    const input = connectInput({ exchange, api_key: apiKey, api_secret: secret, ...(password ? { password } : {}) })
    const config = commandConfig(args.flags)
    const app = await openApp(config)
    try {
      const tenant = await tenantOrExit(app.store.read, slug)
      if (!tenant) return 1
      // The venue is asked before the change begins: only the database is awaited inside a write.
      const verdict = await verifyVenueKey({ exchange, apiKey, secret, password: input.password, venueUrl: venues.url, caFile: venues.caFile })
      const account = await app.store.write((tx) => saveVenueAccount(tx, tenant.id, input, verdict, openSecretBox(config.secretsDir), actor, new Date()))
      process.stdout.write(describe(slug, account))
      return 0
    } catch (error) {
      if (!(error instanceof DomainError)) throw error
      process.stderr.write(`error: ${error.detail}\n`)
      return 1
    } finally {
      await app.close()
    }
  },
}

export const venueShow: CliCommand = {
  name: 'venue show',
  usage: 'bulwark venue show --tenant SLUG [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary: "show a tenant's venue account (exchange, key hint, what the key may do); never the secret",
  examples: ['bulwark venue show --tenant acme'],
  run: (argv) =>
    withTenant(argv, async (app, tenant) => {
      const account = await findVenueAccount(app.store.read, tenant.id)
      process.stdout.write(account ? describe(tenant.slug, account) : `${tenant.slug}: no venue connected\n`)
      return 0
    }),
}

export const venueDisconnect: CliCommand = {
  name: 'venue disconnect',
  usage: 'bulwark venue disconnect --tenant SLUG [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary: "forget a tenant's venue credentials",
  examples: ['bulwark venue disconnect --tenant acme'],
  run: (argv) =>
    withTenant(argv, async (app, tenant) => {
      let removed: VenueAccount
      try {
        removed = await app.store.write((tx) => disconnectVenue(tx, tenant.id))
      } catch (error) {
        if (!(error instanceof DomainError)) throw error
        process.stderr.write(`error: ${tenant.slug}: ${error.message}\n`)
        return 1
      }
      process.stdout.write(`${tenant.slug}: ${removed.exchange} disconnected, credentials forgotten\n`)
      return 0
    }),
}
