import { defineRoute, type RouteSpec } from '../http/route.ts'
import { listPage, pageQuery } from '../http/pagination.ts'
import { exportChain, incidentSchema, listIncidents, verificationSchema, verifyChain } from './incidents.ts'
import { riskProfile, riskProfileChangeSchema, riskProfileSchema, updateRiskProfile } from './profile.ts'

/** Reading the tenant's risk state: its profile, incidents, equity and switches. */
export const riskRead = { scopes: ['risk:read', 'risk:admin'] } as const

const getRiskProfile = defineRoute({
  method: 'GET',
  path: '/api/v1/risk/profile',
  summary: "The tenant's risk limits and kill switch state",
  tag: 'risk',
  access: riskRead,
  errors: ['not_found'],
  response: riskProfileSchema,
  handler: (ctx) => riskProfile(ctx.db, ctx.principal.tenantId),
})

const patchRiskProfile = defineRoute({
  method: 'PATCH',
  path: '/api/v1/risk/profile',
  summary: 'Changes risk limits; records a RISK_PROFILE_UPDATED incident',
  tag: 'risk',
  access: { scopes: ['risk:admin'], write: true },
  errors: ['not_found'],
  body: riskProfileChangeSchema,
  response: riskProfileSchema,
  handler: (ctx) => updateRiskProfile(ctx.tx, ctx.principal.tenantId, ctx.body, ctx.principal.email, ctx.now),
})

const getRiskIncidents = defineRoute({
  method: 'GET',
  path: '/api/v1/risk/incidents',
  summary: 'The incident trail, newest first',
  tag: 'risk',
  access: riskRead,
  errors: ['validation_failed'],
  query: pageQuery,
  response: { type: 'array', items: incidentSchema },
  handler: (ctx) => {
    return listPage(ctx, (before, limit) => listIncidents(ctx.db, ctx.principal.tenantId, before, limit))
  },
})

const getRiskIncidentsVerify = defineRoute({
  method: 'GET',
  path: '/api/v1/risk/incidents/verify',
  summary: "Recomputes the tenant's incident hash chain; with head, also checks it still holds that record",
  tag: 'risk',
  access: riskRead,
  query: {
    head: {
      type: 'string',
      pattern: '^[0-9a-fA-F]{64}$',
      description:
        'an incident hash kept outside the service (from a risk.* webhook event or an earlier verify): valid only if the recomputed chain contains it',
    },
  },
  response: verificationSchema,
  handler: (ctx) => verifyChain(ctx.db, ctx.principal.tenantId, ctx.query.head?.toLowerCase()),
})

const getRiskIncidentsExport = defineRoute({
  method: 'GET',
  path: '/api/v1/risk/incidents/export',
  summary: 'The whole incident chain, oldest first, with every field the hashes cover',
  tag: 'risk',
  access: riskRead,
  response: { type: 'array', items: incidentSchema },
  handler: (ctx) => exportChain(ctx.db, ctx.principal.tenantId),
})

/** This feature's routes, in the order the router tries them. */
export const riskRoutes: RouteSpec[] = [getRiskProfile, patchRiskProfile, getRiskIncidents, getRiskIncidentsVerify, getRiskIncidentsExport]
