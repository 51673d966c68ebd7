// The one table from an error code (src/shared/errors.ts) to its HTTP status and problem title;
// src/http/problem.ts writes the answer from it. `satisfies` keeps it complete: a new code without
// a row here does not compile.
import type { ErrorCode } from '../shared/errors.ts'

export const ERROR_CODES = {
  invalid_json: [400, 'Invalid JSON'],
  validation_failed: [400, 'Validation failed'],
  unknown_field: [400, 'Unknown field'],
  alert_stale: [400, 'Stale alert'],
  unauthenticated: [401, 'Unauthenticated'],
  alert_unauthorized: [401, 'Alert secret not accepted'],
  insufficient_scope: [403, 'Insufficient scope'],
  session_required: [403, 'User session required'],
  forbidden_role: [403, 'Role not allowed'],
  plan_forbids: [403, 'Plan does not allow this'],
  source_forbidden: [403, 'Sender address not allowed'],
  not_found: [404, 'Not found'],
  method_not_allowed: [405, 'Method not allowed'],
  idempotency_conflict: [409, 'Idempotency key reused'],
  trading_paused: [409, 'Trading paused'],
  breaker_engaged: [409, 'Circuit breaker engaged'],
  dead_man_switch_not_armed: [409, "Dead man's switch not armed"],
  plan_limit_exceeded: [409, 'Plan limit exceeded'],
  backtest_queue_full: [409, 'Backtest queue full'],
  venue_not_connected: [409, 'No venue connected'],
  live_orders_open: [409, 'LIVE orders still open'],
  payload_too_large: [413, 'Payload too large'],
  unsupported_media_type: [415, 'Unsupported media type'],
  risk_limit_exceeded: [422, 'Risk limit exceeded'],
  invalid_parameters: [422, 'Invalid parameters'],
  venue_key_unsafe: [422, 'Venue key can withdraw'],
  venue_rejected: [422, 'Rejected by the venue'],
  venue_unavailable: [503, 'Venue unavailable'],
  no_price: [422, 'No price'],
  rate_limited: [429, 'Too many requests'],
  internal: [500, 'Internal error'],
  service_unavailable: [503, 'Service unavailable'],
  database_busy: [503, 'Database busy'],
  database_unavailable: [503, 'Database unavailable'],
} as const satisfies Record<ErrorCode, readonly [number, string]>

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code][0]
}
