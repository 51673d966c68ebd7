// Request security as Binance's rest-api.md documents it: parameters from the query string and a
// form body (the query string wins), the X-MBX-APIKEY header, an HMAC-SHA256 `signature` over the
// exact bytes sent (the query string, without the signature, concatenated with the body without a
// separator; hex, any letter case), and the timing rule: refuse a timestamp 1000 ms or more ahead
// of the server, or older than recvWindow (5000 ms unless sent, at most 60000).
import { createHmac, timingSafeEqual } from 'node:crypto'
import { VenueError } from './errors.ts'

/** GET /sapi/v1/account/apiRestrictions, per key. */
export interface Restrictions {
  ipRestrict: boolean
  enableReading: boolean
  enableSpotAndMarginTrading: boolean
  enableWithdrawals: boolean
  enableInternalTransfer: boolean
  enableMargin: boolean
  enableFutures: boolean
  permitsUniversalTransfer: boolean
  enableVanillaOptions: boolean
  enableFixApiTrade: boolean
  enableFixReadOnly: boolean
  enablePortfolioMarginTrading: boolean
}

export const DEFAULT_RESTRICTIONS: Restrictions = {
  ipRestrict: false,
  enableReading: true,
  enableSpotAndMarginTrading: true,
  enableWithdrawals: false,
  enableInternalTransfer: false,
  enableMargin: false,
  enableFutures: false,
  permitsUniversalTransfer: false,
  enableVanillaOptions: false,
  enableFixApiTrade: false,
  enableFixReadOnly: false,
  enablePortfolioMarginTrading: false,
}

export interface ApiKey {
  apiKey: string
  secret: string
  /** The account the key acts for; keys of one account see the same balances and orders. */
  account: string
  restrictions: Restrictions
  createTime: number
}

/** USER_DATA needs a key that may read, TRADE one that may trade spot; NONE needs no key. */
export type Security = 'NONE' | 'USER_DATA' | 'TRADE'

export type Params = Record<string, string>

function parse(raw: string): Params {
  const params: Params = {}
  for (const [name, value] of new URLSearchParams(raw)) {
    if (name in params) throw new VenueError(-1101, 'Duplicate values for a parameter detected.')
    params[name] = value
  }
  return params
}

/** The request's parameters, query string over body; `signature` is kept out of them. */
export function readParams(rawQuery: string, rawBody: string): Params {
  const { signature: _q, ...query } = parse(rawQuery)
  const { signature: _b, ...body } = parse(rawBody)
  return { ...body, ...query }
}

function decodeOr(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** What was signed (query and body without their signature parameter) and the signature sent. */
export function signedPayload(rawQuery: string, rawBody: string): { payload: string; signature?: string } {
  const signatures: string[] = []
  const strip = (raw: string) =>
    raw
      .split('&')
      .filter((part) => {
        if (!part.startsWith('signature=')) return true
        signatures.push(decodeOr(part.slice('signature='.length)))
        return false
      })
      .join('&')
  const payload = strip(rawQuery) + (rawBody ? strip(rawBody) : '')
  if (signatures.length > 1) throw new VenueError(-1101, 'Duplicate values for a parameter detected.')
  return { payload, signature: signatures[0] }
}

export function hmacHex(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest('hex')
}

const mandatory = (name: string) => new VenueError(-1102, `Mandatory parameter '${name}' was not sent, was empty/null, or malformed.`)

/** The key a signed request acts with, after every check Binance makes; throws Binance's refusal. */
export function authenticate(
  keys: Map<string, ApiKey>,
  header: string | string[] | undefined,
  raw: { query: string; body: string },
  params: Params,
  now: number,
  security: Exclude<Security, 'NONE'>,
): ApiKey {
  if (typeof header !== 'string' || !/^[A-Za-z0-9]{1,128}$/.test(header)) throw new VenueError(-2014, 'API-key format invalid.')
  const key = keys.get(header)
  if (!key) throw new VenueError(-2015, 'Invalid API-key, IP, or permissions for action.')
  const { payload, signature } = signedPayload(raw.query, raw.body)
  if (!signature) throw mandatory('signature')
  if (params.timestamp === undefined || !/^[0-9]{1,20}$/.test(params.timestamp)) throw mandatory('timestamp')
  const expected = Buffer.from(hmacHex(key.secret, payload))
  const given = Buffer.from(signature.toLowerCase())
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new VenueError(-1022, 'Signature for this request is not valid.')
  const recvWindow = params.recvWindow === undefined ? 5000 : Number(params.recvWindow)
  if (!/^[0-9]+(\.[0-9]{1,3})?$/.test(params.recvWindow ?? '5000')) throw new VenueError(-1130, "Data sent for parameter 'recvWindow' is not valid.")
  if (recvWindow > 60_000) throw new VenueError(-1131, 'recvWindow must be less than 60000.')
  // Timestamps may come in microseconds (16 digits).
  const timestamp = params.timestamp.length >= 16 ? Number(params.timestamp) / 1000 : Number(params.timestamp)
  if (timestamp >= now + 1000) throw new VenueError(-1021, "Timestamp for this request was 1000ms ahead of the server's time.")
  if (now - timestamp > recvWindow) throw new VenueError(-1021, 'Timestamp for this request is outside of the recvWindow.')
  const allowed = security === 'TRADE' ? key.restrictions.enableSpotAndMarginTrading : key.restrictions.enableReading
  if (!allowed) throw new VenueError(-2015, 'Invalid API-key, IP, or permissions for action.')
  return key
}
