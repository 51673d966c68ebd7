// `bulwark store adopt-secrets`: after a database was restored where its secrets were lost (a new
// machine and a replica, without the old secrets dir), every start refuses it (SPEC 15: a node
// with other secrets exits 1). This records the given secrets' fingerprint instead, knowingly: what
// the old sealing key sealed (venue credentials, replayable answers) no longer opens, and every
// session is signed out; it says so, and what to do next.
//
// `bulwark store copy --to postgres://...`: the data dir's SQLite database into an empty PostgreSQL
// database (SPEC 15), in one transaction; before it commits, every incident chain (per tenant) and
// signal chain (per model) is recomputed on both sides and must end at the same head, or nothing is
// written. The URL carries a password: only its host and database are ever printed.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { openStore } from '../store/open-store.ts'
import { adoptSecrets, secretsFingerprint } from '../store/secrets-fingerprint.ts'
import { copyToPostgres, CopyRefused, describeTarget } from '../store/copy.ts'
import { openConnection } from '../store/db.ts'
import { query, type Queries } from '../store/store.ts'
import { allTenants } from '../tenants/tenants.ts'
import { verifyChain as verifyIncidents } from '../risk/incidents.ts'
import { chainRows, verifyChain as verifySignals } from '../signals/chain.ts'
import { parseArgs, str, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, STORE_FLAGS, postgresUrl } from '../config.ts'

export const storeAdoptSecrets: CliCommand = {
  name: 'store adopt-secrets',
  usage: 'bulwark store adopt-secrets [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary: "accept the secrets dir given as this database's own, after the ones it was opened with were lost",
  examples: ['bulwark store adopt-secrets --data-dir /var/lib/bulwark --secrets-dir /etc/bulwark/secrets'],

  async run(argv: string[]): Promise<number> {
    const args = parseArgs(argv, { ...STORE_FLAGS })
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    const config = commandConfig(args.flags)
    // The database only, not the App: opening the App is what refuses these secrets.
    const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl })
    try {
      const { before, after } = await store.write((tx) => adoptSecrets(tx, config.secretsDir))
      if (before === after) {
        console.log(`the secrets in ${config.secretsDir} are already this database's (fingerprint ${after})`)
        return 0
      }
      console.log(`this database now takes the secrets in ${config.secretsDir} (fingerprint ${before ?? 'none'} -> ${after})`)
      console.log('what the old sealing key sealed no longer opens: connect each venue account again (PUT /api/v1/venue); every session is signed out')
      return 0
    } finally {
      await store.close()
    }
  },
}

const modelIds = query<[], { id: string }>('SELECT id FROM models ORDER BY id')
const recordedFingerprint = query<[], { value: string }>("SELECT value FROM store_meta WHERE key = 'secrets_fingerprint'")

/** Every chain of a database, recomputed: "incidents <tenant>" or "signals <model>" -> what it ends at. */
async function chainHeads(db: Queries): Promise<Map<string, string>> {
  const heads = new Map<string, string>()
  for (const tenant of await allTenants(db)) {
    const v = await verifyIncidents(db, tenant.id)
    heads.set(`incidents ${tenant.slug}`, 'broken_at' in v ? `BROKEN at ${v.broken_at} after ${v.count}` : `${v.count}, head ${v.head_hash}`)
  }
  for (const { id } of await db.all(modelIds)) {
    const v = verifySignals(await chainRows(db, id))
    heads.set(`signals ${id}`, v.valid ? `${v.count}, head ${v.head_hash}` : `BROKEN (${v.problem}) at ${v.signal_id ?? 'the end'} after ${v.count}`)
  }
  return heads
}

/** The --to URL, checked as --database's is (exit 2 on a bad one); the message never repeats it. */
function targetUrl(text: string | undefined): string {
  if (text === undefined || text === '')
    throw new UsageError('--to is required: the PostgreSQL database to copy into, postgres://user:password@host:5432/database')
  postgresUrl(text, '--to')
  const { pathname } = new URL(text)
  if (pathname === '' || pathname === '/') throw new UsageError('--to must name a database: postgres://user:password@host:5432/database')
  return text
}

