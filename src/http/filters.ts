// Query filters shared by list endpoints.
import type { Schema } from './schema.ts'
import { isDate, isDateTime } from './schema.ts'
import { validationError } from './errors.ts'

export const PAIR_PATTERN = '^[A-Z0-9]{1,20}/[A-Z0-9]{1,20}$'

export const pairFilter: Schema = { type: 'string', pattern: PAIR_PATTERN, description: 'BASE/QUOTE, e.g. BTC/USDT' }
export const sinceFilter: Schema = { type: 'string', maxLength: 40, description: 'ISO 8601 date or UTC timestamp; rows created at or after it' }

/** `since` as a comparable ISO timestamp. */
export function sinceTimestamp(since: string | undefined): string | undefined {
  if (since === undefined) return undefined
  if (isDate(since)) return `${since}T00:00:00.000Z`
  if (isDateTime(since)) return new Date(since).toISOString()
  throw validationError('since', 'must be a date YYYY-MM-DD or an ISO 8601 timestamp')
}
