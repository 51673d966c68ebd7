// STUB: the keys helper replaces this file (POST/GET/DELETE /api/v1/gateway/keys).
import type { SecretBox } from '../store/secret-box.ts'
import type { RouteSpec } from '../http/route.ts'

/** This feature's routes; secrets are sealed in `secrets`. */
export function gatewayKeyRoutes(_secrets: () => SecretBox): RouteSpec[] {
  return []
}
