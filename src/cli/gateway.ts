// `bulwark gateway key create|list|revoke`: a tenant's gateway keys (SPEC 14) from the operator's
// shell, as POST, GET and DELETE /api/v1/gateway/keys do them. create prints the key and the secret
// once (stdout, one `name: value` line each, for a script to read); they are never shown again.
import { type ParsedArgs, parseArgs, required, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, STORE_FLAGS } from '../config.ts'
import { openApp, type App } from '../app.ts'
import { DomainError } from '../shared/errors.ts'
import { isId } from '../store/ids.ts'
import { findTenant, type Tenant } from '../tenants/tenants.ts'
import { createGatewayKey, type GatewayKeyRecord, listGatewayKeys, revokeGatewayKey } from '../gateway/keys.ts'

const STORE_USAGE = '[--data-dir DIR] [--secrets-dir DIR] [--database URL]'

/** The App opened on the flags, `work` run with the tenant (1 when there is none, said on stderr), the App closed after. */
async function withTenant(flags: ParsedArgs['flags'], slug: string, work: (app: App, tenant: Tenant) => Promise<number>): Promise<number> {
  const app = await openApp(commandConfig(flags))
  try {
    const tenant = await findTenant(app.store.read, slug)
    if (!tenant) {
      process.stderr.write(`error: no tenant ${slug}\n`)
      return 1
    }
    return await work(app, tenant)
  } finally {
    await app.close()
  }
}

function state(key: GatewayKeyRecord): string {
  return key.revoked_at ? `revoked ${key.revoked_at}` : 'active'
}

export const gatewayKeyCreate: CliCommand = {
  name: 'gateway key create',
  usage: `bulwark gateway key create --tenant SLUG --name LABEL ${STORE_USAGE}`,
  summary:
    "create a key for a bot behind the gateway (/gateway/binance) and print its api_key and api_secret once; the tenant's Binance venue must be connected",
  examples: ['bulwark gateway key create --tenant acme --name freqtrade'],
  async run(argv) {
    const args = parseArgs(argv, { tenant: 'string', name: 'string', ...STORE_FLAGS })
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    const slug = required(args, 'tenant')
    const name = required(args, 'name')
    if ([...name].length > 100) throw new UsageError('--name must be at most 100 characters')
    return withTenant(args.flags, slug, async (app, tenant) => {
      try {
        const made = await app.store.write((tx) => createGatewayKey(tx, tenant.id, name, app.secrets(), new Date()))
        process.stdout.write(`id: ${made.id}\napi_key: ${made.api_key}\napi_secret: ${made.api_secret}\n`)
        process.stderr.write(
          `created gateway key ${made.id} (${made.name}) for tenant ${tenant.slug}; the secret is shown only this once. ` +
            'Point the bot at http://HOST:PORT/gateway/binance (ccxt urls.api: .../gateway/binance/api/v3, .../gateway/binance/sapi/v1).\n',
        )
        return 0
      } catch (error) {
        if (!(error instanceof DomainError)) throw error
        process.stderr.write(`error: ${tenant.slug}: ${error.detail}\n`)
        return 1
      }
    })
  },
}

export const gatewayKeyList: CliCommand = {
  name: 'gateway key list',
  usage: `bulwark gateway key list --tenant SLUG ${STORE_USAGE}`,
  summary: "list a tenant's gateway keys, newest first: id, the api_key's first 8 characters, state, created, name; never a key or a secret",
  examples: ['bulwark gateway key list --tenant acme'],
  async run(argv) {
    const args = parseArgs(argv, { tenant: 'string', ...STORE_FLAGS })
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    const slug = required(args, 'tenant')
    return withTenant(args.flags, slug, async (app, tenant) => {
      const keys = await listGatewayKeys(app.store.read, tenant.id)
      if (keys.length === 0) {
        process.stdout.write(`${tenant.slug}: no gateway key\n`)
        return 0
      }
      for (const k of keys) process.stdout.write(`${k.id}  ${k.api_key_prefix}...  ${k.created_at}  ${state(k)}  ${k.name}\n`)
      return 0
    })
  },
}

export const gatewayKeyRevoke: CliCommand = {
  name: 'gateway key revoke',
  usage: `bulwark gateway key revoke --tenant SLUG KEY_ID ${STORE_USAGE}`,
  summary: 'revoke a gateway key at once: the next request signed with it is refused (revoking it again changes nothing)',
  examples: ['bulwark gateway key revoke --tenant acme gwk_01JD2V3Q4R5S6T7V8W9XAYBZC0'],
  async run(argv) {
    const args = parseArgs(argv, { tenant: 'string', ...STORE_FLAGS })
    if (args.positional.length !== 1) throw new UsageError(args.positional.length ? `unexpected argument ${args.positional[1]}` : 'KEY_ID is required')
    const slug = required(args, 'tenant')
    const id = args.positional[0]
    return withTenant(args.flags, slug, async (app, tenant) => {
      const revoked = isId('gwk', id) ? await app.store.write((tx) => revokeGatewayKey(tx, tenant.id, id, new Date())) : undefined
      if (!revoked) {
        process.stderr.write(`error: tenant ${tenant.slug} has no gateway key ${id.slice(0, 40)}\n`)
        return 1
      }
      process.stdout.write(`${tenant.slug}: gateway key ${revoked.id} (${revoked.name}) revoked at ${revoked.revoked_at}\n`)
      return 0
    })
  },
}
