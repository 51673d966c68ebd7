// Retention of webhook rows (SPEC section 8), run by the nightly upkeep in small batches, through
// the indexes of sql/005 (finished deliveries by age) and sql/007 (events by age, deliveries by event).
import { query, type Tx } from '../store/store.ts'
import type { Purge } from '../store/retention.ts'

const expiredDeliveries = query<[string, number]>(`DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries
  WHERE status <> 'PENDING' AND created_at < ? ORDER BY created_at LIMIT ?)`)
const oldEvents = query<[string, string, string, number], { id: string; created_at: string }>(
  'SELECT id, created_at FROM events WHERE created_at < ? AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?',
)
const deleteUndelivered = query<[string, string]>('DELETE FROM events WHERE id = ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE event_id = ?)')

/**
 * SUCCEEDED and FAILED deliveries created before the retention, then the events that no delivery
 * refers to any more and are older than the retention themselves: an event with a PENDING delivery,
 * or with a redelivery younger than the retention, stays; one that never had an endpoint goes.
 */
export const webhookPurges: Purge[] = [
  {
    name: 'webhook_deliveries',
    begin: ({ nowMs, retentionMs }) => {
      const cutoff = new Date(nowMs - retentionMs).toISOString()
      return async (tx: Tx, limit: number) => {
        const deleted = (await tx.run(expiredDeliveries, [cutoff, limit])).changes
        return { deleted, more: deleted === limit }
      }
    },
  },
  {
    name: 'events',
    begin: ({ nowMs, retentionMs }) => {
      const cutoff = new Date(nowMs - retentionMs).toISOString()
      // Kept events are passed once per run, not read again by every batch.
      let after = { created_at: '', id: '' }
      return async (tx: Tx, limit: number) => {
        const candidates = await tx.all(oldEvents, [cutoff, after.created_at, after.id, limit])
        let deleted = 0
        for (const event of candidates) deleted += (await tx.run(deleteUndelivered, [event.id, event.id])).changes
        after = candidates.at(-1) ?? after
        return { deleted, more: candidates.length === limit }
      }
    },
  },
]
