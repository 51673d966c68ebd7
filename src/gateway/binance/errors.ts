// Binance's error shape, `{"code": -1022, "msg": "..."}`, and the HTTP status the gateway answers
// each code with (SPEC 14): a bot's Binance client reads these exactly as it reads Binance's own.
import type { Reply } from '../../http/problem.ts'

/** The codes the gateway answers, with Binance's status for each; anything else is 400. */
const STATUS: Record<number, number> = {
  [-1003]: 429, // too many requests (Retry-After says when)
  [-1007]: 503, // the venue did not answer in time: send status unknown
  [-2014]: 401, // API-key format invalid
  [-2015]: 401, // unknown or revoked key
}

/** A refusal in Binance's words; thrown anywhere under the gateway, answered by the dispatcher. */
export class BinanceError extends Error {
  constructor(
    readonly code: number,
    readonly msg: string,
    readonly headers: Record<string, string> = {},
    readonly status = STATUS[code] ?? 400,
  ) {
    super(msg)
  }
}

/** Binance's wording for a parameter that is missing (-1102). */
export const mandatory = (name: string) => new BinanceError(-1102, `Mandatory parameter '${name}' was not sent, was empty/null, or malformed.`)

/** Binance's wording for a parameter that was sent but is not valid (-1100 for bad characters, -1130 for a bad value). */
export const illegal = (name: string, legal?: string) =>
  new BinanceError(-1100, `Illegal characters found in parameter '${name}'${legal ? `; legal range is '${legal}'` : ''}.`)

export const invalidValue = (name: string) => new BinanceError(-1130, `Data sent for parameter '${name}' is not valid.`)

export const unsupported = () => new BinanceError(-1020, 'This operation is not supported.')

/** The JSON answer Binance would give. */
export function binanceReply(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'Content-Type': 'application/json;charset=UTF-8', ...headers }, body: JSON.stringify(body) }
}

/** A BinanceError as an answer. */
export function errorReply(error: BinanceError): Reply {
  return binanceReply(error.status, { code: error.code, msg: error.msg }, error.headers)
}
