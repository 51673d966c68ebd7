// Gateway keys (SPEC 14): the Binance-style API key and secret a bot signs its requests with. Table
// gateway_keys (sql/018_gateway.sql): id, tenant_id, name, api_key_prefix (the first 8 characters,
// for lists), api_key_hash (SHA-256 hex of the key, unique: the only trace of the key), secret_sealed
// (sealed with the data dir's secrets.key, bound to the tenant and the key's id: the gateway reads it
// back to check each request's HMAC), created_at, revoked_at (null while live). A gateway key is no
// API key of section 3 (src/auth/api-keys.ts) and an API key is no gateway key: other table, other
// shape, other door.
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { nodeCrypto } from '../shared/crypto.ts'
import { DomainError } from '../shared/errors.ts'
import { newId } from '../store/ids.ts'
import type { SecretBox } from '../store/secret-box.ts'
import { type Queries, query, type Tx } from '../store/store.ts'
import { findVenueAccount } from '../venues/accounts.ts'

/** A live (not revoked) gateway key, its secret opened: for checking signatures only, never for an answer or a log. */
export interface GatewayKey {
  id: string
  tenantId: string
  name: string
  secret: string
}

/** The exchange whose API the gateway speaks: a tenant needs its venue on it (SPEC 14). */
export const GATEWAY_EXCHANGE = 'binance'

const ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
/** Binance's keys and secrets are 64 alphanumeric characters; so are the gateway's (about 381 bits each). */
const LENGTH = 64
const KEY_SHAPE = /^[0-9A-Za-z]{64}$/
const PREFIX_LENGTH = 8

export const gatewayKeyName = {
  type: 'string',
  minLength: 1,
  maxLength: 100,
  description: 'a label for people: which bot uses the key',
} as const satisfies Schema

/** What lists and a revocation show of a key: never the key, its hash or the secret. */
export const gatewayKeySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'api_key_prefix', 'created_at', 'revoked_at'],
  properties: {
    id: { type: 'string', pattern: '^gwk_' },
    name: { type: 'string' },
    api_key_prefix: { type: 'string', minLength: PREFIX_LENGTH, maxLength: PREFIX_LENGTH, description: "the api_key's first 8 characters" },
    created_at: { type: 'string', format: 'date-time' },
    revoked_at: { type: 'string', format: 'date-time', nullable: true, description: 'null while the key is live' },
  },
} as const satisfies Schema

