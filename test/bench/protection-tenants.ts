// Many tenants for the protection benchmarks, in one process instead of three CLI runs each: each
// with an EXECUTE plan, a trading key (printed), and its venue account connected with the test
// venue's deterministic key for the slug (venueKey(slug, slug), which the benchmark adds to the
// venue). The connection is stored as `bulwark venue connect` stores it, without its check against
// the venue (the key may trade, may not withdraw: what the check would find). Run on a stopped server's data dir.
// Run: tsx test/bench/protection-tenants.ts --data-dir DIR --prefix P --count N  -> JSON [{slug, token}]
import { openApp } from '../../src/app.ts'
import { createApiKey } from '../../src/auth/api-keys.ts'
import { commandConfig } from '../../src/config.ts'
import { openSecretBox } from '../../src/store/secret-box.ts'
import { createTenant } from '../../src/tenants/tenants.ts'
import { saveVenueAccount } from '../../src/venues/accounts.ts'
import { venueKey } from '../support/venue/index.ts'
import { runAsScript } from './script.ts'

function flag(name: string): string {
  const i = process.argv.indexOf(`--${name}`)
  if (i === -1) throw new Error(`--${name} is required`)
  return process.argv[i + 1]
}

async function main(): Promise<void> {
  const dataDir = flag('data-dir')
  const prefix = flag('prefix')
  const count = Number(flag('count'))
  const config = commandConfig(dataDir)
  const app = await openApp(config)
  const box = openSecretBox(config.dataDir)
  const out: { slug: string; token: string }[] = []
  await app.store.write(async (tx) => {
    for (let i = 0; i < count; i++) {
      const slug = `${prefix}-${i}`
      const tenant = await createTenant(tx, { slug, plan: 'EXECUTE', maxOpenTrades: 1000, maxExposureUsd: 1_000_000_000 })
      const key = venueKey(slug, slug)
      const connect = { exchange: 'binance', api_key: key.apiKey, api_secret: key.secret }
      await saveVenueAccount(tx, tenant.id, connect, { canTrade: true, canWithdraw: false }, box, 'operator@localhost', new Date())
      const scopes = ['orders:write', 'trades:read', 'risk:admin', 'risk:read'] as const
      const { token } = await createApiKey(tx, { tenantId: tenant.id, createdBy: null, name: 'bench', scopes: [...scopes], expiresAt: null })
      out.push({ slug, token })
    }
  })
  await app.close()
  process.stdout.write(`${JSON.stringify(out)}\n`)
  process.exit(0)
}

runAsScript(import.meta.url, main)
