// The venue marks of LIVE positions and their age (SPEC 10, "Marks"). Table venue_marks (tenant_id,
// pair, price, marked_at; sql/012) is written by the executor's reconciliation pass every minute
// (src/trading/live/reconciliation.ts) and read here by SQL, as equity reads the ledger. A mark
// older than STALE_MARK_SECONDS is stale: equity lists it, a breaker decision taken on it says so
// in its incident, and /health shows its venue degraded. A mark is never shown without its age.
import { query, type Queries } from '../store/store.ts'

/** A mark older than this is stale: the venue's last price has not been read for three refreshes. */
export const STALE_MARK_SECONDS = 180

export interface StaleMark {
  pair: string
  /** Whole seconds since the mark was read. */
  age_seconds: number
  marked_at: string
}

// Only the marks of pairs the tenant holds LIVE: a mark left from a closed position values nothing.
const HELD = `EXISTS (SELECT 1 FROM trades t WHERE t.tenant_id = m.tenant_id AND t.pair = m.pair AND t.status = 'OPEN' AND t.mode = 'LIVE')`
const staleOf = query<[string, string], { pair: string; marked_at: string }>(
  `SELECT m.pair, m.marked_at FROM venue_marks m WHERE m.tenant_id = ? AND m.marked_at < ? AND ${HELD} ORDER BY m.pair`,
)
const staleVenues = query<[string], { exchange: string }>(
  `SELECT DISTINCT a.exchange FROM venue_marks m JOIN venue_accounts a ON a.tenant_id = m.tenant_id WHERE m.marked_at < ? AND ${HELD} ORDER BY a.exchange`,
)

/** Marks are ISO instants: one read before this one is stale at `now`. */
const staleBefore = (now: Date) => new Date(now.getTime() - STALE_MARK_SECONDS * 1000).toISOString()

/** The tenant's stale marks of pairs it holds LIVE, by pair. */
export async function staleMarks(db: Queries, tenantId: string, now: Date): Promise<StaleMark[]> {
  return (await db.all(staleOf, [tenantId, staleBefore(now)])).map((m) => ({
    pair: m.pair,
    marked_at: m.marked_at,
    age_seconds: Math.max(0, Math.floor((now.getTime() - Date.parse(m.marked_at)) / 1000)),
  }))
}

/** The exchanges (ccxt ids) on which some tenant holds a LIVE position valued at a stale mark. */
export async function venuesWithStaleMarks(db: Queries, now: Date): Promise<string[]> {
  return (await db.all(staleVenues, [staleBefore(now)])).map((v) => v.exchange)
}

/** `reason`, followed by the stale marks the equity behind it was valued at, if any. */
export function withStaleMarks(reason: string, marks: StaleMark[]): string {
  if (marks.length === 0) return reason
  const each = marks.map((m) => `${m.pair} read ${m.age_seconds} s ago at ${m.marked_at.slice(0, 19).replace('T', ' ')} UTC`)
  return `${reason}; on stale venue marks (older than ${STALE_MARK_SECONDS} s): ${each.join(', ')}`
}
