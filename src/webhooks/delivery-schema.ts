// What the API shows of a delivery (a row of table webhook_deliveries, src/webhooks/outbox.ts), and
// its type, apart from the outbox so that the outbox can take its Delivery type from here.
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'

export const DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED'] as const

export const deliverySchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'webhook_id',
    'event_id',
    'event_type',
    'status',
    'attempts',
    'next_attempt_at',
    'last_attempt_at',
    'last_status_code',
    'last_error',
    'delivered_at',
    'redelivery_of',
    'created_at',
  ],
  properties: {
    id: { type: 'string', pattern: '^dlv_', description: 'the X-Service-Delivery header, stable across retries' },
    webhook_id: { type: 'string', pattern: '^wh_' },
    event_id: { type: 'string', pattern: '^evt_', description: 'the body id, the same in every delivery of this event' },
    event_type: { type: 'string' },
    status: { type: 'string', enum: DELIVERY_STATUSES },
    attempts: { type: 'integer', minimum: 0, description: 'attempts made so far (at most 8)' },
    next_attempt_at: { type: 'string', format: 'date-time', nullable: true, description: 'when the next attempt is due; null once SUCCEEDED or FAILED' },
    last_attempt_at: { type: 'string', format: 'date-time', nullable: true },
    last_status_code: { type: 'integer', nullable: true },
    last_error: { type: 'string', nullable: true },
    delivered_at: { type: 'string', format: 'date-time', nullable: true },
    redelivery_of: { type: 'string', pattern: '^dlv_', nullable: true },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const satisfies Schema

export type Delivery = FromSchema<typeof deliverySchema>
export type DeliveryStatus = Delivery['status']
