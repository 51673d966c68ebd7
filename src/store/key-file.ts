// Secret key files in the data dir (the session signing key, the sealing key): 32 random bytes,
// base64, mode 0600, made at first start. Kept beside the database, never in it, so a copy of
// bulwark.db (a backup, a replica) holds no key.
import { nodeCrypto } from '../shared/crypto.ts'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The 32-byte key in DATA_DIR/`name`, made if missing.
 *
 * @example
 * const key = readOrCreateKeyFile('/var/lib/bulwark', 'secrets.key') // Buffer of 32 bytes
 */
export function readOrCreateKeyFile(dataDir: string, name: string): Buffer {
  const file = join(dataDir, name)
  if (!existsSync(file)) {
    // 'wx' fails if another process created it meanwhile; then read theirs.
    try {
      writeFileSync(file, nodeCrypto().randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' })
    } catch {
      /* raced */
    }
  }
  chmodSync(file, 0o600)
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte key`)
  return key
}
