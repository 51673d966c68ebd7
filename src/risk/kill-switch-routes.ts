import { defineRoute, type RouteSpec } from '../http/route.ts'
import { killSwitchRequestSchema, killSwitchResultSchema, operateKillSwitch } from './kill-switch.ts'

const postRiskKillSwitch = defineRoute({
  method: 'POST',
  path: '/api/v1/risk/kill-switch',
  summary: 'Halts, cancels, flattens or resumes trading for the fleet or one model; the flip, the cancellations and the incident are one transaction',
  tag: 'risk',
  access: { scopes: ['risk:admin'], write: true },
  errors: ['validation_failed', 'not_found', 'breaker_engaged'],
  urgent: true,
  body: killSwitchRequestSchema,
  response: killSwitchResultSchema,
  handler: (ctx) => operateKillSwitch(ctx.tx, ctx.principal.tenantId, ctx.body, ctx.principal.email, ctx.now),
})

/** This feature's routes, in the order the router tries them. */
export const killSwitchRoutes: RouteSpec[] = [postRiskKillSwitch]
