import { defineRoute, type RouteSpec } from '../http/route.ts'
import { listPage, pageQuery } from '../http/pagination.ts'
import { backtestRequestSchema, backtestSchema, getBacktest, listBacktests, queueBacktest } from './backtests.ts'
import { backtestQueued } from './runner.ts'

const postBacktest = defineRoute({
  method: 'POST',
  path: '/api/v1/backtests',
  summary: "Queues a backtest of a model over past days, with its parameters or others; it runs when none of the workspace's is RUNNING",
  tag: 'backtests',
  access: {},
  errors: ['not_found', 'validation_failed', 'invalid_parameters', 'backtest_queue_full'],
  body: backtestRequestSchema,
  response: backtestSchema,
  handler: async (ctx) => {
    const backtest = await queueBacktest(ctx.tx, ctx.principal.tenantId, ctx.body, ctx.now)
    ctx.tx.afterCommit(backtestQueued)
    return backtest
  },
})

const getOne = defineRoute({
  method: 'GET',
  path: '/api/v1/backtests/:id',
  summary: 'A backtest: its status, and once SUCCEEDED its metrics, equity curve, trades and result_hash',
  tag: 'backtests',
  access: {},
  errors: ['not_found'],
  query: { include: { type: 'string', enum: ['actions'], description: 'actions: also each pair’s action per day, one letter a day (E, H, X, - for none)' } },
  response: backtestSchema,
  handler: (ctx) => getBacktest(ctx.db, ctx.principal.tenantId, ctx.params.id, ctx.query.include === 'actions'),
})

const getList = defineRoute({
  method: 'GET',
  path: '/api/v1/backtests',
  summary: "The workspace's backtests, newest first, without their results",
  tag: 'backtests',
  access: {},
  errors: ['validation_failed'],
  query: pageQuery,
  response: { type: 'array', items: backtestSchema },
  handler: (ctx) => listPage(ctx, (before, limit) => listBacktests(ctx.db, ctx.principal.tenantId, before, limit)),
})

/** This feature's routes, in the order the router tries them. */
export const backtestRoutes: RouteSpec[] = [postBacktest, getList, getOne]
