// Signing secrets and the two signatures every delivery carries:
// - X-Service-Signature: "sha256=" + lowercase hex HMAC-SHA256 of the raw body, keyed with the
//   secret string's UTF-8 bytes ("whsec_..." as a whole), so any GitHub-style verifier works;
// - Standard Webhooks v1 (webhook-id, webhook-timestamp, webhook-signature): HMAC-SHA256 of
//   "id.timestamp.body", keyed with the base64-decoded bytes after "whsec_", base64 encoded.
import type { KeyObject } from 'node:crypto'
import { nodeCrypto } from '../shared/crypto.ts'

const SECRET_PREFIX = 'whsec_'

/** whsec_ + 32 random bytes in standard base64 (the Standard Webhooks secret format). */
export function newSigningSecret(): string {
  return SECRET_PREFIX + nodeCrypto().randomBytes(32).toString('base64')
}

// HMAC keys made once per secret: createHmac with a KeyObject is several times cheaper than with
// a fresh Buffer, which matters at a thousand deliveries a second.
const keys = new Map<string, KeyObject>()
function keyOf(kind: 'service' | 'standard', secret: string): KeyObject {
  const name = kind + secret
  let key = keys.get(name)
  if (!key) {
    if (keys.size > 10_000) keys.clear()
    key = nodeCrypto().createSecretKey(kind === 'service' ? Buffer.from(secret, 'utf8') : Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64'))
    keys.set(name, key)
  }
  return key
}

function serviceSignature(secret: string, body: string): string {
  return `sha256=${nodeCrypto().createHmac('sha256', keyOf('service', secret)).update(body, 'utf8').digest('hex')}`
}

function standardSignature(secret: string, messageId: string, timestamp: number, body: string): string {
  const key = keyOf('standard', secret)
  return `v1,${nodeCrypto().createHmac('sha256', key).update(`${messageId}.${timestamp}.`, 'utf8').update(body, 'utf8').digest('base64')}`
}

export interface SignedHeaders {
  'X-Service-Signature': string
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
}

/**
 * Headers for one attempt. `previousSecret` (within 24 h of a rotation) adds a second
 * webhook-signature entry, so receivers can switch secrets without losing a delivery.
 */
export function signDelivery(input: { secret: string; previousSecret?: string | null; messageId: string; sentAt: Date; body: string }): SignedHeaders {
  const timestamp = Math.floor(input.sentAt.getTime() / 1000)
  const signatures = [standardSignature(input.secret, input.messageId, timestamp, input.body)]
  if (input.previousSecret) signatures.push(standardSignature(input.previousSecret, input.messageId, timestamp, input.body))
  return {
    'X-Service-Signature': serviceSignature(input.secret, input.body),
    'webhook-id': input.messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures.join(' '),
  }
}
