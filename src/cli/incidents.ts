// `bulwark incidents verify`: recomputes every tenant's incident hash chain from the database file;
// with --head, also checks the chain against a head kept outside the data dir (SPEC 6, anchoring).
import { parseArgs, str, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, STORE_FLAGS } from '../config.ts'
import { openStore } from '../store/open-store.ts'
import { allTenants, findTenant, type Tenant } from '../tenants/tenants.ts'
import { verifyChain, type Verification } from '../risk/incidents.ts'
import type { Queries } from '../store/store.ts'

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

export const incidentsVerify: CliCommand = {
  name: 'incidents verify',
  usage: 'bulwark incidents verify [--tenant SLUG] [--head HASH] [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary:
    'recompute the incident hash chains (every tenant, or one); exit 0 if intact, 1 naming the first broken incident. ' +
    '--head HASH (a hash kept outside the data dir, e.g. from a risk.* webhook event): also exit 1 unless a chain contains that ' +
    "record intact (without --tenant, any tenant's chain may hold it: hashes cover the tenant id)",
  examples: ['bulwark incidents verify', 'bulwark incidents verify --tenant acme', 'bulwark incidents verify --tenant acme --head "$(cat acme-head.txt)"'],
  async run(argv) {
    const args = parseArgs(argv, { tenant: 'string', head: 'string', ...STORE_FLAGS })
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    const slug = str(args, 'tenant')
    const head = str(args, 'head')?.toLowerCase()
    if (head !== undefined && !/^[0-9a-f]{64}$/.test(head)) throw new UsageError('--head must be an incident hash: 64 hex digits')
    // The database only, not the App: verifying reads, and must work whatever secrets are at hand.
    const { dataDir, databaseUrl } = commandConfig(args.flags)
    const store = await openStore({ dataDir, databaseUrl })
    try {
      return await verify(store.read, slug, head)
    } finally {
      await store.close()
    }
  },
}

/** Every chain (or the tenant's), reported line by line; the exit code. */
async function verify(db: Queries, slug: string | undefined, head: string | undefined): Promise<number> {
  let tenants: Tenant[]
  if (slug !== undefined) {
    const tenant = await findTenant(db, slug)
    if (!tenant) {
      process.stderr.write(`error: no tenant ${slug}\n`)
      return 1
    }
    tenants = [tenant]
  } else {
    tenants = await allTenants(db)
  }
  let broken = 0
  let anchoredIn: string | undefined
  for (const tenant of tenants) {
    const v: Verification = await verifyChain(db, tenant.id, head)
    const anchor = v.anchor?.found ? `, contains head ${head} (${v.anchor.incident_id})` : ''
    if (anchor) anchoredIn = tenant.slug
    if ('broken_at' in v) {
      broken++
      process.stdout.write(`${tenant.slug}: BROKEN at ${v.broken_at} (after ${plural(v.count, 'intact incident')}${anchor})\n`)
      continue
    }
    process.stdout.write(`${tenant.slug}: intact, ${plural(v.count, 'incident')}, head ${v.head_hash}${anchor}\n`)
  }
  if (broken) process.stderr.write(`error: ${broken} of ${plural(tenants.length, 'incident chain')} broken\n`)
  if (head !== undefined && anchoredIn === undefined) {
    const scope = slug !== undefined ? `the chain of ${slug}` : 'any chain'
    process.stderr.write(
      `error: head ${head} not found in ${scope}${broken ? ' before its break' : ''}: ` +
        'truncated or rewritten after that record was anchored (or the hash is from another data dir)\n',
    )
    return 1
  }
  return broken ? 1 : 0
}