/** What a creation answers, once: the key and the secret a bot signs with. */
export const createdGatewayKeySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'api_key', 'api_secret', 'created_at'],
  properties: {
    id: { type: 'string', pattern: '^gwk_' },
    name: { type: 'string' },
    api_key: { type: 'string', pattern: '^[0-9A-Za-z]{64}$', description: "the bot's X-MBX-APIKEY" },
    api_secret: {
      type: 'string',
      pattern: '^[0-9A-Za-z]{64}$',
      description: "the HMAC-SHA256 key of the bot's signatures; shown here and in an idempotent replay within 24 h, never again",
    },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const satisfies Schema

/** A key as lists show it. */
export type GatewayKeyRecord = FromSchema<typeof gatewayKeySchema>
/** A new key with its key and secret, as the creation answers it once. */
export type CreatedGatewayKey = FromSchema<typeof createdGatewayKeySchema>

interface Row {
  id: string
  tenant_id: string
  name: string
  api_key_prefix: string
  api_key_hash: string
  secret_sealed: string
  created_at: string
  revoked_at: string | null
}

const insertKey = query(`INSERT INTO gateway_keys (id, tenant_id, name, api_key_prefix, api_key_hash, secret_sealed, created_at)
  VALUES (@id, @tenant_id, @name, @api_key_prefix, @api_key_hash, @secret_sealed, @created_at)`)
const liveByHash = query<[string], Row>('SELECT * FROM gateway_keys WHERE api_key_hash = ? AND revoked_at IS NULL')
const keysOfTenant = query<[string, string, number], Row>('SELECT * FROM gateway_keys WHERE tenant_id = ? AND id < ? ORDER BY id DESC LIMIT ?')
const keyOfTenant = query<[string, string], Row>('SELECT * FROM gateway_keys WHERE id = ? AND tenant_id = ?')
const revokeKey = query('UPDATE gateway_keys SET revoked_at = ? WHERE id = ? AND tenant_id = ? AND revoked_at IS NULL')

function randomText(): string {
  let out = ''
  for (let i = 0; i < LENGTH; i++) out += ALPHANUMERIC[nodeCrypto().randomInt(ALPHANUMERIC.length)]
  return out
}

function hashKey(apiKey: string): string {
  return nodeCrypto().hash('sha256', apiKey, 'hex')
}

/** Where a sealed secret belongs: moved to another tenant's or another key's row, it does not open. */
const context = (tenantId: string, id: string) => `gateway_keys:${tenantId}:${id}:api_secret`

function shown(row: Row): GatewayKeyRecord {
  return { id: row.id, name: row.name, api_key_prefix: row.api_key_prefix, created_at: row.created_at, revoked_at: row.revoked_at }
}

/**
 * The live key whose api_key this is, or undefined when unknown or revoked. Found by the key's
 * SHA-256 through a unique index, so the key itself is never compared; its secret opened.
 */
export async function findGatewayKey(db: Queries, apiKey: string, box: SecretBox): Promise<GatewayKey | undefined> {
  if (!KEY_SHAPE.test(apiKey)) return undefined
  const row = await db.get(liveByHash, [hashKey(apiKey)])
  if (!row) return undefined
  return { id: row.id, tenantId: row.tenant_id, name: row.name, secret: openSecret(box, row) }
}

// Opened secrets by their sealed text: the row is still read on every request (a revocation counts
// at once), only the AES-GCM opening is saved. A sealed text opens to one secret, ever.
const opened = new Map<string, string>()

function openSecret(box: SecretBox, row: Row): string {
  const key = `${row.id}:${row.secret_sealed}`
  let secret = opened.get(key)
  if (secret === undefined) {
    secret = box.open(row.secret_sealed, context(row.tenant_id, row.id))
    if (opened.size >= 10_000) opened.clear()
    opened.set(key, secret)
  }
  return secret
}

/**
 * Throws 409 venue_not_connected unless the tenant has a Binance venue connected: the gateway speaks
 * Binance's API and relays every order to the tenant's venue.
 */
export async function mustHaveGatewayVenue(db: Queries, tenantId: string): Promise<void> {
  const venue = await findVenueAccount(db, tenantId)
  if (!venue) {
    throw new DomainError('venue_not_connected', `the gateway needs a connected ${GATEWAY_EXCHANGE} venue: connect one with PUT /api/v1/venue first`)
  }
  if (venue.exchange !== GATEWAY_EXCHANGE) {
    throw new DomainError(
      'venue_not_connected',
      `the gateway speaks ${GATEWAY_EXCHANGE}'s API and needs a ${GATEWAY_EXCHANGE} venue; this tenant's venue is ${venue.exchange}`,
    )
  }
}

/**
 * A new key for the tenant, in the transaction `tx`: refused (409 venue_not_connected) without a
 * Binance venue. The answer is the only place the key and the secret are ever shown.
 *
 * @example
 * const made = await store.write((tx) => createGatewayKey(tx, tenant.id, 'freqtrade', box, new Date()))
 * made.api_key // 64 alphanumeric characters, the bot's X-MBX-APIKEY
 */
export async function createGatewayKey(tx: Tx, tenantId: string, name: string, box: SecretBox, now: Date): Promise<CreatedGatewayKey> {
  await mustHaveGatewayVenue(tx, tenantId)
  const id = newId('gwk')
  const apiKey = randomText()
  const apiSecret = randomText()
  const createdAt = now.toISOString()
  await tx.run(insertKey, {
    id,
    tenant_id: tenantId,
    name,
    api_key_prefix: apiKey.slice(0, PREFIX_LENGTH),
    api_key_hash: hashKey(apiKey),
    secret_sealed: box.seal(apiSecret, context(tenantId, id)),
    created_at: createdAt,
  })
  return { id, name, api_key: apiKey, api_secret: apiSecret, created_at: createdAt }
}

/** The tenant's keys, revoked ones too, newest first: up to `limit` with id < beforeId. */
export async function listGatewayKeys(db: Queries, tenantId: string, beforeId = '~', limit = 1000): Promise<GatewayKeyRecord[]> {
  return (await db.all(keysOfTenant, [tenantId, beforeId, limit])).map(shown)
}

/** One of the tenant's keys, or undefined (another tenant's key is no key here). */
export async function findGatewayKeyRecord(db: Queries, tenantId: string, id: string): Promise<GatewayKeyRecord | undefined> {
  const row = await db.get(keyOfTenant, [id, tenantId])
  return row && shown(row)
}

/**
 * Revokes at once, in the transaction `tx`: the next request signed with it is refused. Returns the
 * record (revoking twice is harmless: it keeps its first revoked_at) or undefined if the tenant has
 * no such key.
 */
export async function revokeGatewayKey(tx: Tx, tenantId: string, id: string, now: Date): Promise<GatewayKeyRecord | undefined> {
  await tx.run(revokeKey, [now.toISOString(), id, tenantId])
  return findGatewayKeyRecord(tx, tenantId, id)
}
