// API keys: sk_live_ + 32 base62 + a 6-character base62 CRC32 of what precedes it.
// Table api_keys (sql/001_init.sql): id, tenant_id, created_by, name, prefix, key_hash (SHA-256 hex,
// the only trace of the key), scopes (JSON), created_at, expires_at, revoked_at, last_used_at.
import { nodeCrypto } from '../shared/crypto.ts'
import { newId } from '../store/ids.ts'
import { query, type Queries, type Store, type Tx } from '../store/store.ts'
import { DatabaseBusyError, isBusy } from '../store/sqlite/busy.ts'
import { log } from '../shared/log.ts'
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { SCOPES, type Scope } from './scopes.ts'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const KEY_PREFIX = 'sk_live_'
const KEY_SHAPE = /^sk_live_[0-9A-Za-z]{38}$/

/** What the API shows of a key when it is created, and in every record. */
export const apiKeyFields = {
  id: { type: 'string', pattern: '^tok_' },
  name: { type: 'string' },
  prefix: { type: 'string', minLength: 12, maxLength: 12 },
  scopes: { type: 'array', items: { type: 'string', enum: SCOPES } },
  created_at: { type: 'string', format: 'date-time' },
  expires_at: { type: 'string', format: 'date-time', nullable: true },
} as const satisfies Record<string, Schema>
export const apiKeySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'prefix', 'scopes', 'created_at', 'expires_at', 'revoked_at', 'last_used_at'],
  properties: {
    ...apiKeyFields,
    revoked_at: { type: 'string', format: 'date-time', nullable: true },
    last_used_at: { type: 'string', format: 'date-time', nullable: true },
  },
} as const satisfies Schema
/** A key's record as the API shows it (never the key, nor its hash). */
export type ApiKey = FromSchema<typeof apiKeySchema>
/** The record with whose it is, which the API does not show. */
export type ApiKeyRecord = ApiKey & { tenant_id: string; created_by: string | null }

interface Row extends Omit<ApiKeyRecord, 'scopes'> {
  scopes: string
  key_hash: string
}

const insertKey = query(`INSERT INTO api_keys (id, tenant_id, created_by, name, prefix, key_hash, scopes, created_at, expires_at)
  VALUES (@id, @tenant_id, @created_by, @name, @prefix, @key_hash, @scopes, @created_at, @expires_at)`)
const keyByHash = query<[string], Row>('SELECT * FROM api_keys WHERE key_hash = ?')
const keysOfTenant = query<[string, string, number], Row>('SELECT * FROM api_keys WHERE tenant_id = ? AND id < ? ORDER BY id DESC LIMIT ?')
const keyOfTenant = query<[string, string], Row>('SELECT * FROM api_keys WHERE id = ? AND tenant_id = ?')
const revokeKey = query('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND tenant_id = ? AND revoked_at IS NULL')
const touchKey = query('UPDATE api_keys SET last_used_at = ? WHERE id = ?')

function base62(n: number, width: number): string {
  let out = ''
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out
    n = Math.floor(n / 62)
  }
  return out
}

function checksum(body: string): string {
  // node:zlib is loaded at the first key checked, not at every start.
  return base62(process.getBuiltinModule('node:zlib').crc32(body), 6)
}

function hashKey(key: string): string {
  return nodeCrypto().createHash('sha256').update(key).digest('hex')
}

export function generateKey(): string {
  let random = ''
  for (let i = 0; i < 32; i++) random += BASE62[nodeCrypto().randomInt(62)]
  const body = KEY_PREFIX + random
  return body + checksum(body)
}

/** Shape and checksum: typos and scanners' false positives are refused without a database read. */
export function looksLikeKey(key: string): boolean {
  return KEY_SHAPE.test(key) && checksum(key.slice(0, -6)) === key.slice(-6)
}

function toRecord(row: Row): ApiKeyRecord {
  const { key_hash: _hash, scopes, ...rest } = row
  return { ...rest, scopes: JSON.parse(scopes) as Scope[] }
}

