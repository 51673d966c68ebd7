// The one reader of dates and date-times that come from outside: request bodies and query strings,
// CLI flags, CSV files. Date.parse is not trusted with them: it is lenient about forms, maps two-digit
// years, and happily returns instants past year 9999 whose ISO form ("+010000-...") then compares
// below every stored timestamp. So the text is checked field by field and the instant computed here.
//
// Accepted date-time: RFC 3339 as producers write it, YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)
// - an uppercase T and Z only: the lowercase t/z and the space separator that the RFC's notes allow
//   are refused (with a hint), so a value has one spelling and matches what toISOString, Go's
//   RFC3339 and the OpenAPI examples produce;
// - years 0000-9999, a real calendar day (proleptic Gregorian leap years), hours 00-23, minutes and
//   seconds 00-59: second 60 (a leap second) is refused, as JS time has no leap seconds and folding
//   it into the next second would silently move the value;
// - a fraction of any length, kept to the millisecond (see `exact`);
// - an offset of at most 23:59 either way, applied exactly; -00:00 is UTC. The instant must still
//   fall within years 0000-9999 in UTC once the offset is applied.
// Accepted date: YYYY-MM-DD with the same calendar rules.

export interface DateTimeValue {
  ok: true
  /** milliseconds since the epoch, the fraction cut to the millisecond */
  ms: number
  /** the normalised form every answer uses: YYYY-MM-DDTHH:MM:SS.sssZ */
  iso: string
  /** false when the fraction had non-zero digits below the millisecond */
  exact: boolean
}
export interface DateValue {
  ok: true
  date: string
  ms: number
}
export interface Refusal {
  ok: false
  reason: string
}

const DATE_SHAPE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME_SHAPE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/
const EXAMPLE = 'like 2026-11-22T00:05:00Z or 2026-11-22T23:00:00-02:00'

const MIN_MS = utcMs(0, 1, 1, 0, 0, 0, 0)
export const MAX_MS = utcMs(9999, 12, 31, 23, 59, 59, 999)

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/** Milliseconds of a UTC wall time; Date.UTC alone would read years 0-99 as 1900-1999. */
function utcMs(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number): number {
  const at = new Date(0)
  at.setUTCFullYear(year, month - 1, day)
  at.setUTCHours(hour, minute, second, ms)
  return at.getTime()
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

function calendarProblem(year: number, month: number, day: number): string | undefined {
  if (month < 1 || month > 12) return `has month ${pad(month)}; months are 01-12`
  const last = daysIn(year, month)
  if (day < 1 || day > last) return `has day ${pad(day)}; ${pad(year, 4)}-${pad(month)} has days 01-${last}`
  return undefined
}

function shapeProblem(text: string): string {
  if (/^\d{4}-\d{2}-\d{2}[t ]\d/.test(text)) return `must separate date and time with an uppercase T, ${EXAMPLE}`
  if (/^\d{4}-\d{2}-\d{2}T[\d:.]+z$/.test(text)) return `must end in an uppercase Z or an offset +HH:MM/-HH:MM, ${EXAMPLE}`
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(text)) return `has no offset; end it in Z (UTC) or +HH:MM/-HH:MM, ${EXAMPLE}`
  if (/^[+-]?\d{5,}-/.test(text)) return 'must have a four-digit year 0000-9999'
  return `must be an RFC 3339 date-time YYYY-MM-DDTHH:MM:SS[.fraction] with Z or an offset +HH:MM/-HH:MM, ${EXAMPLE}`
}

/** A calendar date YYYY-MM-DD, as the UTC midnight that starts it. */
export function parseDate(text: string): DateValue | Refusal {
  const m = DATE_SHAPE.exec(text)
  if (!m) return { ok: false, reason: /^[+-]?\d{5,}-/.test(text) ? 'must have a four-digit year 0000-9999' : 'must be a date YYYY-MM-DD' }
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const problem = calendarProblem(year, month, day)
  if (problem) return { ok: false, reason: problem }
  return { ok: true, date: text, ms: utcMs(year, month, day, 0, 0, 0, 0) }
}

/** An RFC 3339 date-time (see the top of this file for the exact rules). */
export function parseDateTime(text: string): DateTimeValue | Refusal {
  const m = DATE_TIME_SHAPE.exec(text)
  if (!m) return { ok: false, reason: shapeProblem(text) }
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number)
  const problem =
    calendarProblem(year, month, day) ??
    (hour > 23 ? `has hour ${pad(hour)}; hours are 00-23` : undefined) ??
    (minute > 59 ? `has minute ${pad(minute)}; minutes are 00-59` : undefined) ??
    (second === 60
      ? 'has second 60 (a leap second), which is not accepted; use 59'
      : second > 59
        ? `has second ${pad(second)}; seconds are 00-59`
        : undefined) ??
    offsetProblem(m[8], m[9], m[10])
  if (problem) return { ok: false, reason: problem }
  const fraction = m[7] ?? ''
  const offsetMinutes = m[8] ? (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10])) : 0
  // Local wall time minus the offset is UTC: 23:00-02:00 is 01:00Z the next day.
  const ms = utcMs(year, month, day, hour, minute, second, Number(fraction.slice(0, 3).padEnd(3, '0'))) - offsetMinutes * 60_000
  if (ms < MIN_MS || ms > MAX_MS) return { ok: false, reason: 'falls outside the years 0000-9999 in UTC once its offset is applied' }
  return { ok: true, ms, iso: new Date(ms).toISOString(), exact: !/[1-9]/.test(fraction.slice(3)) }
}

function offsetProblem(sign: string | undefined, hours: string | undefined, minutes: string | undefined): string | undefined {
  if (!sign) return undefined
  if (Number(hours) > 23 || Number(minutes) > 59) return `has offset ${sign}${hours}:${minutes}; an offset is at most 23:59 either way`
  return undefined
}

export function isDate(text: string): boolean {
  return parseDate(text).ok
}

export function isDateTime(text: string): boolean {
  return parseDateTime(text).ok
}

/** Why `text` is not a date, or undefined when it is one. */
export function dateProblem(text: string): string | undefined {
  const parsed = parseDate(text)
  return parsed.ok ? undefined : parsed.reason
}

/** Why `text` is not a date-time, or undefined when it is one. */
export function dateTimeProblem(text: string): string | undefined {
  const parsed = parseDateTime(text)
  return parsed.ok ? undefined : parsed.reason
}

/** The UTC calendar date of an instant, YYYY-MM-DD. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10)
}

/**
 * The calendar date `days` after `date` (before, when negative).
 *
 * @example
 * addDays('2026-02-28', 1) // '2026-03-01'
 */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)
}
