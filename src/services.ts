// Every background service registers itself on import; serve starts them all.
import { registerService } from './system/services.ts'
import { db } from './store/db.ts'
import { startMaintenance } from './store/maintenance.ts'
import './webhooks/sender.ts'
import './signals/scheduler.ts'
import './trading/cancellations.ts'

registerService({ name: 'maintenance', start: () => startMaintenance(db()) })
