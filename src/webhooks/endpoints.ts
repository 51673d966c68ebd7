// The registry of webhook endpoints. Table webhooks (id, tenant_id, url, description, events JSON,
// status ACTIVE|DISABLED, secret, previous_secret, previous_secret_until, failing_since,
// created_at, updated_at), sql/005_webhooks.sql. Every function that takes a tenant id is bound
// to it: another tenant's endpoint is simply not found.
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { query, type Queries, type Tx } from '../store/store.ts'
import { newId } from '../store/ids.ts'
import { EVENT_TYPES } from './events.ts'
import { newSigningSecret } from './signing.ts'

const EVENT_FILTERS = ['*', ...EVENT_TYPES] as const

/** How long the secret replaced by a rotation keeps signing (webhook-signature lists both). */
const PREVIOUS_SECRET_MS = 24 * 3600 * 1000
/** An endpoint failing without a single success for this long is DISABLED. */
const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000

interface Row {
  id: string
  tenant_id: string
  url: string
  description: string | null
  events: string
  status: WebhookStatus
  secret: string
  previous_secret: string | null
  previous_secret_until: string | null
  failing_since: string | null
  created_at: string
  updated_at: string
}

const webhookFields = {
  id: { type: 'string', pattern: '^wh_' },
  url: { type: 'string', format: 'uri' },
  status: { type: 'string', enum: ['ACTIVE', 'DISABLED'] },
  events: { type: 'array', items: { type: 'string', enum: EVENT_FILTERS } },
  description: { type: 'string', nullable: true },
  failing_since: {
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'first failed attempt since the last success; 5 days of it disables the endpoint',
  },
  created_at: { type: 'string', format: 'date-time' },
  updated_at: { type: 'string', format: 'date-time' },
} as const satisfies Record<string, Schema>
/** Every field of an endpoint, each always there. */
export const webhookRequired = Object.keys(webhookFields) as (keyof typeof webhookFields)[]
/** What the API shows of an endpoint: never a secret. */
export const webhookSchema = { type: 'object', additionalProperties: false, required: webhookRequired, properties: webhookFields } as const satisfies Schema
export type Webhook = FromSchema<typeof webhookSchema>
export type WebhookStatus = Webhook['status']

/** What a caller may set: POST takes url (required), events and description; PATCH any of them and status. */
export const webhookInputFields = {
  url: {
    type: 'string',
    minLength: 1,
    maxLength: 2048,
    description: 'https URL; no credentials; no private addresses unless allowed by the operator',
  },
  events: {
    type: 'array',
    minItems: 1,
    maxItems: EVENT_FILTERS.length,
    uniqueItems: true,
    items: { type: 'string', enum: EVENT_FILTERS },
    description: 'event types to receive; ["*"] (the default) is all',
  },
  description: { type: 'string', maxLength: 500, nullable: true },
} as const satisfies Record<string, Schema>
export const webhookChangeSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { ...webhookInputFields, status: webhookFields.status },
} as const satisfies Schema
export type WebhookChange = FromSchema<typeof webhookChangeSchema>

/** What the sender needs to sign and send one attempt. */
export interface SendingEndpoint {
  id: string
  url: string
  status: WebhookStatus
  secret: string
  previousSecret: string | null
}

const insertRow = query(`INSERT INTO webhooks (id, tenant_id, url, description, events, status, secret, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, 'ACTIVE', ?, ?, ?)`)
const rowOf = query<[string, string], Row>('SELECT * FROM webhooks WHERE tenant_id = ? AND id = ?')
const rowsOf = query<[string, string, number], Row>('SELECT * FROM webhooks WHERE tenant_id = ? AND id < ? ORDER BY id DESC LIMIT ?')
const updateRow = query(`UPDATE webhooks SET url = ?, description = ?, events = ?, status = ?, failing_since = ?, updated_at = ?
  WHERE tenant_id = ? AND id = ?`)
const deleteRow = query('DELETE FROM webhooks WHERE tenant_id = ? AND id = ?')
const rotateRow = query(`UPDATE webhooks SET previous_secret = secret, previous_secret_until = ?, secret = ?, updated_at = ?
  WHERE tenant_id = ? AND id = ?`)
const activeOf = query<[string], { id: string; events: string }>("SELECT id, events FROM webhooks WHERE tenant_id = ? AND status = 'ACTIVE'")
const sendingRow = query<[string], Row>('SELECT * FROM webhooks WHERE id = ?')
const clearFailing = query('UPDATE webhooks SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL')
const noteFailing = query<[string, string], { failing_since: string }>(
  'UPDATE webhooks SET failing_since = coalesce(failing_since, ?) WHERE id = ? RETURNING failing_since',
)
const disableRow = query("UPDATE webhooks SET status = 'DISABLED', updated_at = ? WHERE id = ? AND status = 'ACTIVE'")

