// The venue's last price of a pair, per tenant (table venue_marks, sql/012: tenant_id, pair, price,
// marked_at). Written by reconciliation every minute for the pairs held LIVE, and by the price
// quotes a LIVE order is checked at; read by equity, the trades API and the pre-trade checks.
import { assertInWrite, statement } from '../store/db.ts'

const save = statement(`INSERT INTO venue_marks (tenant_id, pair, price, marked_at) VALUES (?, ?, ?, ?)
  ON CONFLICT (tenant_id, pair) DO UPDATE SET price = excluded.price, marked_at = excluded.marked_at
  WHERE excluded.marked_at >= venue_marks.marked_at`)
const markOf = statement<[string, string], { price: number; marked_at: string }>('SELECT price, marked_at FROM venue_marks WHERE tenant_id = ? AND pair = ?')

/** A venue price read this long ago is still the venue's price for an order's checks (SPEC 10). */
export const FRESH_MARK_MS = 60_000

/** Records the venue's last price of `pair` seen at `at` (an older reading never replaces a newer one). Call inside write(). */
export function saveMark(tenantId: string, pair: string, price: number, at: Date): void {
  assertInWrite()
  if (price > 0) save().run(tenantId, pair, price, at.toISOString())
}

/**
 * The venue's price of `pair` if it was read at most `maxAgeMs` before `now`.
 *
 * @example
 * findFreshMark('ten_1', 'BTC/USDT', 60_000, new Date()) // 65012.5, or undefined when older or never read
 */
export function findFreshMark(tenantId: string, pair: string, maxAgeMs: number, now: Date): number | undefined {
  const mark = markOf().get(tenantId, pair)
  if (!mark) return undefined
  return now.getTime() - Date.parse(mark.marked_at) <= maxAgeMs ? mark.price : undefined
}
