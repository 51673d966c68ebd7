// A tenant's venue account (SPEC 10). Table venue_accounts (sql/010_venue_accounts.sql): tenant_id,
// exchange, api_key_hint, api_key_sealed, secret_sealed, password_sealed, status, can_trade,
// can_withdraw, checked_at, connected_at, connected_by. The key, the secret and the passphrase are
// sealed with the data dir's secrets.key, each bound to its tenant and field, so neither a copy of
// the database nor a value moved to another row opens; only the executor reads them back.
import type { FromSchema } from 'json-schema-to-ts'
import { type Schema, validate } from '../http/schema.ts'
import { type Queries, query, type Tx } from '../store/store.ts'
import type { SecretBox } from '../store/secret-box.ts'
import type { KeyVerdict } from './verify.ts'

export type VenueAccount = FromSchema<typeof venueAccountSchema>
export type VenueConnect = FromSchema<typeof venueConnectSchema>

interface Row {
  tenant_id: string
  exchange: string
  api_key_hint: string
  api_key_sealed: string
  secret_sealed: string
  password_sealed: string | null
  status: 'CONNECTED' | 'FAILING'
  can_trade: number
  can_withdraw: number | null
  checked_at: string
  connected_at: string
  connected_by: string
}

const rowOf = query<[string], Row>('SELECT * FROM venue_accounts WHERE tenant_id = ?')
const upsert = query(`INSERT INTO venue_accounts (tenant_id, exchange, api_key_hint, api_key_sealed, secret_sealed, password_sealed,
    status, can_trade, can_withdraw, checked_at, connected_at, connected_by)
  VALUES (@tenant_id, @exchange, @api_key_hint, @api_key_sealed, @secret_sealed, @password_sealed, 'CONNECTED', @can_trade, @can_withdraw,
    @now, @now, @actor)
  ON CONFLICT (tenant_id) DO UPDATE SET exchange = excluded.exchange, api_key_hint = excluded.api_key_hint,
    api_key_sealed = excluded.api_key_sealed, secret_sealed = excluded.secret_sealed, password_sealed = excluded.password_sealed,
    status = 'CONNECTED', can_trade = excluded.can_trade, can_withdraw = excluded.can_withdraw, checked_at = excluded.checked_at,
    connected_at = excluded.connected_at, connected_by = excluded.connected_by`)
const remove = query<[string]>('DELETE FROM venue_accounts WHERE tenant_id = ?')

function shown(row: Row): VenueAccount {
  return {
    exchange: row.exchange,
    api_key_hint: row.api_key_hint,
    status: row.status,
    checked_at: row.checked_at,
    can_trade: row.can_trade === 1,
    can_withdraw: row.can_withdraw === null ? null : row.can_withdraw === 1,
    connected_at: row.connected_at,
    connected_by: row.connected_by,
  }
}

/** Where a sealed field belongs: moved to another tenant or field, it does not open. */
const context = (tenantId: string, field: string) => `venue_accounts:${tenantId}:${field}`

export async function findVenueAccount(db: Queries, tenantId: string): Promise<VenueAccount | undefined> {
  const row = await db.get(rowOf, [tenantId])
  return row && shown(row)
}

/** What GET answers for a tenant with no venue: DISCONNECTED, every field null. */
export const NO_VENUE: VenueAccount = {
  exchange: null,
  api_key_hint: null,
  status: 'DISCONNECTED',
  checked_at: null,
  can_trade: null,
  can_withdraw: null,
  connected_at: null,
  connected_by: null,
}

/** Stores a key the venue accepted (verifyVenueKey), replacing any earlier one, in the transaction `tx`. */
export async function saveVenueAccount(
  tx: Tx,
  tenantId: string,
  input: VenueConnect,
  verdict: KeyVerdict,
  box: SecretBox,
  actor: string,
  now: Date,
): Promise<VenueAccount> {
  await tx.run(upsert, {
    tenant_id: tenantId,
    exchange: input.exchange,
    api_key_hint: `...${input.api_key.slice(-4)}`,
    api_key_sealed: box.seal(input.api_key, context(tenantId, 'api_key')),
    secret_sealed: box.seal(input.api_secret, context(tenantId, 'api_secret')),
    password_sealed: input.password === undefined ? null : box.seal(input.password, context(tenantId, 'password')),
    can_trade: verdict.canTrade ? 1 : 0,
    can_withdraw: verdict.canWithdraw === null ? null : verdict.canWithdraw ? 1 : 0,
    now: now.toISOString(),
    actor,
  })
  return (await findVenueAccount(tx, tenantId))!
}

