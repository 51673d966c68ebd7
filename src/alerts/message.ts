// An alert's message (SPEC 16) as TradingView and its kin send it: a JSON object whose values are
// often placeholders substituted into text ({{close}}, {{timenow}}, {{strategy.order.action}}), so
// numbers may come as strings, sides in lower case and pairs without a slash. Read here into an
// order's terms; every refusal names the field it is about.
import { nodeCrypto } from '../shared/crypto.ts'
import { parseDateTime } from '../shared/dates.ts'
import { DomainError, validationError } from '../shared/errors.ts'
import { findTextProblem } from '../shared/text.ts'

/** The message's own fields; anything else is refused (a typo like "qty" must not close a position). */
export const MESSAGE_FIELDS = ['secret', 'id', 'pair', 'side', 'type', 'price', 'quantity', 'notional_usd', 'timestamp'] as const

export type Envelope = Record<string, unknown>

/** An alert read into an order's terms. */
export interface AlertMessage {
  /** The sender's id of the alert: the same id twice within 24 h is a duplicate. */
  id: string
  pair: string
  side: 'BUY' | 'SELL'
  type: 'MARKET' | 'LIMIT'
  price?: number
  quantity?: number
  notional_usd?: number
  /** When the sender says it fired, epoch ms; absent when the message has no timestamp. */
  timestampMs?: number
}

/**
 * Quote currencies a pair written without a slash is split by, longest first so that ETHTUSD is
 * ETH/TUSD and not ETHT/USD.
 */
const QUOTES = ['FDUSD', 'USDT', 'USDC', 'TUSD', 'BUSD', 'USDP', 'USD', 'DAI', 'EUR', 'GBP', 'TRY', 'BRL', 'JPY', 'AUD', 'BTC', 'ETH', 'BNB']
const ASSET = /^[A-Z0-9]{1,20}$/
const DECIMAL = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/
const MAX_AMOUNT = 1e12
const MAX_ID_LENGTH = 128
/** Epoch values below this are seconds (year 5138 in ms): refused with a hint rather than read as 1970. */
const SECONDS_BELOW = 1e11
/** How far ahead of this server's clock a sender's timestamp may be: clocks differ by a little. */
export const FUTURE_TOLERANCE_MS = 5_000

const decoder = new TextDecoder('utf-8', { fatal: true })

function badBody(detail: string): DomainError {
  return new DomainError('invalid_json', detail, { errors: [{ field: 'body', message: detail }] })
}

/** The body as a JSON object, whatever its Content-Type said (TradingView's text/plain included). */
export function readEnvelope(body: Buffer): Envelope {
  let text: string
  try {
    text = decoder.decode(body)
  } catch {
    throw badBody('the body is not valid UTF-8')
  }
  if (text.trim() === '') throw badBody('the body is empty: send the alert message, a JSON object')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw badBody(
      `the body is not JSON: ${(error as Error).message.slice(0, 200)}; the message must be a JSON object like {"secret": ..., "id": ..., "pair": ...}`,
    )
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badBody('the body must be a JSON object')
  const problem = findTextProblem(value)
  if (problem) throw validationError(problem.field, problem.message)
  return value as Envelope
}

const digest = (text: string) => nodeCrypto().createHash('sha256').update(text, 'utf8').digest()

/** Whether the message carries the hook's secret; in constant time (digests of equal length). */
export function secretMatches(envelope: Envelope, secret: string): boolean {
  const given = envelope.secret
  return typeof given === 'string' && nodeCrypto().timingSafeEqual(digest(given), digest(secret))
}

/** The message as it came, its secret taken out: what the alert log keeps. */
export function withoutSecret(envelope: Envelope): string {
  const { secret: _secret, ...rest } = envelope
  return JSON.stringify(rest)
}

/** The message's id for the log even when the message is refused: undefined unless usable. */
export function alertIdOf(envelope: Envelope): string | undefined {
  try {
    return readId(envelope.id)
  } catch {
    return undefined
  }
}

function readId(value: unknown): string {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value)
  if (typeof value !== 'string' || value.trim() === '')
    throw validationError('id', 'is required: a string naming this alert (a repeat within 24 h places nothing)')
  if (value.length > MAX_ID_LENGTH) throw validationError('id', `is longer than ${MAX_ID_LENGTH} characters`)
  return value
}

/** BTC/USDT, btc/usdt or BTCUSDT as BTC/USDT. */
export function readPair(value: unknown): string {
  if (typeof value !== 'string') throw validationError('pair', 'is required: BASE/QUOTE like BTC/USDT, or BTCUSDT')
  const text = value.trim().toUpperCase()
  const slash = text.split('/')
  if (slash.length === 2 && ASSET.test(slash[0]) && ASSET.test(slash[1])) return text
  if (slash.length === 1 && ASSET.test(text)) {
    const quote = QUOTES.find((q) => text.endsWith(q) && text.length > q.length)
    if (quote) return `${text.slice(0, -quote.length)}/${quote}`
  }
  throw validationError(
    'pair',
    `${JSON.stringify(value.slice(0, 40))} is not a pair: write BASE/QUOTE like BTC/USDT, or BTCUSDT with a quote of ${QUOTES.join(', ')}`,
  )
}

