// The protections' rows (SPEC 13). Table venue_protections (sql/016_venue_protection.sql): one row
// per (tenant, pair) that ever held a LIVE position, saying what should rest on the venue and what
// does. A change of the ledger that may change the protection (a fill, a SELL queued, a new profile)
// makes the row due in its own transaction; the executor's protection step (./worker.ts) looks at
// due rows after the commit, and at every row on its own poll.
import { createHash } from 'node:crypto'
import { type Queries, query, type Tx } from '../../store/store.ts'
import { findVenueAccount } from '../../venues/accounts.ts'
import { signalLiveWork } from '../live/outbox.ts'

export type ProtectionKind = 'STOP' | 'STOP_LIMIT' | 'TAKE_PROFIT' | 'OCO' | 'SALE'
export type ProtectionPhase = 'IDLE' | 'SENT' | 'RESTING' | 'SELLING'
export type ProtectionStatus = 'NONE' | 'PLACING' | 'RESTING' | 'FAILED'
export type SaleReason = 'flatten' | 'venue_stop' | 'venue_take_profit'

export interface ProtectionRow {
  tenant_id: string
  pair: string
  exchange: string
  seq: number
  status: ProtectionStatus
  phase: ProtectionPhase
  kind: ProtectionKind | null
  quantity: number | null
  stop_price: number | null
  stop_limit_price: number | null
  take_profit_price: number | null
  sale_reason: SaleReason | null
  venue_order_ids: string
  sent_at: number | null
  due_at: number
  last_error: string | null
}

/** What the API shows of a LIVE trade's protection (SPEC 13). */
export interface ProtectionView {
  status: ProtectionStatus
  stop_price: number | null
  take_profit_price: number | null
  venue_order_ids: string[]
}

/** A row's due_at when nothing is to be done until the ledger or the profile changes. */
export const NEVER = Number.MAX_SAFE_INTEGER
// A row is wanted while the profile asks for a venue stop or take-profit.
const WANTED = `(SELECT venue_stop_loss_pct IS NOT NULL OR venue_take_profit_pct IS NOT NULL FROM risk_profiles WHERE tenant_id = @tenant)`
// Due when the profile wants a protection or one may be on the venue (or FAILED, or placing). An IDLE
// row with nothing wanted is left as it is (no row returned): its pass would only write NONE again,
// and a pass woken for it delays the next order.
const upsertDue = query<{ tenant: string; pair: string; exchange: string; at: string }, { due_at: number }>(`
  INSERT INTO venue_protections (tenant_id, pair, exchange, status, due_at, updated_at)
    VALUES (@tenant, @pair, @exchange, CASE WHEN ${WANTED} THEN 'PLACING' ELSE 'NONE' END, CASE WHEN ${WANTED} THEN 0 ELSE ${NEVER} END, @at)
  ON CONFLICT (tenant_id, pair) DO UPDATE SET due_at = 0, updated_at = @at,
    status = CASE WHEN venue_protections.status IN ('RESTING', 'FAILED') THEN venue_protections.status WHEN ${WANTED} THEN 'PLACING' ELSE venue_protections.status END
    WHERE ${WANTED} OR venue_protections.phase <> 'IDLE' OR venue_protections.status <> 'NONE'
  RETURNING due_at`)
const heldPairs = query<{ tenant: string }, { pair: string }>(
  "SELECT DISTINCT pair FROM trades WHERE tenant_id = @tenant AND status = 'OPEN' AND mode = 'LIVE'",
)
const dueRows = query<{ tenant: string; now: number }, ProtectionRow>(
  'SELECT * FROM venue_protections WHERE tenant_id = @tenant AND due_at <= @now ORDER BY pair',
)
const allRows = query<[string], ProtectionRow>('SELECT * FROM venue_protections WHERE tenant_id = ? ORDER BY pair')
const oneRow = query<[string, string], ProtectionRow>('SELECT * FROM venue_protections WHERE tenant_id = ? AND pair = ?')
const failedExchanges = query<[], { exchange: string }>("SELECT DISTINCT exchange FROM venue_protections WHERE status = 'FAILED'")
const tenantsWithDue = query<[number], { tenant_id: string }>('SELECT DISTINCT tenant_id FROM venue_protections WHERE due_at <= ?')
const saveRow = query(`UPDATE venue_protections SET seq = @seq, status = @status, phase = @phase, kind = @kind, quantity = @quantity,
  stop_price = @stop_price, stop_limit_price = @stop_limit_price, take_profit_price = @take_profit_price, sale_reason = @sale_reason,
  venue_order_ids = @venue_order_ids, sent_at = @sent_at, due_at = @due_at, last_error = @last_error, updated_at = @at
  WHERE tenant_id = @tenant_id AND pair = @pair`)

