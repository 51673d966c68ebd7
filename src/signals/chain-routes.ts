// The signal chain over HTTP (SPEC 11): each model's head in public, and a subscriber's export of a
// model's whole chain, with every field the hashes cover, to be verified against a head it holds.
import { defineRoute, type RouteSpec } from '../http/route.ts'
import { DomainError, validationError } from '../shared/errors.ts'
import { catalogue, MODEL_ID_PATTERN } from '../models/catalogue.ts'
import { activeModelIds } from '../tenants/workspace.ts'
import { chainedSignalSchema, chainHead, chainHeadSchema, exportChain, headAfter } from './chain.ts'

const publicModelSchema = {
  type: 'object',
  required: ['id', 'name', 'version', 'hash', 'signal_chain'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: MODEL_ID_PATTERN },
    name: { type: 'string' },
    version: { type: 'string' },
    hash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'sha256_hex(canonical_json({id, version, parameters}))' },
    signal_chain: chainHeadSchema,
  },
} as const

const getPublicModels = defineRoute({
  method: 'GET',
  path: '/api/v1/public/models',
  summary: 'Every active model with the head of its signal chain, to check an export against (no credential)',
  tag: 'public',
  access: 'public',
  errors: ['not_found'], // serve --no-public-feed
  response: { type: 'array', items: publicModelSchema },
  handler: async (ctx) => {
    ctx.headers['Cache-Control'] = 'no-cache'
    ctx.headers['Access-Control-Allow-Origin'] = '*'
    const models = []
    for (const m of await catalogue(ctx.db)) {
      models.push({ id: m.id, name: m.name, version: m.version, hash: m.hash, signal_chain: await chainHead(ctx.db, m.id) })
    }
    return models
  },
})

const getSignalsExport = defineRoute({
  method: 'GET',
  path: '/api/v1/signals/export',
  summary: "A model's whole signal chain, oldest first, with every field its hashes cover",
  tag: 'signals',
  access: { scopes: ['signals:read'] },
  errors: ['not_found', 'validation_failed'],
  query: { model_id: { type: 'string', maxLength: 64, pattern: MODEL_ID_PATTERN, description: 'required: a model active in the workspace' } },
  response: {
    type: 'object',
    required: ['model_id', 'signal_chain', 'signals'],
    additionalProperties: false,
    properties: { model_id: { type: 'string' }, signal_chain: chainHeadSchema, signals: { type: 'array', items: chainedSignalSchema } },
  },
  handler: async (ctx) => {
    const modelId = ctx.query.model_id
    if (modelId === undefined) throw validationError('model_id', 'is required: the model whose signal chain to export')
    if (!(await activeModelIds(ctx.db, ctx.principal.tenantId)).includes(modelId)) {
      throw new DomainError('not_found', `model ${modelId} is not active in this workspace`)
    }
    const signals = await exportChain(ctx.db, modelId)
    // The head of these very rows: a publish committed between two reads cannot make them disagree.
    return { model_id: modelId, signal_chain: headAfter(signals), signals }
  },
})

/** The chain's routes, in the order the router tries them; the public list answers 404 with the feed off (--no-public-feed). */
export function chainRoutes(publicFeed: boolean): RouteSpec[] {
  const publicModels: RouteSpec = publicFeed
    ? getPublicModels
    : {
        ...getPublicModels,
        handler: () => {
          throw new DomainError('not_found', 'the public feed is turned off on this server')
        },
      }
  return [getSignalsExport, publicModels]
}
