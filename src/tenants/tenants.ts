// Tenants and their workspace and risk profile, created together.
// Tables tenants (id, slug, plan, created_at), risk_profiles, workspace_models (sql/001_init.sql).
import { newId } from '../store/ids.ts'
import { query, type Queries, type Tx } from '../store/store.ts'

export type Plan = 'SIGNAL' | 'EXECUTE'
export const PLAN_MODEL_LIMIT: Record<Plan, number> = { SIGNAL: 1, EXECUTE: 5 }
export const SLUG_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$'

export interface Tenant {
  id: string
  slug: string
  plan: Plan
  created_at: string
}

const insertTenant = query('INSERT INTO tenants (id, slug, plan, created_at) VALUES (?, ?, ?, ?)')
const insertProfile = query(`INSERT INTO risk_profiles (tenant_id, max_open_trades, max_exposure_usd, updated_at)
  VALUES (?, ?, ?, ?)`)
const tenantBySlug = query<[string], Tenant>('SELECT * FROM tenants WHERE slug = ?')
const tenantById = query<[string], Tenant>('SELECT * FROM tenants WHERE id = ?')
const everyTenant = query<[], Tenant>('SELECT * FROM tenants ORDER BY id')

export class TenantExists extends Error {}

/** `now`: when it was created (the demo's tenant dates itself back to the start of its replayed history). */
export async function createTenant(tx: Tx, input: { slug: string; plan: Plan; maxOpenTrades?: number; maxExposureUsd?: number; now?: Date }): Promise<Tenant> {
  if (!new RegExp(SLUG_PATTERN).test(input.slug)) throw new Error(`tenant slug must match ${SLUG_PATTERN}`)
  const now = (input.now ?? new Date()).toISOString()
  const tenant: Tenant = { id: newId('ten'), slug: input.slug, plan: input.plan, created_at: now }
  return tx.savepoint(async () => {
    if (await tx.get(tenantBySlug, [input.slug])) throw new TenantExists(`tenant ${input.slug} already exists`)
    await tx.run(insertTenant, [tenant.id, tenant.slug, tenant.plan, now])
    await tx.run(insertProfile, [tenant.id, input.maxOpenTrades ?? 5, input.maxExposureUsd ?? 10000, now])
    return tenant
  })
}

export async function findTenant(db: Queries, slug: string): Promise<Tenant | undefined> {
  return db.get(tenantBySlug, [slug])
}

export async function findTenantById(db: Queries, id: string): Promise<Tenant | undefined> {
  return db.get(tenantById, [id])
}

/** Every tenant (a handful on one install, so not paged), oldest first. */
export async function allTenants(db: Queries): Promise<Tenant[]> {
  return db.all(everyTenant)
}

const shareTenant = query<[string]>('SELECT 1 FROM tenants WHERE id = ? FOR SHARE')
const lockTenantRow = query<[string]>('SELECT 1 FROM tenants WHERE id = ? FOR UPDATE')

/**
 * On PostgreSQL, where other nodes' changes run at once, holds the tenant's row until this change
 * commits: `update` for what must see the tenant's orders and chain stand still (an order and its
 * limits, the kill switch, an incident appended after the chain's head), `share` for what only
 * needs the tenant to stay as it is. SQLite runs one change at a time: nothing to hold there.
 *
 * @example
 * await holdTenant(tx, tenantId, 'update') // first, in the kill switch's change
 */
export async function holdTenant(tx: Tx, tenantId: string, mode: 'share' | 'update'): Promise<void> {
  if (tx.engine === 'postgres') await tx.get(mode === 'share' ? shareTenant : lockTenantRow, [tenantId])
}
