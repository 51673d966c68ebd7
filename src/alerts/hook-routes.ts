// STUB: the alert-hooks helper replaces this file (POST/GET/DELETE /api/v1/alert-hooks, GET /api/v1/alert-hooks/{id}/alerts).
import type { Config } from '../config.ts'
import type { RouteSpec } from '../http/route.ts'
import type { SecretBox } from '../store/secret-box.ts'

/** This feature's routes; secrets are sealed in `secrets`, hook URLs built from config's --public-url. */
export function alertHookRoutes(_config: Config, _secrets: () => SecretBox): RouteSpec[] {
  return []
}