export const storeCopy: CliCommand = {
  name: 'store copy',
  usage: 'bulwark store copy --to URL [--data-dir DIR] [--secrets-dir DIR]',
  summary:
    "copy the data dir's SQLite database into an empty PostgreSQL database (--to postgres://...), in one transaction; " +
    'every incident and signal chain must recompute there to the same head, or nothing is written (exit 1)',
  examples: ['bulwark store copy --to "postgres://bulwark:$PGPASSWORD@db.internal:5432/bulwark" --data-dir /var/lib/bulwark'],

  async run(argv: string[]): Promise<number> {
    const args = parseArgs(argv, { to: 'string', ...STORE_FLAGS })
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    if (str(args, 'database') !== undefined)
      throw new UsageError('--database does not apply: store copy reads the SQLite database in --data-dir and writes the PostgreSQL database --to names')
    const url = targetUrl(str(args, 'to'))
    const config = commandConfig({ 'data-dir': str(args, 'data-dir'), 'secrets-dir': str(args, 'secrets-dir') })
    const target = describeTarget(url)
    const password = new URL(url).password
    let decoded = password
    try {
      decoded = decodeURIComponent(password)
    } catch {
      // A malformed escape: the password as written is all there is to hide.
    }
    const redact = (text: string) => (password ? text.replaceAll(password, '***').replaceAll(decoded, '***') : text).replaceAll(url, target)
    const fail = (message: string) => {
      process.stderr.write(`error: ${redact(message)}\n`)
      return 1
    }

    const file = join(config.dataDir, 'bulwark.db')
    if (!existsSync(file)) return fail(`no database at ${file}`)
    // The copy keeps the data dir's secrets fingerprint: the nodes need the keys this data was sealed with.
    const source = openConnection(file, { readonly: true })
    let recorded: string | undefined
    try {
      recorded = source.prepare(recordedFingerprint.sqlite).pluck().get() as string | undefined
    } catch {
      recorded = undefined // a database from before sql/017: nothing recorded yet
    } finally {
      source.close()
    }
    if (recorded !== undefined) {
      if (!existsSync(join(config.secretsDir, 'secrets.key')))
        return fail(
          `no secrets in ${config.secretsDir}: give --secrets-dir the dir that holds the keys this data dir was opened with (fingerprint ${recorded})`,
        )
      const given = secretsFingerprint(config.secretsDir)
      if (given !== recorded)
        return fail(
          `the secrets in ${config.secretsDir} (fingerprint ${given}) are not the ones this data dir was opened with (fingerprint ${recorded}): give --secrets-dir the dir that holds those`,
        )
    }

    console.log(`copying ${file} into ${target}`)
    let mismatch: string[] = []
    let heads = new Map<string, string>()
    try {
      const tables = await copyToPostgres({
        dataDir: config.dataDir,
        url,
        progress: ({ table, rows }) => console.log(`  ${table}: ${rows} ${rows === 1 ? 'row' : 'rows'}`),
        async check(sqlite, postgres) {
          heads = await chainHeads(sqlite)
          const copied = await chainHeads(postgres)
          const names = new Set([...heads.keys(), ...copied.keys()])
          mismatch = [...names]
            .filter((n) => heads.get(n) !== copied.get(n))
            .map((n) => `${n}: ${heads.get(n) ?? 'absent'} in SQLite, ${copied.get(n) ?? 'absent'} on PostgreSQL`)
          if (mismatch.length) throw new CopyRefused(`${mismatch.length} chain(s) recompute to another head on PostgreSQL: the copy was rolled back`)
        },
      })
      console.log('every chain recomputes on PostgreSQL to its head in SQLite:')
      for (const [name, head] of heads) console.log(`  ${name}: ${head}`)
      const broken = [...heads].filter(([, head]) => head.startsWith('BROKEN'))
      if (broken.length)
        process.stderr.write(
          `warning: ${broken.length} chain(s) were broken in the data dir already, and are copied as they are (bulwark incidents verify / signals verify)\n`,
        )
      const total = tables.reduce((sum, t) => sum + t.rows, 0)
      console.log(`copied ${total} rows of ${tables.length} tables into ${target} in one transaction`)
      console.log(`start the nodes with --database <that URL> --secrets-dir ${config.secretsDir} (the keys the data was sealed with)`)
      return 0
    } catch (error) {
      for (const line of mismatch) process.stderr.write(`  ${redact(line)}\n`)
      if (error instanceof CopyRefused) return fail(`${error.message}; nothing was written`)
      return fail(`the copy failed and was rolled back, nothing was written: ${error instanceof Error ? error.message : String(error)}`)
    }
  },
}
