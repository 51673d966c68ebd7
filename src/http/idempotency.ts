// Idempotency-Key on POST: the same key and body within 24 h replays the first answer that changed
// something (a 200, or a refusal that recorded an incident); the same key with another body is 409.
// Table idempotency_keys (owner, key, request_hash, status, body, created_at ms). Secrets shown once
// (API keys, signing secrets) are blanked before storing.
import { createHash } from 'node:crypto'
import { statement } from '../store/db.ts'
import { HttpError, validationError } from './errors.ts'

const DAY_MS = 24 * 3600 * 1000

interface Stored { request_hash: string; status: number; body: string; created_at: number }

const findStored = statement<[string, string, number], Stored>(
  'SELECT request_hash, status, body, created_at FROM idempotency_keys WHERE owner = ? AND key = ? AND created_at > ?')
const store = statement(`INSERT INTO idempotency_keys (owner, key, request_hash, status, body, created_at)
  VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (owner, key) DO UPDATE SET request_hash = excluded.request_hash,
  status = excluded.status, body = excluded.body, created_at = excluded.created_at`)
const purge = statement('DELETE FROM idempotency_keys WHERE created_at <= ?')

export function checkKey(key: string): void {
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) throw validationError('Idempotency-Key', 'must be 1 to 255 visible ASCII characters')
}

export function requestHash(method: string, path: string, body: string | undefined): string {
  return createHash('sha256').update(`${method} ${path}\n${body ?? ''}`).digest('hex')
}

/** The stored answer to replay, or undefined when this key is new (or older than 24 h). */
export function replay(owner: string, key: string, hash: string, nowMs: number): { status: number; body: string } | undefined {
  const row = findStored().get(owner, key, nowMs - DAY_MS)
  if (!row) return undefined
  if (row.request_hash !== hash) {
    throw new HttpError('idempotency_conflict', 'Idempotency-Key was already used with a different request; use a new key')
  }
  return { status: row.status, body: row.body }
}

/** Runs inside the change's own transaction, so a replay record exists exactly when the change does. */
export function remember(owner: string, key: string, hash: string, status: number, body: unknown, redact: string[] | undefined, nowMs: number): void {
  let stored = body
  if (redact && body && typeof body === 'object') {
    stored = { ...(body as Record<string, unknown>) }
    for (const field of redact) (stored as Record<string, unknown>)[field] = null
  }
  store().run(owner, key, hash, status, JSON.stringify(stored), nowMs)
}

export function purgeExpired(nowMs: number): number {
  return purge().run(nowMs - DAY_MS).changes
}