export async function createApiKey(
  tx: Tx,
  input: { tenantId: string; createdBy: string | null; name: string; scopes: Scope[]; expiresAt: string | null },
): Promise<{ record: ApiKeyRecord; token: string }> {
  const token = generateKey()
  const row = {
    id: newId('tok'),
    tenant_id: input.tenantId,
    created_by: input.createdBy,
    name: input.name,
    prefix: token.slice(0, 12),
    key_hash: hashKey(token),
    scopes: JSON.stringify(input.scopes),
    created_at: new Date().toISOString(),
    expires_at: input.expiresAt,
  }
  await tx.savepoint(() => tx.run(insertKey, row))
  return { record: toRecord({ ...row, revoked_at: null, last_used_at: null }), token }
}

// Records found by key hash, reused only while the database is unchanged: any commit (a revocation
// through the API, or anything another process writes) changes store.version() and empties this,
// so a revoked key is refused on the very next request. An engine that cannot tell (version()
// undefined) reads the key every time. Expiry is checked on every request.
const known = new Map<string, ApiKeyRecord>()
let knownVersion: string | undefined

async function recordByHash(store: Store, presented: string): Promise<ApiKeyRecord | undefined> {
  const version = store.version()
  if (version === undefined || version !== knownVersion || known.size >= 10_000) {
    known.clear()
    knownVersion = version
  }
  const cached = known.get(presented)
  if (cached) return cached
  // Found by the SHA-256 of the presented key through a unique index: the lookup compares hashes,
  // never the secret, and a caller cannot steer a hash prefix to learn anything from its timing.
  // Comparing the found row's hash with the one it was found by would only compare it with itself.
  const row = await store.read.get(keyByHash, [presented])
  if (!row) return undefined
  const record = toRecord(row)
  Object.freeze(record.scopes)
  // Kept only if nothing committed while it was read (then it is what that version holds).
  if (version !== undefined && version === knownVersion && store.version() === version) known.set(presented, Object.freeze(record)) // shared by later requests: nobody may change it
  return record
}

/** The live record behind a presented key, or undefined for unknown, revoked or expired keys (read through store.read, cached by store.version()). */
export async function findLiveKey(store: Store, token: string, now: Date): Promise<ApiKeyRecord | undefined> {
  if (!looksLikeKey(token)) return undefined
  const record = await recordByHash(store, hashKey(token))
  if (!record || record.revoked_at) return undefined
  if (record.expires_at && Date.parse(record.expires_at) <= now.getTime()) return undefined
  return record
}

const lastTouched = new Map<string, number>()
/**
 * last_used_at at minute resolution: one write a minute per key, not one per request. The guard
 * calls it before any handler's transaction, and it opens its own (store.write): a use record is not
 * part of the request's change. The guard does not await it, and a busy lock skips it, rather than
 * delay the request; never rejects.
 */
export async function touchApiKey(store: Store, id: string, now: Date): Promise<void> {
  const previous = lastTouched.get(id) ?? 0
  if (now.getTime() - previous < 60_000) return
  lastTouched.set(id, now.getTime()) // at once: the requests of this minute queue no second write
  try {
    await store.write((tx) => tx.run(touchKey, [now.toISOString(), id]))
  } catch (error) {
    // Best effort: another process holds the write lock; a later request records the use.
    if (lastTouched.get(id) === now.getTime()) lastTouched.set(id, previous)
    if (!(error instanceof DatabaseBusyError) && !isBusy(error)) log({ level: 'warn', msg: 'recording an API key use failed', error: (error as Error).message })
  }
}

export async function listApiKeys(db: Queries, tenantId: string, beforeId: string, limit: number): Promise<ApiKeyRecord[]> {
  return (await db.all(keysOfTenant, [tenantId, beforeId, limit])).map(toRecord)
}

async function findApiKey(db: Queries, tenantId: string, id: string): Promise<ApiKeyRecord | undefined> {
  const row = await db.get(keyOfTenant, [id, tenantId])
  return row && toRecord(row)
}

/** Revokes; returns the record (revoking twice is harmless) or undefined if no such key here. */
export async function revokeApiKey(tx: Tx, tenantId: string, id: string, now: Date): Promise<ApiKeyRecord | undefined> {
  return tx.savepoint(async () => {
    await tx.run(revokeKey, [now.toISOString(), id, tenantId])
    return findApiKey(tx, tenantId, id)
  })
}