function readChoice<T extends string>(field: string, value: unknown, choices: readonly T[]): T {
  const upper = typeof value === 'string' ? value.trim().toUpperCase() : undefined
  const found = choices.find((c) => c === upper)
  if (found) return found
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : JSON.stringify(value)
  throw validationError(field, `must be ${choices.map((c) => `"${c.toLowerCase()}"`).join(' or ')}${value === undefined ? '' : `, not ${shown}`}`)
}

/** A positive amount, as a JSON number or a numeric string ("0.015", what a placeholder writes). */
function readAmount(field: string, value: unknown): number | undefined {
  if (value === undefined) return undefined
  const number = typeof value === 'number' ? value : typeof value === 'string' && DECIMAL.test(value.trim()) ? Number(value.trim()) : Number.NaN
  if (!Number.isFinite(number) || number <= 0 || number > MAX_AMOUNT) {
    const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : JSON.stringify(value)
    throw validationError(field, `must be a number above 0 and at most ${MAX_AMOUNT} (a JSON number or a numeric string), not ${shown}`)
  }
  return number
}

/** ISO 8601 (RFC 3339, as {{timenow}} writes it) or epoch milliseconds, as a number or digits. */
function readTimestamp(value: unknown): number | undefined {
  if (value === undefined) return undefined
  const digits = typeof value === 'string' && /^\d{1,16}$/.test(value.trim()) ? Number(value.trim()) : undefined
  const epoch = typeof value === 'number' ? value : digits
  if (epoch !== undefined) {
    if (!Number.isSafeInteger(epoch) || epoch < 0) throw validationError('timestamp', 'epoch milliseconds must be a whole number of at least 0')
    if (epoch < SECONDS_BELOW)
      throw validationError('timestamp', `${epoch} looks like epoch seconds; give epoch milliseconds or ISO 8601 like 2024-01-31T12:00:00Z`)
    return epoch
  }
  if (typeof value !== 'string') throw validationError('timestamp', 'must be ISO 8601 like 2024-01-31T12:00:00Z or epoch milliseconds')
  const parsed = parseDateTime(value.trim())
  if (!parsed.ok) throw validationError('timestamp', `${JSON.stringify(value.slice(0, 40))} ${parsed.reason}; or give epoch milliseconds`)
  return parsed.ms
}

/** The message's order terms; a refusal names its field (400 validation_failed or unknown_field). */
export function parseAlert(envelope: Envelope): AlertMessage {
  const unknown = Object.keys(envelope).filter((key) => !(MESSAGE_FIELDS as readonly string[]).includes(key))
  if (unknown.length) {
    throw new DomainError(
      'unknown_field',
      `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, 10).join(', ')}; a message has ${MESSAGE_FIELDS.join(', ')}`,
      {
        errors: unknown.slice(0, 10).map((field) => ({ field, message: 'is not a field of an alert message' })),
      },
    )
  }
  const id = readId(envelope.id)
  const pair = readPair(envelope.pair)
  const side = readChoice('side', envelope.side, ['BUY', 'SELL'] as const)
  const type = envelope.type === undefined ? 'MARKET' : readChoice('type', envelope.type, ['MARKET', 'LIMIT'] as const)
  const price = readAmount('price', envelope.price)
  if (type === 'LIMIT' && price === undefined) throw validationError('price', 'is required for a limit order')
  if (type === 'MARKET' && price !== undefined)
    throw validationError('price', 'is only for a limit order: set "type": "limit", or leave price out to trade at the market')
  const quantity = readAmount('quantity', envelope.quantity)
  const notional = readAmount('notional_usd', envelope.notional_usd)
  if (quantity !== undefined && notional !== undefined) throw validationError('quantity', 'give quantity or notional_usd, not both')
  if (side === 'BUY' && quantity === undefined && notional === undefined) throw validationError('quantity', 'a buy needs quantity or notional_usd')
  const timestampMs = readTimestamp(envelope.timestamp)
  return {
    id,
    pair,
    side,
    type,
    ...(price !== undefined && { price }),
    ...(quantity !== undefined && { quantity }),
    ...(notional !== undefined && { notional_usd: notional }),
    ...(timestampMs !== undefined && { timestampMs }),
  }
}

/** 400 alert_stale when the message is older than the hook takes, or from ahead of this clock. */
export function staleness(message: AlertMessage, maxAgeSeconds: number, now: Date): DomainError | undefined {
  if (message.timestampMs === undefined) return undefined
  const age = now.getTime() - message.timestampMs
  const at = new Date(message.timestampMs).toISOString()
  const stale = (detail: string) => new DomainError('alert_stale', detail, { errors: [{ field: 'timestamp', message: detail }] })
  if (age > maxAgeSeconds * 1000) {
    return stale(
      `timestamp ${at} is ${Math.round(age / 1000)} s old; this hook takes alerts at most ${maxAgeSeconds} s old (max_age_seconds): nothing was placed`,
    )
  }
  if (-age > FUTURE_TOLERANCE_MS) return stale(`timestamp ${at} is ${Math.round(-age / 1000)} s ahead of this server's clock: nothing was placed`)
  return undefined
}
