// Alert hooks (SPEC 16): where TradingView and other senders that cannot sign post alerts. Table
// alert_hooks (sql/021_alerts.sql): id, tenant_id, name, mode (PAPER|LIVE), model_id, max_age_seconds,
// source_cidrs (JSON array or NULL), secret_sealed (sealed with the data dir's secrets.key, bound to
// the tenant and the hook: the receiver reads it back to compare in constant time), created_at,
// revoked_at, refused_count (the refusals that record nothing else).
import { nodeCrypto } from '../shared/crypto.ts'
import { newId } from '../store/ids.ts'
import type { SecretBox } from '../store/secret-box.ts'
import { type Queries, query, type Tx } from '../store/store.ts'

export type AlertMode = 'PAPER' | 'LIVE'

/** A hook as the API shows it: never its secret. */
export interface AlertHook {
  id: string
  name: string
  mode: AlertMode
  model_id: string | null
  max_age_seconds: number
  source_cidrs: string[] | null
  created_at: string
  revoked_at: string | null
  refused_count: number
}

/** A live hook for the receiver, its secret opened: for the comparison only, never an answer or a log. */
export interface ReceivingHook extends AlertHook {
  tenant_id: string
  secret: string
}

interface HookRow extends Omit<AlertHook, 'source_cidrs'> {
  tenant_id: string
  source_cidrs: string | null
  secret_sealed: string
}

const COLUMNS = 'id, tenant_id, name, mode, model_id, max_age_seconds, source_cidrs, secret_sealed, created_at, revoked_at, refused_count'
const insertHook = query(`INSERT INTO alert_hooks (id, tenant_id, name, mode, model_id, max_age_seconds, source_cidrs, secret_sealed, created_at)
  VALUES (@id, @tenant_id, @name, @mode, @model_id, @max_age_seconds, @source_cidrs, @secret_sealed, @created_at)`)
const hookById = query<[string], HookRow>(`SELECT ${COLUMNS} FROM alert_hooks WHERE id = ?`)
const tenantHook = query<[string, string], HookRow>(`SELECT ${COLUMNS} FROM alert_hooks WHERE id = ? AND tenant_id = ?`)
const tenantHooks = query<{ tenant: string; before: string; limit: number }, HookRow>(
  `SELECT ${COLUMNS} FROM alert_hooks WHERE tenant_id = @tenant AND id < @before ORDER BY id DESC LIMIT @limit`,
)
const revokeHook = query<[string, string, string], HookRow>(
  `UPDATE alert_hooks SET revoked_at = ? WHERE id = ? AND tenant_id = ? AND revoked_at IS NULL RETURNING ${COLUMNS}`,
)

const context = (tenantId: string, hookId: string) => `alert_hooks:${tenantId}:${hookId}:secret`

function toHook(row: HookRow): AlertHook {
  const { tenant_id: _t, secret_sealed: _s, ...rest } = row
  return { ...rest, source_cidrs: row.source_cidrs === null ? null : (JSON.parse(row.source_cidrs) as string[]) }
}

export interface NewAlertHook {
  name: string
  mode: AlertMode
  model_id?: string | null
  max_age_seconds?: number
  source_cidrs?: string[] | null
}

/**
 * Writes a hook with a new secret (32 random bytes, hex), sealed; returns the hook and the secret,
 * which nothing shows again.
 *
 * @example
 * const { hook, secret } = await createAlertHook(tx, 'ten_1', { name: 'tv', mode: 'PAPER' }, box, new Date())
 */
export async function createAlertHook(tx: Tx, tenantId: string, input: NewAlertHook, box: SecretBox, now: Date): Promise<{ hook: AlertHook; secret: string }> {
  const id = newId('ahk')
  const secret = nodeCrypto().randomBytes(32).toString('hex')
  await tx.run(insertHook, {
    id,
    tenant_id: tenantId,
    name: input.name,
    mode: input.mode,
    model_id: input.model_id ?? null,
    max_age_seconds: input.max_age_seconds ?? 60,
    source_cidrs: input.source_cidrs ? JSON.stringify(input.source_cidrs) : null,
    secret_sealed: box.seal(secret, context(tenantId, id)),
    created_at: now.toISOString(),
  })
  return { hook: toHook((await tx.get(hookById, [id]))!), secret }
}

/** The tenant's hook, revoked or not; undefined when it has none by that id. */
export async function findAlertHook(db: Queries, tenantId: string, id: string): Promise<AlertHook | undefined> {
  const row = await db.get(tenantHook, [id, tenantId])
  return row && toHook(row)
}

/** The tenant's hooks, newest first, a page before `before`. */
export async function listAlertHooks(db: Queries, tenantId: string, before: string, limit: number): Promise<AlertHook[]> {
  return (await db.all(tenantHooks, { tenant: tenantId, before, limit })).map(toHook)
}

/** Revokes a live hook: the next alert to it is 404. Undefined when there is no live hook by that id. */
export async function revokeAlertHook(tx: Tx, tenantId: string, id: string, now: Date): Promise<AlertHook | undefined> {
  const row = await tx.get(revokeHook, [now.toISOString(), id, tenantId])
  return row && toHook(row)
}

/** The live hook an alert is posted to, its secret opened; undefined when unknown or revoked. */
export async function findReceivingHook(db: Queries, id: string, box: SecretBox): Promise<ReceivingHook | undefined> {
  const row = await db.get(hookById, [id])
  if (!row || row.revoked_at !== null) return undefined
  return { ...toHook(row), tenant_id: row.tenant_id, secret: box.open(row.secret_sealed, context(row.tenant_id, row.id)) }
}
