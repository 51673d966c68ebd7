import { defineRoute, type RouteSpec } from '../http/route.ts'
import { riskRead } from './routes.ts'
import {
  armDeadManSwitch,
  deadManSwitch,
  deadManSwitchRequestSchema,
  deadManSwitchSchema,
  disarmDeadManSwitch,
  heartbeatDeadManSwitch,
} from './dead-man-switch.ts'

const PATH = '/api/v1/risk/dead-man-switch'

const putDeadManSwitch = defineRoute({
  method: 'PUT',
  path: PATH,
  summary: "Arms the dead man's switch, or re-arms it with a new timeout; records a DEAD_MAN_SWITCH_ARMED incident",
  tag: 'risk',
  access: { scopes: ['risk:admin'], write: true },
  errors: ['validation_failed'],
  body: deadManSwitchRequestSchema,
  response: deadManSwitchSchema,
  handler: (ctx) => armDeadManSwitch(ctx.tx, ctx.principal.tenantId, ctx.body, ctx.principal.email, ctx.now),
})

const postDeadManSwitchHeartbeat = defineRoute({
  method: 'POST',
  path: `${PATH}/heartbeat`,
  summary: "Pushes the dead man's switch's deadline to now + its timeout; a heartbeat after the deadline fires it instead",
  tag: 'risk',
  // The trading bot itself sends it, with its orders:write key.
  access: { scopes: ['risk:admin', 'orders:write'], write: true },
  errors: ['dead_man_switch_not_armed'],
  // Queued behind other requests, a heartbeat could miss the deadline it was sent in time for.
  urgent: true,
  response: deadManSwitchSchema,
  handler: (ctx) => heartbeatDeadManSwitch(ctx.tx, ctx.principal.tenantId, ctx.now),
})

const deleteDeadManSwitch = defineRoute({
  method: 'DELETE',
  path: PATH,
  summary: "Disarms the dead man's switch (a DEAD_MAN_SWITCH_DISARMED incident); one that is not armed is answered unchanged",
  tag: 'risk',
  access: { scopes: ['risk:admin'], write: true },
  response: deadManSwitchSchema,
  handler: (ctx) => disarmDeadManSwitch(ctx.tx, ctx.principal.tenantId, ctx.principal.email, ctx.now),
})

const getDeadManSwitch = defineRoute({
  method: 'GET',
  path: PATH,
  summary: "The dead man's switch and its deadline (DISARMED, with nulls, if it was never armed)",
  tag: 'risk',
  access: riskRead,
  response: deadManSwitchSchema,
  handler: (ctx) => deadManSwitch(ctx.db, ctx.principal.tenantId),
})

/** This feature's routes, in the order the router tries them. */
export const deadManSwitchRoutes: RouteSpec[] = [getDeadManSwitch, putDeadManSwitch, postDeadManSwitchHeartbeat, deleteDeadManSwitch]
