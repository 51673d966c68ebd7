// The incident trail: per tenant, hash = sha256_hex(prev_hash + "\n" + canonical_json(record)) over
// {id, tenant_id, action, actor, status, timestamp, model_id, reason}; the first prev_hash is 64
// zeros. Table incidents (sql/001_init.sql) refuses UPDATE and DELETE by triggers (checked at start
// by ./integrity.ts); what the triggers cannot stop, a rewrite by someone who drops them, only a
// head held outside the data dir reveals: risk.* events carry it, verifyChain checks it.
import { holdTenant } from '../tenants/tenants.ts'
import { nodeCrypto } from '../shared/crypto.ts'
import { newId } from '../store/ids.ts'
import { query, type Queries, type Tx } from '../store/store.ts'
import { canonicalJson } from '../shared/canonical-json.ts'
import { textProblem } from '../shared/text.ts'
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'

const GENESIS_HASH = '0'.repeat(64)

/** A record of the chain, as the API shows it; every field is always there (tenant_id too). */
export type Incident = Required<FromSchema<typeof incidentSchema>>

const insertIncident = query(`INSERT INTO incidents (id, tenant_id, action, actor, status, timestamp, model_id, reason, prev_hash, hash)
  VALUES (@id, @tenant_id, @action, @actor, @status, @timestamp, @model_id, @reason, @prev_hash, @hash)`)
const lastHash = query<[string], { hash: string }>('SELECT hash FROM incidents WHERE tenant_id = ? ORDER BY seq DESC LIMIT 1')
const pageOfIncidents = query<[string, string, number], Incident>(
  `SELECT id, tenant_id, action, actor, status, timestamp, model_id, reason, prev_hash, hash FROM incidents
   WHERE tenant_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
)
const chainOf = query<[string], Incident>(
  'SELECT id, tenant_id, action, actor, status, timestamp, model_id, reason, prev_hash, hash FROM incidents WHERE tenant_id = ? ORDER BY seq',
)

/** "2026-11-22 00:05:00 UTC", as the description writes incident timestamps. */
function incidentTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`
}

export function incidentHash(prevHash: string, record: Omit<Incident, 'prev_hash' | 'hash'>): string {
  const covered = {
    id: record.id,
    tenant_id: record.tenant_id,
    action: record.action,
    actor: record.actor,
    status: record.status,
    timestamp: record.timestamp,
    model_id: record.model_id,
    reason: record.reason,
  }
  return nodeCrypto()
    .createHash('sha256')
    .update(`${prevHash}\n${canonicalJson(covered)}`)
    .digest('hex')
}

/**
 * Appends to the tenant's chain, in the transaction of the change it records: the head is read and
 * the record appended through the same `tx`, so the chain stays one total order.
 */
export async function appendIncident(
  tx: Tx,
  input: {
    tenantId: string
    action: string
    actor: string
    status: Incident['status']
    modelId?: string
    reason?: string | null
    now: Date
  },
): Promise<Incident> {
  const record = {
    id: newId('inc'),
    tenant_id: input.tenantId,
    action: input.action,
    actor: input.actor,
    status: input.status,
    timestamp: incidentTimestamp(input.now),
    model_id: input.modelId ?? 'all',
    reason: input.reason ?? null,
  }
  // Inputs are checked at the API's boundary; this is the last line: text SQLite would store as
  // something else than what is hashed would break the chain for good.
  for (const text of [record.actor, record.reason ?? '', record.model_id]) {
    const problem = textProblem(text)
    if (problem) throw new Error(`incident text ${problem}`)
  }
  // The tenant's row is the lock of the chain's head on PostgreSQL: two appenders never read the same head (SPEC 15).
  await holdTenant(tx, input.tenantId, 'update')
  const prev_hash = (await tx.get(lastHash, [input.tenantId]))?.hash ?? GENESIS_HASH
  const incident: Incident = { ...record, prev_hash, hash: incidentHash(prev_hash, record) }
  await tx.run(insertIncident, incident)
  return incident
}

export async function listIncidents(db: Queries, tenantId: string, before: string, limit: number): Promise<Incident[]> {
  return await db.all(pageOfIncidents, [tenantId, before, limit])
}

