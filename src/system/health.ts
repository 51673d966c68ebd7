import { defineRoute, Raw } from '../http/route.ts'
import { db, statement } from '../store/db.ts'
import { VERSION } from '../version.ts'

/** Later capabilities (publisher, webhook sender) report their state here. */
export const healthExtras: { nextPublishAt: () => string | null; webhookBacklog: () => number } = {
  nextPublishAt: () => null,
  webhookBacklog: () => 0,
}

const begin = statement('BEGIN IMMEDIATE')
const rollback = statement('ROLLBACK')

/** Takes and releases the write lock, waiting at most 200 ms, so health never stalls the server. */
function databaseWritable(): boolean {
  const conn = db()
  try {
    conn.pragma('busy_timeout = 200')
    begin().run()
    rollback().run()
    return true
  } catch {
    return false
  } finally {
    conn.pragma('busy_timeout = 5000')
  }
}

defineRoute({
  method: 'GET',
  path: '/api/v1/health',
  summary: 'Service health: HEALTHY, or DEGRADED with 503 when the database cannot be written',
  tag: 'system',
  access: 'public',
  response: {
    type: 'object', required: ['status', 'version', 'database', 'next_publish_at', 'webhook_backlog'], additionalProperties: false,
    properties: {
      status: { type: 'string', enum: ['HEALTHY', 'DEGRADED'] },
      version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' },
      database: { type: 'string', enum: ['ok', 'read_only'] },
      next_publish_at: { type: 'string', format: 'date-time', nullable: true },
      webhook_backlog: { type: 'integer' },
    },
  },
  handler: () => {
    const writable = databaseWritable()
    const body = {
      status: writable ? 'HEALTHY' : 'DEGRADED',
      version: VERSION,
      database: writable ? 'ok' : 'read_only',
      next_publish_at: healthExtras.nextPublishAt(),
      webhook_backlog: healthExtras.webhookBacklog(),
    }
    return writable ? body : new Raw(503, 'application/json; charset=utf-8', JSON.stringify(body))
  },
})
