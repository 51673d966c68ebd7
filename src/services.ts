// Every background service registers itself on import; serve starts them all.
import { registerService } from './system/services.ts'
import { db } from './store/db.ts'
import { startMaintenance } from './store/maintenance.ts'
import type { Purge } from './store/retention.ts'
import { log } from './http/log.ts'
import { purgeExpired } from './http/idempotency.ts'
import { webhookPurges } from './webhooks/outbox.ts'
import './webhooks/sender.ts'
import './signals/scheduler.ts'
import './trading/cancellations.ts'

// What the upkeep deletes (SPEC section 8), in this order: deliveries before the events they hold.
// Signals, orders, trades and incidents are history and have no purge.
const purges: Purge[] = [
  { name: 'idempotency_keys', begin: ({ nowMs }) => (limit) => purgeExpired(nowMs, limit) },
  ...webhookPurges,
]

registerService({ name: 'maintenance', start: () => startMaintenance(db(), log, purges) })