export async function exportChain(db: Queries, tenantId: string): Promise<Incident[]> {
  return await db.all(chainOf, [tenantId])
}

/** Where a head kept outside the data dir (an anchor) was found in the recomputed chain. */
export type AnchorCheck = NonNullable<FromSchema<typeof verificationSchema>['anchor']>

/** The answer of GET /api/v1/risk/incidents/verify (verificationSchema), with what goes with what. */
export type Verification =
  | { valid: true; count: number; head_hash: string; anchor?: AnchorCheck }
  | { valid: false; count: number; broken_at: string; anchor?: AnchorCheck }
  | { valid: false; count: number; head_hash: string; anchor: AnchorCheck }

/**
 * Recomputes the tenant's chain from genesis. With `anchor` (a hash held outside the data dir, from
 * a webhook or an earlier verify), the chain is valid only if one of its recomputed records has that
 * hash: a chain rewritten or truncated behind the triggers recomputes cleanly, but not to the anchor.
 * Appends after the anchor cannot be judged by it; the next anchor covers them.
 */
export async function verifyChain(db: Queries, tenantId: string, anchor?: string): Promise<Verification> {
  let prev = GENESIS_HASH
  let count = 0
  let anchoredAt: string | null = null
  const check = (): AnchorCheck => ({ hash: anchor!, found: anchoredAt !== null, incident_id: anchoredAt })
  for (const incident of await db.all(chainOf, [tenantId])) {
    if (incident.prev_hash !== prev || incidentHash(prev, incident) !== incident.hash) {
      return { valid: false, count, broken_at: incident.id, ...(anchor === undefined ? {} : { anchor: check() }) }
    }
    if (incident.hash === anchor) anchoredAt = incident.id
    prev = incident.hash
    count++
  }
  if (anchor === undefined) return { valid: true, count, head_hash: prev }
  return anchoredAt === null ? { valid: false, count, head_hash: prev, anchor: check() } : { valid: true, count, head_hash: prev, anchor: check() }
}

/** What a `risk.*` event carries of its incident, so a receiver holds the chain's head. */
const incidentById = query<[string, string], Incident>(
  'SELECT id, tenant_id, action, actor, status, timestamp, model_id, reason, prev_hash, hash FROM incidents WHERE id = ? AND tenant_id = ?',
)

export async function findIncident(db: Queries, tenantId: string, id: string): Promise<Incident | undefined> {
  return await db.get(incidentById, [id, tenantId])
}

export function incidentRef(incident: Incident): { id: string; hash: string; prev_hash: string } {
  return { id: incident.id, hash: incident.hash, prev_hash: incident.prev_hash }
}

const HASH_PATTERN = '^[0-9a-f]{64}$'

export const incidentSchema = {
  type: 'object',
  required: ['id', 'action', 'actor', 'status', 'timestamp', 'model_id', 'reason', 'prev_hash', 'hash'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^inc_' },
    tenant_id: { type: 'string' },
    action: { type: 'string' },
    actor: { type: 'string' },
    status: { type: 'string', enum: ['ENGAGED', 'RESOLVED', 'RECORDED'] },
    timestamp: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} UTC$' },
    model_id: { type: 'string' },
    reason: { type: 'string', nullable: true },
    prev_hash: { type: 'string', pattern: HASH_PATTERN },
    hash: { type: 'string', pattern: HASH_PATTERN },
  },
} as const satisfies Schema

export const verificationSchema = {
  type: 'object',
  required: ['valid', 'count'],
  additionalProperties: false,
  properties: {
    valid: { type: 'boolean' },
    count: { type: 'integer' },
    head_hash: { type: 'string' },
    broken_at: { type: 'string' },
    anchor: {
      type: 'object',
      required: ['hash', 'found', 'incident_id'],
      additionalProperties: false,
      description: 'with head only: found false means the chain was truncated or rewritten after that record',
      properties: { hash: { type: 'string', pattern: HASH_PATTERN }, found: { type: 'boolean' }, incident_id: { type: 'string', nullable: true } },
    },
  },
} as const satisfies Schema
