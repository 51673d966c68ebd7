// What defineRoute infers, checked by `tsc --noEmit` (npm run check) and never run: every line under
// a @ts-expect-error must fail to compile, so a change that loosens the types from the schemas
// (params from the path, query and body from their schemas, the answer checked against `response`)
// fails the check.
import { defineRoute, Raw, RecordedRefusal, type RouteSpec } from '../../src/http/route.ts'
import { pageQuery } from '../../src/http/pagination.ts'
import { DomainError } from '../../src/shared/errors.ts'

const body = {
  type: 'object',
  required: ['n'],
  additionalProperties: false,
  properties: { n: { type: 'integer' }, note: { type: 'string', nullable: true } },
} as const
const answer = {
  type: 'object',
  required: ['id', 'side'],
  additionalProperties: false,
  properties: { id: { type: 'string' }, side: { type: 'string', enum: ['BUY', 'SELL'] }, at: { type: 'string', nullable: true } },
} as const
const spec = { method: 'POST', path: '/api/v1/things/:id/parts/:part', summary: 'a thing', tag: 'things', access: 'public' } as const

export const routes: RouteSpec[] = [
  defineRoute({
    ...spec,
    query: pageQuery,
    body,
    response: answer,
    handler: (ctx) => {
      const id: string = ctx.params.id
      const part: string = ctx.params.part
      // @ts-expect-error the path has no :other
      ctx.params.other
      const n: number = ctx.body.n
      const note: string | null | undefined = ctx.body.note
      // @ts-expect-error the body has no field m
      ctx.body.m
      const limit: number | undefined = ctx.query.limit
      // @ts-expect-error query parameters are all optional
      const cursor: string = ctx.query.cursor
      return { id: `${id}${part}${n}${note}${limit}${cursor}`, side: 'BUY' as const }
    },
  }),
  defineRoute({
    ...spec,
    response: answer,
    // @ts-expect-error a route without a body gets none
    handler: (ctx) => ({ id: ctx.body.n, side: 'BUY' as const }),
  }),
  defineRoute({
    ...spec,
    response: answer,
    // @ts-expect-error side is required
    handler: () => ({ id: 'x' }),
  }),
  defineRoute({
    ...spec,
    response: answer,
    // @ts-expect-error side is BUY or SELL
    handler: () => ({ id: 'x', side: 'HOLD' as const }),
  }),
  defineRoute({
    ...spec,
    response: answer,
    // @ts-expect-error at is a string or null
    handler: () => ({ id: 'x', side: 'SELL' as const, at: 1 }),
  }),
  // A JSON route may also answer Raw, or a RecordedRefusal, or a Promise of any of them.
  defineRoute({ ...spec, response: answer, handler: () => new Raw(503, 'application/json', '{}') }),
  defineRoute({ ...spec, response: answer, handler: () => new RecordedRefusal(new DomainError('not_found', 'no such thing')) }),
  defineRoute({
    ...spec,
    response: answer,
    handler: async () => {
      await Promise.resolve()
      return { id: 'x', side: 'SELL' as const, at: null }
    },
  }),
  // A route with `response: null` (a page, metrics) answers Raw only.
  defineRoute({ ...spec, response: null, handler: () => new Raw(200, 'text/plain', 'ok') }),
  // @ts-expect-error not Raw
  defineRoute({ ...spec, response: null, handler: () => ({ id: 'x' }) }),
  // @ts-expect-error the validator knows no oneOf: only the subset of src/http/schema.ts
  defineRoute({ ...spec, response: { oneOf: [{ type: 'string' }] }, handler: () => 'x' }),
]