/** Removes the account, in the transaction `tx`; returns what it was, or undefined if there was none. */
export async function deleteVenueAccount(tx: Tx, tenantId: string): Promise<VenueAccount | undefined> {
  const before = await findVenueAccount(tx, tenantId)
  await tx.run(remove, [tenantId])
  return before
}

const connected = query<[], { tenantId: string; exchange: string; connectedAt: string }>(
  'SELECT tenant_id AS "tenantId", exchange, connected_at AS "connectedAt" FROM venue_accounts ORDER BY tenant_id',
)

/** Every tenant with a venue account, and when it was connected (a new connection means new credentials). */
export function connectedVenues(db: Queries): Promise<{ tenantId: string; exchange: string; connectedAt: string }[]> {
  return db.all(connected)
}

/** The credentials, opened: for the executor and the reconciliation only, never for an answer or a log. */
export async function venueCredentials(
  db: Queries,
  tenantId: string,
  box: SecretBox,
): Promise<{ exchange: string; apiKey: string; secret: string; password?: string } | undefined> {
  const row = await db.get(rowOf, [tenantId])
  if (!row) return undefined
  return {
    exchange: row.exchange,
    apiKey: box.open(row.api_key_sealed, context(tenantId, 'api_key')),
    secret: box.open(row.secret_sealed, context(tenantId, 'api_secret')),
    password: row.password_sealed === null ? undefined : box.open(row.password_sealed, context(tenantId, 'password')),
  }
}

// What an HTTP header may carry, and exchanges accept in a key: no control character (a line break
// would split the header), nothing beyond ASCII. Checked before the venue is called: a key ccxt
// cannot put in a header is bad input (400), not a venue that cannot be reached.
/** Visible ASCII, no space: an API key or secret. */
const HEADER_TOKEN = '^[\\x21-\\x7e]+$'
/** Visible ASCII with spaces inside: a passphrase. */
const HEADER_TEXT = '^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$'

/**
 * The input of a venue connection, validated as PUT /api/v1/venue validates it (the CLI's too);
 * throws validation_failed naming the field.
 *
 * @example
 * checkVenueConnect({ exchange: 'binance', api_key: 'k'.repeat(16), api_secret: 's\n'.repeat(8) }) // throws: api_secret must match ...
 */
export function checkVenueConnect(input: unknown): VenueConnect {
  return validate<VenueConnect>(input, venueConnectSchema)
}

export const venueConnectSchema = {
  type: 'object',
  required: ['exchange', 'api_key', 'api_secret'],
  additionalProperties: false,
  properties: {
    exchange: { type: 'string', pattern: '^[a-z][a-z0-9]{1,30}$', description: 'a ccxt exchange id, e.g. binance' },
    api_key: { type: 'string', minLength: 8, maxLength: 256, pattern: HEADER_TOKEN, description: 'visible ASCII: it travels in an HTTP header' },
    api_secret: {
      type: 'string',
      minLength: 8,
      maxLength: 512,
      pattern: HEADER_TOKEN,
      description: 'visible ASCII (it signs what travels in HTTP headers); stored encrypted, never answered or logged again',
    },
    password: {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      pattern: HEADER_TEXT,
      description: 'the passphrase some exchanges add to a key: visible ASCII and inner spaces, as it travels in an HTTP header',
    },
  },
} as const satisfies Schema

export const venueAccountSchema = {
  type: 'object',
  required: ['exchange', 'api_key_hint', 'status', 'checked_at', 'can_trade', 'can_withdraw', 'connected_at', 'connected_by'],
  additionalProperties: false,
  properties: {
    exchange: { type: 'string', nullable: true },
    api_key_hint: { type: 'string', nullable: true, description: "the key's last 4 characters" },
    status: { type: 'string', enum: ['CONNECTED', 'FAILING', 'DISCONNECTED'] },
    checked_at: { type: 'string', format: 'date-time', nullable: true, description: 'when the venue last accepted the key' },
    can_trade: { type: 'boolean', nullable: true },
    can_withdraw: { type: 'boolean', nullable: true, description: 'false where the venue tells (a key that can withdraw is refused); null where it does not' },
    connected_at: { type: 'string', format: 'date-time', nullable: true },
    connected_by: { type: 'string', nullable: true },
  },
} as const satisfies Schema
