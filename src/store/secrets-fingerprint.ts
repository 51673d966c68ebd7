// Every node on one database must hold the same secrets: the sealing key (venue credentials, replayed
// one-time secrets) and the session signing key. They live in the secrets dir (--secrets-dir, by
// default the data dir), never in the database. The first command that opens a database records the
// fingerprint of the secrets it was given (table store_meta, sql/017); a node given other secrets
// stops before it serves anything, since it could neither open what the others sealed nor accept
// their sessions (SPEC 15). The fingerprint is kept beside the keys too (secrets.fingerprint), so a
// start compares two short texts and loads no hashing: start-up is measured in milliseconds.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { nodeCrypto } from '../shared/crypto.ts'
import { query, type Store, type Tx } from './store.ts'
import { readOrCreateKeyFile } from './key-file.ts'

const KEYS = ['secrets.key', 'jwt-signing.key']
const FILE = 'secrets.fingerprint'

const recorded = query<[], { value: string }>("SELECT value FROM store_meta WHERE key = 'secrets_fingerprint'")
const record = query<[string]>("INSERT INTO store_meta (key, value) VALUES ('secrets_fingerprint', ?) ON CONFLICT DO NOTHING")
const replace = query<[string]>("INSERT INTO store_meta (key, value) VALUES ('secrets_fingerprint', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")

/** The secrets held in `secretsDir` don't match the ones the database was first opened with. */
export class SecretsMismatchError extends Error {}

/**
 * The fingerprint of the keys in `secretsDir` (made there if missing): 16 hex digits of a SHA-256
 * over both keys, which tell key sets apart and reveal nothing of them.
 *
 * @example
 * secretsFingerprint('/etc/bulwark/secrets') // '3f9a1c0e5b7d2a46'
 */
export function secretsFingerprint(secretsDir: string): string {
  mkdirSync(secretsDir, { recursive: true, mode: 0o700 })
  const file = join(secretsDir, FILE)
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  const hash = nodeCrypto().createHash('sha256').update('bulwark secrets v1\0')
  for (const name of KEYS) hash.update(readOrCreateKeyFile(secretsDir, name))
  const fingerprint = hash.digest('hex').slice(0, 16)
  writeFileSync(file, `${fingerprint}\n`, { mode: 0o600 })
  return fingerprint
}

/**
 * Records the fingerprint of `secretsDir`'s keys in the open database the first time, and throws
 * SecretsMismatchError (one line, naming both) when the database holds another. Call right after
 * the database is opened, before anything is served.
 */
export async function checkSecrets(store: Store, secretsDir: string): Promise<void> {
  const given = secretsFingerprint(secretsDir)
  const expected = await store.write(async (tx) => {
    await tx.run(record, [given])
    return (await tx.get(recorded))!.value
  })
  if (given !== expected) {
    throw new SecretsMismatchError(
      `the secrets in ${resolve(secretsDir)} (fingerprint ${given}) are not the ones this database was first opened with (fingerprint ${expected}): give every node the same --secrets-dir (if those are lost: bulwark store adopt-secrets)`,
    )
  }
}

/**
 * Records `secretsDir`'s fingerprint as the database's, replacing the one it had (bulwark store
 * adopt-secrets, after the old secrets were lost). Returns both.
 */
export async function adoptSecrets(tx: Tx, secretsDir: string): Promise<{ before: string | undefined; after: string }> {
  const before = (await tx.get(recorded))?.value
  const after = secretsFingerprint(secretsDir)
  await tx.run(replace, [after])
  return { before, after }
}
