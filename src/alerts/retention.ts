// Retention of what arrived at alert hooks (SPEC 16: "kept like deliveries", SPEC 8): the nightly
// upkeep deletes alerts received longer ago than --retention-days, in small batches, through the
// index alerts_received (sql/021). A duplicate is an id accepted within 24 h and the retention is at
// least a day, so no acceptance a duplicate must find is ever deleted. The hooks stay: orders and
// trades name them.
import { query, type Tx } from '../store/store.ts'
import type { Purge } from '../store/retention.ts'

const expiredAlerts = query<[string, number]>('DELETE FROM alerts WHERE seq IN (SELECT seq FROM alerts WHERE received_at < ? ORDER BY received_at LIMIT ?)')

/** Alerts received before the retention, accepted, refused or duplicate alike. */
export const alertPurges: Purge[] = [
  {
    name: 'alerts',
    begin: ({ nowMs, retentionMs }) => {
      const cutoff = new Date(nowMs - retentionMs).toISOString()
      return async (tx: Tx, limit: number) => {
        const deleted = (await tx.run(expiredAlerts, [cutoff, limit])).changes
        return { deleted, more: deleted === limit }
      }
    },
  },
]
