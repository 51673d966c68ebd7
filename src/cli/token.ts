import { parseArgs, required, str, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, STORE_FLAGS } from '../config.ts'
import { openApp } from '../app.ts'
import { findTenant } from '../tenants/tenants.ts'
import { createApiKey } from '../auth/api-keys.ts'
import { isScope, SCOPES, type Scope } from '../auth/scopes.ts'
import { parseDateTime } from '../shared/dates.ts'

const FLAGS = { tenant: 'string', name: 'string', scopes: 'string', 'expires-at': 'string', ...STORE_FLAGS } as const

export const tokenCreate: CliCommand = {
  name: 'token create',
  usage: 'bulwark token create --tenant SLUG --name LABEL --scopes a,b [--expires-at ISO8601] [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary: `create an API key and print it once; scopes: ${SCOPES.join(', ')}`,
  examples: [
    'bulwark token create --tenant acme --name trading-bot --scopes signals:read,orders:write',
    'bulwark token create --tenant acme --name dashboard --scopes signals:read,trades:read --expires-at 2027-01-01T00:00:00Z',
  ],
  async run(argv) {
    const args = parseArgs(argv, FLAGS)
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    const slug = required(args, 'tenant')
    const name = required(args, 'name')
    if (name.length > 100) throw new UsageError('--name must be at most 100 characters')
    const scopes = required(args, 'scopes')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
    const bad = scopes.find((s) => !isScope(s))
    if (bad || scopes.length === 0) throw new UsageError(`--scopes must be a comma-separated list of ${SCOPES.join(', ')}${bad ? `; unknown: ${bad}` : ''}`)
    const given = str(args, 'expires-at')
    const expires = given === undefined ? undefined : parseDateTime(given)
    if (expires && !expires.ok) throw new UsageError(`--expires-at ${expires.reason}`)
    if (expires && expires.ms <= Date.now()) throw new UsageError(`--expires-at must be in the future; it is ${expires.iso}`)
    const app = await openApp(commandConfig(args.flags))
    try {
      const tenant = await findTenant(app.store.read, slug)
      if (!tenant) {
        process.stderr.write(`error: no tenant ${slug}\n`)
        return 1
      }
      const { record, token } = await app.store.write((tx) =>
        createApiKey(tx, {
          tenantId: tenant.id,
          createdBy: null,
          name,
          scopes: [...new Set(scopes)] as Scope[],
          expiresAt: expires?.iso ?? null,
        }),
      )
      process.stdout.write(`${token}\n`)
      process.stderr.write(
        `created API key ${record.id} (${record.prefix}...) for tenant ${tenant.slug} with scopes ${record.scopes.join(',')}; it is shown only this once\n`,
      )
      return 0
    } finally {
      await app.close()
    }
  },
}
