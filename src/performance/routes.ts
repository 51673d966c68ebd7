import { defineRoute, type RouteSpec } from '../http/route.ts'
import { ReadCache } from '../http/read-cache.ts'
import { validationError } from '../shared/errors.ts'
import { MODEL_ID_PATTERN } from '../models/catalogue.ts'
import { equityPointSchema, metricsSchema, positionSchema } from './metrics.ts'
import { forwardPerformance } from './forward.ts'

// The same answer for every caller: a function of the model, the window and the database only.
const cache = new ReadCache()

const day = (description: string) => ({ type: 'string', format: 'date', description }) as const

const getPerformance = defineRoute({
  method: 'GET',
  path: '/api/v1/models/:id/performance',
  summary: "A model's forward track record: its portfolio over the signals it published, with metrics and the equity curve",
  tag: 'models',
  access: {},
  errors: ['not_found', 'validation_failed'],
  query: {
    from: day('first as_of counted (default: the first signal)'),
    to: day('last day counted (default: the last close of the universe)'),
  },
  response: {
    type: 'object',
    additionalProperties: false,
    required: ['model_id', 'from', 'to', 'metrics', 'equity', 'positions'],
    properties: {
      model_id: { type: 'string', pattern: MODEL_ID_PATTERN },
      from: { type: 'string', format: 'date', nullable: true, description: "the curve's first day; null with no curve and no from" },
      to: { type: 'string', format: 'date', nullable: true, description: "the curve's last day; null with no curve and no to" },
      metrics: metricsSchema,
      equity: { type: 'array', items: equityPointSchema },
      positions: { type: 'array', items: positionSchema },
    },
  },
  handler: (ctx) => {
    const { from, to } = ctx.query
    if (from !== undefined && to !== undefined && from > to) throw validationError('from', `must not be after to (${from} > ${to})`)
    return cache.answer(ctx.store, `${ctx.params.id}\n${from ?? ''}\n${to ?? ''}`, async () => ({
      body: await forwardPerformance(ctx.db, ctx.params.id, from, to),
    }))
  },
})

/** This feature's routes, in the order the router tries them. */
export const performanceRoutes: RouteSpec[] = [getPerformance]
