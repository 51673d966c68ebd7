// `bulwark incidents verify`: recomputes every tenant's incident hash chain from the database file.
import { parseArgs, str, UsageError } from './args.ts'
import { dataDirFrom, type CliCommand } from './command.ts'
import { openDatabase } from '../store/db.ts'
import { listTenants, tenantBy, type Tenant } from '../tenants/tenants.ts'
import { verifyChain } from '../risk/incidents.ts'

export const incidentsVerify: CliCommand = {
  name: 'incidents verify',
  usage: 'bulwark incidents verify [--tenant SLUG] [--data-dir DIR]',
  summary: 'recompute the incident hash chains (every tenant, or one); exit 0 if intact, 1 naming the first broken incident',
  examples: ['bulwark incidents verify', 'bulwark incidents verify --tenant acme'],
  run(argv) {
    const args = parseArgs(argv, { tenant: 'string', 'data-dir': 'string' })
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    const slug = str(args, 'tenant')
    openDatabase(dataDirFrom(str(args, 'data-dir')))
    let tenants: Tenant[]
    if (slug !== undefined) {
      const tenant = tenantBy(slug)
      if (!tenant) { process.stderr.write(`error: no tenant ${slug}\n`); return 1 }
      tenants = [tenant]
    } else {
      tenants = listTenants()
    }
    let broken = 0
    for (const tenant of tenants) {
      const v = verifyChain(tenant.id)
      if (v.valid) {
        process.stdout.write(`${tenant.slug}: intact, ${v.count} incident${v.count === 1 ? '' : 's'}, head ${v.head_hash}\n`)
      } else {
        broken++
        process.stdout.write(`${tenant.slug}: BROKEN at ${v.broken_at} (after ${v.count} intact incident${v.count === 1 ? '' : 's'})\n`)
      }
    }
    if (broken) process.stderr.write(`error: ${broken} of ${tenants.length} incident chain${tenants.length === 1 ? '' : 's'} broken\n`)
    return broken ? 1 : 0
  },
}
