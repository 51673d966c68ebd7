// A refusal anywhere in Bulwark is a DomainError: a code from this closed list and a precise detail.
// Domain code knows no HTTP; the adapter alone maps each code to its status and title (the one
// table in src/http/errors.ts, which must name every code) and writes RFC 9457 problem+json.
export type ErrorCode =
  | 'invalid_json'
  | 'validation_failed'
  | 'alert_stale'
  | 'unknown_field'
  | 'unauthenticated'
  | 'alert_unauthorized'
  | 'insufficient_scope'
  | 'session_required'
  | 'forbidden_role'
  | 'plan_forbids'
  | 'source_forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'idempotency_conflict'
  | 'trading_paused'
  | 'breaker_engaged'
  | 'dead_man_switch_not_armed'
  | 'plan_limit_exceeded'
  | 'backtest_queue_full'
  | 'invalid_parameters'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'risk_limit_exceeded'
  | 'venue_key_unsafe'
  | 'venue_rejected'
  | 'venue_unavailable'
  | 'venue_not_connected'
  | 'live_orders_open'
  | 'no_price'
  | 'rate_limited'
  | 'internal'
  | 'service_unavailable'
  | 'database_busy'
  | 'database_unavailable'

export interface FieldError {
  field: string
  message: string
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    /** `errors`: one entry per bad field; `headers`: what the answer must carry (Retry-After, ...). */
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail)
  }
}

export function validationError(field: string, message: string): DomainError {
  return new DomainError('validation_failed', `${field}: ${message}`, { errors: [{ field, message }] })
}

export function notFound(what: string): DomainError {
  return new DomainError('not_found', `${what} not found`)
}
