import { defineRoute } from '../http/route.ts'
import { catalogue, modelSchema } from './catalogue.ts'

defineRoute({
  method: 'GET',
  path: '/api/v1/models',
  summary: 'The model catalogue: every active model with its universe, parameters and hash',
  tag: 'models',
  access: {},
  response: { type: 'array', items: modelSchema },
  handler: () => catalogue(),
})
