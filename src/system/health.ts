import { DatabaseUnavailableError } from '../store/store.ts'
import type { FromSchema } from 'json-schema-to-ts'
import { defineRoute, Raw, type RouteSpec } from '../http/route.ts'
import type { Schema } from '../http/schema.ts'
import { VERSION } from '../version.ts'
import { incidentTriggersState } from '../risk/integrity.ts'
import type { Queries } from '../store/store.ts'

/** What other features report through health and metrics, handed in by src/app.ts; each reads through `db`. */
export interface HealthSources {
  /** This node's background services: run here under their lease, or standby while another node holds it. */
  leases(): Record<string, 'held' | 'standby'>
  nextPublishAt(db: Queries): Promise<string | null>
  webhookBacklog(db: Queries): Promise<number>
  /** Each exchange reached since start: ok, or degraded after calls that got no answer or while a mark on it is stale. */
  venues(db: Queries): Promise<Record<string, 'ok' | 'degraded'>>
}

const healthSchema = {
  type: 'object',
  required: ['status', 'version', 'database', 'next_publish_at', 'webhook_backlog', 'incident_triggers', 'venues', 'leases'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['HEALTHY', 'DEGRADED'] },
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' },
    database: {
      type: 'string',
      enum: ['ok', 'busy', 'read_only', 'unavailable'],
      description:
        'busy: another process holds the write lock of the embedded SQLite database (writes wait for it, up to 5 s each); unavailable: PostgreSQL does not answer',
    },
    next_publish_at: { type: 'string', format: 'date-time', nullable: true },
    webhook_backlog: { type: 'integer' },
    incident_triggers: {
      type: 'string',
      enum: ['ok', 'restored'],
      description:
        'restored: this start found the immutability triggers of the incident trail missing or altered and put them back (see the INTEGRITY_TRIGGERS_RESTORED incident)',
    },
    venues: {
      type: 'object',
      properties: {},
      additionalProperties: { type: 'string', enum: ['ok', 'degraded'] },
      description:
        'each exchange reached since start (market data, trading), by ccxt id: degraded after calls that got no answer (down, timeout, 5xx, 429), and while a LIVE position on it is valued at a venue mark older than 180 s; does not change status',
    },
    leases: {
      type: 'object',
      properties: {},
      additionalProperties: { type: 'string', enum: ['held', 'standby'] },
      description:
        "each background service by name: held (it runs on this node, under its lease) or standby (another node holds it; this one takes it within 10 s of that node's death). On SQLite every service is held",
    },
  },
} as const satisfies Schema
type Health = FromSchema<typeof healthSchema>

/** GET /api/v1/health. */
export function healthRoutes(sources: HealthSources): RouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/health',
      summary:
        'Service health: HEALTHY, or DEGRADED with 503 when the database cannot be written (read-only, locked by another process for 5 s, or a PostgreSQL that does not answer)',
      tag: 'system',
      access: 'public',
      errors: [{ status: 503, description: 'DEGRADED: the database cannot be written' }],
      response: healthSchema,
      handler: async (ctx) => {
        // Another process holding SQLite's lock is busy (the server still works, writes wait for it);
        // degraded once writes have waited as long as one may.
        let { state, degraded: down } = await ctx.store.health()
        // The parts read from the database: when it cannot answer, health still does, DEGRADED.
        let read = { next: null as string | null, backlog: 0, venues: {} as Record<string, 'ok' | 'degraded'> }
        if (state !== 'unavailable') {
          try {
            read = { next: await sources.nextPublishAt(ctx.db), backlog: await sources.webhookBacklog(ctx.db), venues: await sources.venues(ctx.db) }
          } catch (error) {
            if (!(error instanceof DatabaseUnavailableError)) throw error
            state = 'unavailable'
            down = true
          }
        }
        const body: Health = {
          status: down ? 'DEGRADED' : 'HEALTHY',
          version: VERSION,
          database: state,
          next_publish_at: read.next,
          webhook_backlog: read.backlog,
          incident_triggers: incidentTriggersState(),
          venues: read.venues,
          leases: sources.leases(),
        }
        return down ? new Raw(503, 'application/json; charset=utf-8', JSON.stringify(body)) : body
      },
    }),
  ]
}