function shown(row: Row): Webhook {
  return {
    id: row.id,
    url: row.url,
    status: row.status,
    events: JSON.parse(row.events) as Webhook['events'],
    description: row.description,
    failing_since: row.failing_since,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

export async function createWebhook(
  tx: Tx,
  tenantId: string,
  input: { url: string; events: Webhook['events']; description: string | null },
  now: Date,
): Promise<{ webhook: Webhook; secret: string }> {
  const id = newId('wh')
  const secret = newSigningSecret()
  const at = now.toISOString()
  await tx.run(insertRow, [id, tenantId, input.url, input.description, JSON.stringify(input.events), secret, at, at])
  return { webhook: shown((await tx.get(rowOf, [tenantId, id]))!), secret }
}

export async function findWebhook(db: Queries, tenantId: string, id: string): Promise<Webhook | undefined> {
  const row = await db.get(rowOf, [tenantId, id])
  return row && shown(row)
}

export async function listWebhooks(db: Queries, tenantId: string, before: string, limit: number): Promise<Webhook[]> {
  return (await db.all(rowsOf, [tenantId, before, limit])).map(shown)
}

/** Reactivating an endpoint restarts its 5-day failure clock. */
export async function updateWebhook(tx: Tx, tenantId: string, id: string, change: WebhookChange, now: Date): Promise<Webhook | undefined> {
  return tx.savepoint(async () => {
    const row = await tx.get(rowOf, [tenantId, id])
    if (!row) return undefined
    const status = change.status ?? row.status
    const failingSince = status === 'ACTIVE' && row.status === 'DISABLED' ? null : row.failing_since
    await tx.run(updateRow, [
      change.url ?? row.url,
      change.description === undefined ? row.description : change.description,
      change.events ? JSON.stringify(change.events) : row.events,
      status,
      failingSince,
      now.toISOString(),
      tenantId,
      id,
    ])
    return shown((await tx.get(rowOf, [tenantId, id]))!)
  })
}

/** Removes the endpoint and, with it, its deliveries (pending ones are never sent). */
export async function deleteWebhook(tx: Tx, tenantId: string, id: string): Promise<Webhook | undefined> {
  return tx.savepoint(async () => {
    const row = await tx.get(rowOf, [tenantId, id])
    if (!row) return undefined
    await tx.run(deleteRow, [tenantId, id])
    return shown(row)
  })
}

/** The new secret signs at once; the old one keeps a second webhook-signature entry for 24 h. */
export async function rotateSecret(
  tx: Tx,
  tenantId: string,
  id: string,
  now: Date,
): Promise<{ webhook: Webhook; secret: string; previousSecretExpiresAt: string } | undefined> {
  const secret = newSigningSecret()
  const until = new Date(now.getTime() + PREVIOUS_SECRET_MS).toISOString()
  const changed = (await tx.run(rotateRow, [until, secret, now.toISOString(), tenantId, id])).changes
  if (!changed) return undefined
  return { webhook: shown((await tx.get(rowOf, [tenantId, id]))!), secret, previousSecretExpiresAt: until }
}

/** ACTIVE endpoints of a tenant whose event filter takes this event type. */
export async function subscribers(db: Queries, tenantId: string, type: string): Promise<string[]> {
  const ids: string[] = []
  for (const row of await db.all(activeOf, [tenantId])) {
    const events = JSON.parse(row.events) as string[]
    if (events.includes('*') || events.includes(type)) ids.push(row.id)
  }
  return ids
}

export async function endpointForSending(db: Queries, id: string, now: Date): Promise<SendingEndpoint | undefined> {
  const row = await db.get(sendingRow, [id])
  if (!row) return undefined
  const previousValid = row.previous_secret !== null && row.previous_secret_until !== null && row.previous_secret_until > now.toISOString()
  return { id: row.id, url: row.url, status: row.status, secret: row.secret, previousSecret: previousValid ? row.previous_secret : null }
}

/** Call inside the transaction that records a successful attempt. */
export async function noteEndpointSuccess(tx: Tx, id: string): Promise<void> {
  await tx.run(clearFailing, [id])
}

/** Call inside the transaction that records a failed attempt; true when this failure disabled it. */
export async function noteEndpointFailure(tx: Tx, id: string, now: Date): Promise<boolean> {
  const row = await tx.get(noteFailing, [now.toISOString(), id])
  if (!row) return false
  if (now.getTime() - Date.parse(row.failing_since) < DISABLE_AFTER_MS) return false
  return (await tx.run(disableRow, [now.toISOString(), id])).changes > 0
}
