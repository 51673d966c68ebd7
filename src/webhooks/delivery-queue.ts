// The outbox as the sender reads and writes it (table webhook_deliveries, see ./outbox.ts): the
// next first attempts of an endpoint in creation order, due retries beside them, and the result of
// each attempt.
import { query, type Queries, type Tx } from '../store/store.ts'
import type { OutboxItem } from './outbox.ts'

const ITEM = `SELECT d.id, d.webhook_id, d.tenant_id, d.event_id, d.event_type, d.attempts, e.created_at AS event_created_at, e.data
  FROM webhook_deliveries d JOIN events e ON e.id = d.event_id`
const firstInLine = query<[string, number], OutboxItem>(`${ITEM} WHERE d.webhook_id = ? AND d.status = 'PENDING' AND d.attempts = 0 ORDER BY d.id LIMIT ?`)
const dueRetryRows = query<[string, number, number], OutboxItem>(
  `${ITEM} WHERE d.webhook_id = ? AND d.status = 'PENDING' AND d.attempts > 0 AND d.next_attempt_at <= ? ORDER BY d.next_attempt_at LIMIT ?`,
)
const nextRetryRow = query<[string, number], { at: number | null }>(
  "SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE webhook_id = ? AND status = 'PENDING' AND attempts > 0 AND next_attempt_at > ?",
)
const dueEndpoints = query<[number], { webhook_id: string }>(`SELECT DISTINCT d.webhook_id FROM webhook_deliveries d
  JOIN webhooks w ON w.id = d.webhook_id WHERE d.status = 'PENDING' AND d.next_attempt_at <= ? AND w.status = 'ACTIVE'`)
const succeeded = query(`UPDATE webhook_deliveries SET status = 'SUCCEEDED', attempts = ?, last_attempt_at = ?, last_status_code = ?,
  last_error = NULL, delivered_at = ? WHERE id = ? AND status = 'PENDING'`)
const failed = query(`UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, last_attempt_at = ?, last_status_code = ?,
  last_error = ? WHERE id = ? AND status = 'PENDING'`)
const backlogCount = query<[], { n: number }>(`SELECT count(*) AS n FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
  WHERE d.status = 'PENDING' AND w.status = 'ACTIVE'`)

/** The oldest first attempts waiting for this endpoint: first attempts go out in creation order. */
export async function nextFirstAttempts(db: Queries, webhookId: string, limit: number): Promise<OutboxItem[]> {
  return db.all(firstInLine, [webhookId, limit])
}

/** Retries that are due; they never wait behind the in-order first attempts. */
export async function dueRetries(db: Queries, webhookId: string, nowMs: number, limit: number): Promise<OutboxItem[]> {
  return db.all(dueRetryRows, [webhookId, nowMs, limit])
}

/** When the earliest retry that is not yet due falls due (epoch ms), or null. */
export async function nextRetryAfter(db: Queries, webhookId: string, nowMs: number): Promise<number | null> {
  return (await db.get(nextRetryRow, [webhookId, nowMs]))?.at ?? null
}

/** ACTIVE endpoints with at least one due delivery (after a restart, or rows written by the CLI). */
export async function endpointsWithDueWork(db: Queries, nowMs: number): Promise<string[]> {
  return (await db.all(dueEndpoints, [nowMs])).map((r) => r.webhook_id)
}

export async function markSucceeded(tx: Tx, id: string, attempts: number, at: Date, statusCode: number): Promise<void> {
  const iso = at.toISOString()
  await tx.run(succeeded, [attempts, iso, statusCode, iso, id])
}

/** nextAttemptAt null: that was the last attempt, the delivery is FAILED. */
export async function markFailed(
  tx: Tx,
  id: string,
  attempts: number,
  at: Date,
  nextAttemptAt: number | null,
  statusCode: number | null,
  error: string,
): Promise<void> {
  await tx.run(failed, [
    nextAttemptAt === null ? 'FAILED' : 'PENDING',
    attempts,
    nextAttemptAt ?? at.getTime(),
    at.toISOString(),
    statusCode,
    error.slice(0, 300),
    id,
  ])
}

/** Pending deliveries of ACTIVE endpoints (Health.webhook_backlog). */
export async function backlog(db: Queries): Promise<number> {
  return (await db.get(backlogCount))?.n ?? 0
}
