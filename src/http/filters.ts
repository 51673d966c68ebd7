// Query filters shared by list endpoints.
import type { Schema } from './schema.ts'
import { MAX_MS, parseDate, parseDateTime } from '../shared/dates.ts'
import { validationError } from '../shared/errors.ts'

export const PAIR_PATTERN = '^[A-Z0-9]{1,20}/[A-Z0-9]{1,20}$'

export const pairFilter = { type: 'string', pattern: PAIR_PATTERN, description: 'BASE/QUOTE, e.g. BTC/USDT' } as const satisfies Schema
export const sinceFilter = {
  type: 'string',
  maxLength: 40,
  description:
    'a date YYYY-MM-DD (its 00:00 UTC) or an RFC 3339 date-time with Z or an offset of at most 23:59 (2026-11-22T23:00:00-02:00 is 2026-11-23T01:00:00Z); rows created at or after it',
} as const satisfies Schema

/** `since` as a comparable ISO timestamp (the stored form, YYYY-MM-DDTHH:MM:SS.sssZ). */
export function sinceTimestamp(since: string | undefined): string | undefined {
  if (since === undefined) return undefined
  if (/^\d{4}-\d{2}-\d{2}$/.test(since)) {
    const date = parseDate(since)
    if (!date.ok) throw validationError('since', date.reason)
    return new Date(date.ms).toISOString()
  }
  const at = parseDateTime(since)
  if (!at.ok) throw validationError('since', at.reason.startsWith('must be ') ? `must be a date YYYY-MM-DD or ${at.reason.slice(8)}` : at.reason)
  // Rows are stored to the millisecond: "at or after" a sub-millisecond instant starts at the next one.
  return at.exact ? at.iso : new Date(Math.min(at.ms + 1, MAX_MS)).toISOString()
}
