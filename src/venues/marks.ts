// The venue's last price of a pair, per tenant (table venue_marks, sql/012: tenant_id, pair, price,
// marked_at). Written by reconciliation every minute for the pairs held LIVE, and by the price
// quotes a LIVE order is checked at; read by equity, the trades API and the pre-trade checks.
import { type Queries, query, type Tx } from '../store/store.ts'

const save = query(`INSERT INTO venue_marks (tenant_id, pair, price, marked_at) VALUES (?, ?, ?, ?)
  ON CONFLICT (tenant_id, pair) DO UPDATE SET price = excluded.price, marked_at = excluded.marked_at
  WHERE excluded.marked_at >= venue_marks.marked_at`)
const markOf = query<[string, string], { price: number; marked_at: string }>('SELECT price, marked_at FROM venue_marks WHERE tenant_id = ? AND pair = ?')

/** A venue price read this long ago is still the venue's price for an order's checks (SPEC 10). */
export const FRESH_MARK_MS = 60_000

/** Records the venue's last price of `pair` seen at `at` (an older reading never replaces a newer one), in the transaction `tx`. */
export async function saveMark(tx: Tx, tenantId: string, pair: string, price: number, at: Date): Promise<void> {
  if (price > 0) await tx.run(save, [tenantId, pair, price, at.toISOString()])
}

/**
 * The venue's price of `pair` if it was read at most `maxAgeMs` before `now`.
 *
 * @example
 * await findFreshMark(db, 'ten_1', 'BTC/USDT', 60_000, new Date()) // 65012.5, or undefined when older or never read
 */
export async function findFreshMark(db: Queries, tenantId: string, pair: string, maxAgeMs: number, now: Date): Promise<number | undefined> {
  const mark = await db.get(markOf, [tenantId, pair])
  if (!mark) return undefined
  return now.getTime() - Date.parse(mark.marked_at) <= maxAgeMs ? mark.price : undefined
}
