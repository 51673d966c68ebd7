// Mass cancellation for the kill switch. Table order_cancellations (sql/003_orders.sql): seq,
// incident_id, tenant_id, model_id (NULL: fleet), up_to, canceled_at, settled_at.
//
// The kill switch's transaction writes one fence: every order of the scope that is PENDING with
// seq <= up_to is canceled from that commit on, for every reader (the views pending_orders and
// orders_now, the paper broker, the checks). That keeps the switch as fast for 10,000 pending
// orders as for one. Settlement then marks the rows CANCELED (canceled_by = the incident) and
// writes their order.canceled events, in small transactions right after the switch, so other
// requests are served in between. A crash before settlement loses nothing: `serve` settles what
// is left at start, and sweeps for fences a crashed CLI process left behind. A LIVE order is not
// canceled by the fence but on the venue: settlement asks the executor (./live/outbox.ts) to cancel
// it, and the venue's answer ends it.
import { assertInWrite, statement, write } from '../store/db.ts'
import { log } from '../shared/log.ts'
import type { Service } from '../store/service.ts'
import { recordEvent } from '../webhooks/events.ts'
import { toOrder, type OrderRow } from './orders.ts'
import { signalLiveWork } from './live/outbox.ts'

interface Fence {
  seq: number
  incident_id: string
  tenant_id: string
  model_id: string | null
  up_to: number
  canceled_at: string
}

const BATCH = 250
const SWEEP_MS = 30_000

const pendingInScope = statement<{ tenant: string; model: string | null }, { n: number }>(
  'SELECT count(*) AS n FROM pending_orders WHERE tenant_id = @tenant AND (@model IS NULL OR model_id = @model)',
)
// Without an unsettled fence of the tenant, the count is the partial index's alone: no probe per row.
const pendingRowsInScope = statement<{ tenant: string; model: string | null }, { n: number }>(
  "SELECT count(*) AS n FROM orders WHERE tenant_id = @tenant AND status = 'PENDING' AND (@model IS NULL OR model_id = @model)",
)
const hasUnsettled = statement<[string], { found: number }>(
  'SELECT EXISTS (SELECT 1 FROM order_cancellations WHERE tenant_id = ? AND settled_at IS NULL) AS found',
)
const insertFence = statement(`INSERT INTO order_cancellations (incident_id, tenant_id, model_id, up_to, canceled_at)
  VALUES (@incident, @tenant, @model, (SELECT coalesce(max(seq), 0) FROM orders), @at)`)
const oldestUnsettled = statement<[], Fence>(
  'SELECT seq, incident_id, tenant_id, model_id, up_to, canceled_at FROM order_cancellations WHERE settled_at IS NULL ORDER BY seq LIMIT 1',
)
// Fences settle oldest first, so the rows still PENDING under this one are exactly those it canceled.
const settleRows = statement<{ tenant: string; model: string | null; up_to: number; at: string; incident: string; batch: number }, OrderRow>(`
  UPDATE orders SET status = 'CANCELED', canceled_at = @at, canceled_by = @incident WHERE seq IN (
    SELECT seq FROM orders WHERE tenant_id = @tenant AND status = 'PENDING' AND mode = 'PAPER' AND seq <= @up_to AND (@model IS NULL OR model_id = @model)
    ORDER BY seq LIMIT @batch)
  RETURNING *`)
const requestLiveCancels = statement<{ tenant: string; model: string | null; up_to: number; at: string; incident: string }>(`
  UPDATE venue_orders SET cancel_by = @incident, not_before = 0, updated_at = @at WHERE cancel_by IS NULL AND state <> 'DONE' AND order_id IN (
    SELECT id FROM orders WHERE tenant_id = @tenant AND status = 'PENDING' AND mode = 'LIVE' AND seq <= @up_to AND (@model IS NULL OR model_id = @model))`)
const markSettled = statement('UPDATE order_cancellations SET settled_at = ? WHERE seq = ?')

/** Pending orders of the tenant, or of one model, as the kill switch will cancel them. */
export function pendingOrderCount(tenantId: string, modelId: string | null): number {
  const scope = { tenant: tenantId, model: modelId }
  return (hasUnsettled().get(tenantId)!.found ? pendingInScope() : pendingRowsInScope()).get(scope)!.n
}

/** Cancels every pending order in scope as of now; call inside the kill switch's transaction. */
export function cancelPendingOrders(tenantId: string, modelId: string | null, incidentId: string, now: Date): void {
  assertInWrite()
  insertFence().run({ incident: incidentId, tenant: tenantId, model: modelId, at: now.toISOString() })
  settleSoon()
}

/** Settles up to one batch of the oldest fence; returns false when nothing is left to settle. */
function settleBatch(now = new Date()): boolean {
  return write(() => {
    const fence = oldestUnsettled().get()
    if (!fence) return false
    const at = new Date(fence.canceled_at)
    const rows = settleRows().all({
      tenant: fence.tenant_id,
      model: fence.model_id,
      up_to: fence.up_to,
      at: fence.canceled_at,
      incident: fence.incident_id,
      batch: BATCH,
    })
    for (const row of rows) recordEvent(fence.tenant_id, 'order.canceled', { ...toOrder(row) }, at)
    if (rows.length < BATCH) {
      const scope = { tenant: fence.tenant_id, model: fence.model_id, up_to: fence.up_to, at: fence.canceled_at, incident: fence.incident_id }
      if (requestLiveCancels().run(scope).changes > 0) signalLiveWork()
      markSettled().run(now.toISOString(), fence.seq)
    }
    return true
  })
}

function settleAll(): void {
  while (settleBatch()) {
    /* until every fence is settled */
  }
}

let scheduled = false
/** One batch per turn of the event loop, after the current transaction has committed. */
function settleSoon(): void {
  if (scheduled) return
  scheduled = true
  setImmediate(function step() {
    try {
      if (settleBatch()) {
        setImmediate(step)
        return
      }
    } catch (error) {
      // A busy database (another process writing) or a closed one at shutdown: the sweep retries.
      log({ level: 'warn', msg: 'order cancellation settlement deferred', error: error instanceof Error ? error.message : String(error) })
    }
    scheduled = false
  })
}

/** Settles the kill switch's cancellation fences into order rows and events, after its commit. */
export const cancellationSettlement: Service = {
  name: 'order-cancellations',
  start() {
    // What a crash left unsettled is settled before the first answer (one query when nothing is).
    settleAll()
    const sweep = setInterval(settleSoon, SWEEP_MS)
    sweep.unref()
    return () => clearInterval(sweep)
  },
}