/**
 * Makes the protection of (tenant, pair) due now, creating its row; the executor is told after the
 * commit. Call inside the transaction of the change (a fill, a queued SELL). No-op without a venue;
 * an IDLE row whose profile wants no protection (status NONE) stays as it is, not due.
 */
export async function protectionDue(tx: Tx, tenantId: string, pair: string, now: Date): Promise<void> {
  const exchange = (await findVenueAccount(tx, tenantId))?.exchange
  if (!exchange) return
  const row = await tx.get(upsertDue, { tenant: tenantId, pair, exchange, at: now.toISOString() })
  if (row !== undefined && Number(row.due_at) === 0) signalLiveWork(tx)
}

/**
 * Makes the protection of every LIVE position of the tenant due, and every row's (the profile's
 * percentages changed); `unplaced` only those with nothing on the venue (reconciliation: resting ones
 * are read by the executor's protection poll).
 */
export async function protectionsDue(tx: Tx, tenantId: string, now: Date, unplaced = false): Promise<void> {
  const rows = new Map((await tx.all(allRows, [tenantId])).map((r) => [r.pair, r]))
  const pairs = new Set([...(await tx.all(heldPairs, { tenant: tenantId })).map((r) => r.pair), ...rows.keys()])
  for (const pair of pairs) if (!unplaced || (rows.get(pair)?.phase ?? 'IDLE') === 'IDLE') await protectionDue(tx, tenantId, pair, now)
}

/** Whether something of the pair's protection may be on the venue (a SELL waits for it to be canceled). */
export async function protectionOnVenue(db: Queries, tenantId: string, pair: string): Promise<boolean> {
  const phase = (await db.get(oneRow, [tenantId, pair]))?.phase
  return phase !== undefined && phase !== 'IDLE'
}

export function dueProtections(db: Queries, tenantId: string, nowMs: number): Promise<ProtectionRow[]> {
  return db.all(dueRows, { tenant: tenantId, now: nowMs })
}

export function protectionsOf(db: Queries, tenantId: string): Promise<ProtectionRow[]> {
  return db.all(allRows, [tenantId])
}

export function findProtection(db: Queries, tenantId: string, pair: string): Promise<ProtectionRow | undefined> {
  return db.get(oneRow, [tenantId, pair])
}

export async function tenantsWithDueProtections(db: Queries, nowMs: number): Promise<string[]> {
  return (await db.all(tenantsWithDue, [nowMs])).map((r) => r.tenant_id)
}

/** Exchanges with a position the venue refused to protect: /health shows them degraded. */
export async function exchangesWithFailedProtections(db: Queries): Promise<string[]> {
  return (await db.all(failedExchanges)).map((r) => r.exchange)
}

/** Writes the row as the worker left it, in the transaction `tx`. */
export async function saveProtection(tx: Tx, row: ProtectionRow, now: Date): Promise<void> {
  await tx.run(saveRow, { ...row, at: now.toISOString() })
}

/**
 * The first characters of every client order id the protection of (tenant, pair) uses: the same
 * after a crash, so what rests is found again, and told apart from orders nobody knows.
 *
 * @example
 * protectionPrefix('ten_1', 'BTC/USDT') // 'bwp3f9a1c0e5b7d'
 */
export function protectionPrefix(tenantId: string, pair: string): string {
  return `bwp${createHash('sha256').update(`${tenantId}|${pair}`).digest('hex').slice(0, 12)}`
}

/** The client order id of one leg of placement `seq`: s stop, t take-profit, l the OCO list, m a market sale. */
export function legClientId(tenantId: string, pair: string, seq: number, leg: 's' | 't' | 'l' | 'm'): string {
  return `${protectionPrefix(tenantId, pair)}${seq.toString(36)}${leg}`
}

/** The view of the API and the console. */
export function protectionView(row: ProtectionRow | undefined): ProtectionView {
  if (!row) return { status: 'NONE', stop_price: null, take_profit_price: null, venue_order_ids: [] }
  const resting = row.phase === 'RESTING' && row.kind !== 'SALE'
  return {
    status: row.status,
    stop_price: resting || row.status === 'PLACING' ? row.stop_price : null,
    take_profit_price: resting || row.status === 'PLACING' ? row.take_profit_price : null,
    venue_order_ids: resting ? JSON.parse(row.venue_order_ids) : [],
  }
}
