// Idempotency-Key on POST: the same key and body within 24 h replays the first answer that changed
// something (a 200, or a refusal that recorded an incident); the same key with another body is 409.
// Table idempotency_keys (owner, key, request_hash, status, body, created_at ms). An answer holding a
// secret shown once (API keys, signing secrets) is stored sealed, never in the clear.
import { nodeCrypto } from '../shared/crypto.ts'
import { query, type Tx } from '../store/store.ts'
import { isSealed, type SecretBox } from '../store/secret-box.ts'
import { DomainError, validationError } from '../shared/errors.ts'

const DAY_MS = 24 * 3600 * 1000

interface Stored {
  request_hash: string
  status: number
  body: string
  created_at: number
}

const findStored = query<[string, string, number], Stored>(
  'SELECT request_hash, status, body, created_at FROM idempotency_keys WHERE owner = ? AND key = ? AND created_at > ?',
)
const storeAnswer = query(`INSERT INTO idempotency_keys (owner, key, request_hash, status, body, created_at)
  VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (owner, key) DO UPDATE SET request_hash = excluded.request_hash,
  status = excluded.status, body = excluded.body, created_at = excluded.created_at`)
// Oldest first through idempotency_keys_created (sql/007): each batch reads only what it deletes.
const purgeOldest = query<[number, number]>(`DELETE FROM idempotency_keys WHERE (owner, key) IN
  (SELECT owner, key FROM idempotency_keys WHERE created_at <= ? ORDER BY created_at LIMIT ?)`)

export function checkKey(key: string): void {
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) throw validationError('Idempotency-Key', 'must be 1 to 255 visible ASCII characters')
}

export function requestHash(method: string, path: string, body: string | undefined): string {
  return nodeCrypto()
    .createHash('sha256')
    .update(`${method} ${path}\n${body ?? ''}`)
    .digest('hex')
}

/** The stored answer to replay, or undefined when this key is new (or older than 24 h); read in the change's tx. */
export async function replay(
  tx: Tx,
  owner: string,
  key: string,
  hash: string,
  nowMs: number,
  secrets: SecretBox,
): Promise<{ status: number; body: string } | undefined> {
  const row = await tx.get(findStored, [owner, key, nowMs - DAY_MS])
  if (!row) return undefined
  if (row.request_hash !== hash) {
    throw new DomainError('idempotency_conflict', 'Idempotency-Key was already used with a different request; use a new key')
  }
  return { status: row.status, body: isSealed(row.body) ? openStored(secrets, row.body, owner, key) : row.body }
}

function openStored(secrets: SecretBox, body: string, owner: string, key: string): string {
  try {
    return secrets.open(body, sealContext(owner, key))
  } catch {
    throw new DomainError(
      'idempotency_conflict',
      "the first answer to this Idempotency-Key can no longer be opened (the data dir's secrets.key was replaced); use a new key",
    )
  }
}

/**
 * Runs inside the change's own transaction, so a replay record exists exactly when the change does.
 * An answer that shows a secret once (an API key, a signing secret) is kept sealed (AES-256-GCM,
 * src/store/secret-box.ts) for the 24 h window, so a client that lost the first answer learns it:
 * `sealWith` is the box for such an answer, undefined for any other.
 */
export async function remember(
  tx: Tx,
  owner: string,
  key: string,
  hash: string,
  status: number,
  body: unknown,
  sealWith: SecretBox | undefined,
  nowMs: number,
): Promise<void> {
  const text = JSON.stringify(body)
  await tx.run(storeAnswer, [owner, key, hash, status, sealWith ? sealWith.seal(text, sealContext(owner, key)) : text, nowMs])
}

function sealContext(owner: string, key: string): string {
  return `idempotency_keys:${owner}:${key}`
}

/** Retention: deletes up to `limit` keys past their 24 h; `more` when there may be others. */
export async function purgeExpired(tx: Tx, nowMs: number, limit: number): Promise<{ deleted: number; more: boolean }> {
  const deleted = (await tx.run(purgeOldest, [nowMs - DAY_MS, limit])).changes
  return { deleted, more: deleted === limit }
}
