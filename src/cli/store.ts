// `bulwark store adopt-secrets`: after a database was restored where its secrets were lost (a new
// machine and a replica, without the old secrets dir), every start refuses it (SPEC 15: a node
// with other secrets exits 1). This records the given secrets' fingerprint instead, knowingly: what
// the old sealing key sealed (venue credentials, replayable answers) no longer opens, and every
// session is signed out; it says so, and what to do next.
import { openStore } from '../store/open-store.ts'
import { adoptSecrets } from '../store/secrets-fingerprint.ts'
import { parseArgs, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, STORE_FLAGS } from '../config.ts'

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
    const store = await openStore({ dataDir: config.dataDir })
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
