// Secrets this process must read again later (a one-time secret kept for an idempotent replay;
// later, venue API secrets) are sealed with AES-256-GCM under a key of 32 random bytes made at
// first start in DATA_DIR/secrets.key (mode 0600). A copy of the database alone (a backup, a
// replica) then holds no usable secret. GCM's tag makes any change to a sealed value an error.
import { nodeCrypto } from '../shared/crypto.ts'
import { readOrCreateKeyFile } from './key-file.ts'

const VERSION = 'v1'

export interface SecretBox {
  /** Encrypts text; `context` (a table and row, say) is bound to it, so a sealed value copied to another row does not open there. */
  seal(text: string, context: string): string
  /** Decrypts what seal() made with the same context; throws if it was changed or moved. */
  open(sealed: string, context: string): string
}

/**
 * The data dir's box, its key made at first start.
 *
 * @example
 * const box = openSecretBox('/var/lib/bulwark')
 * box.open(box.seal('{"token":"sk_live_..."}', 'idempotency:ten_1:key-1'), 'idempotency:ten_1:key-1') // '{"token":"sk_live_..."}'
 */
export function openSecretBox(dataDir: string): SecretBox {
  const key = readOrCreateKeyFile(dataDir, 'secrets.key')
  return {
    seal(text, context) {
      const iv = nodeCrypto().randomBytes(12)
      const cipher = nodeCrypto().createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(Buffer.from(context))
      const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()])
      return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.')
    },
    open(sealed, context) {
      const [version, iv, tag, body] = sealed.split('.')
      if (version !== VERSION || body === undefined) throw new Error('not a sealed value')
      const decipher = nodeCrypto().createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'))
      decipher.setAAD(Buffer.from(context))
      decipher.setAuthTag(Buffer.from(tag, 'base64'))
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8')
    },
  }
}

/** True when the value was made by seal() (stored bodies that are plain JSON never start so). */
export function isSealed(value: string): boolean {
  return value.startsWith(`${VERSION}.`)
}
