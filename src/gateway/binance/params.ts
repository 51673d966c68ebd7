// Parameters as Binance reads them: each endpoint's documented names (anything else is -1104),
// decimals and integers in its legal ranges (-1100), enums (-1130), and what is mandatory (-1102).
import { BinanceError, illegal, invalidValue, mandatory } from './errors.ts'
import type { Params } from './signed.ts'

const SIGNED = ['timestamp', 'recvWindow']
const DECIMAL = /^([0-9]{1,20})(\.[0-9]{1,20})?$/
const INTEGER = /^[0-9]{1,20}$/

/** Refuses parameters the endpoint does not document, as Binance does (-1104). */
export function onlyKnown(params: Params, known: readonly string[]): void {
  const unread = Object.keys(params).filter((name) => !known.includes(name) && !SIGNED.includes(name))
  if (unread.length === 0) return
  const sent = Object.keys(params).length
  throw new BinanceError(-1104, `Not all sent parameters were read; read '${sent - unread.length}' parameter(s) but was sent '${sent}'.`)
}

export function required(params: Params, name: string): string {
  const value = params[name]
  if (value === undefined || value === '') throw mandatory(name)
  return value
}

/** A positive decimal such as 0.00100000, or undefined when not sent. */
export function decimalParam(params: Params, name: string): number | undefined {
  const raw = params[name]
  if (raw === undefined) return undefined
  if (!DECIMAL.test(raw)) throw illegal(name, DECIMAL.source)
  const value = Number(raw)
  if (!(value > 0)) throw invalidValue(name)
  return value
}

export function integerParam(params: Params, name: string, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const raw = params[name]
  if (raw === undefined) return undefined
  if (!INTEGER.test(raw)) throw illegal(name, INTEGER.source)
  const value = Number(raw)
  if (value > max) throw invalidValue(name)
  return value
}

export function enumParam<T extends string>(params: Params, name: string, values: readonly T[]): T | undefined {
  const raw = params[name]
  if (raw === undefined) return undefined
  if (!values.includes(raw as T)) throw invalidValue(name)
  return raw as T
}

/** A client order id as Binance allows it: 1 to 36 characters of [.A-Z:/a-z0-9_-]. */
export function clientOrderIdParam(params: Params, name: string): string | undefined {
  const raw = params[name]
  if (raw === undefined) return undefined
  if (!/^[.A-Z:/a-z0-9_-]{1,36}$/.test(raw)) throw illegal(name, '^[\\.A-Z\\:/a-z0-9_-]{1,36}$')
  return raw
}

/** A page's `limit`: Binance's default and maximum. */
export function limitParam(params: Params, fallback: number, max: number): number {
  const limit = integerParam(params, 'limit') ?? fallback
  if (limit < 1 || limit > max) throw invalidValue('limit')
  return limit
}

/** The order a cancel or a read names: orderId or origClientOrderId, one of them required. */
export function orderRef(params: Params): { orderId?: number; clientId?: string } {
  const orderId = integerParam(params, 'orderId')
  const clientId = clientOrderIdParam(params, 'origClientOrderId')
  if (orderId === undefined && clientId === undefined)
    throw new BinanceError(-1102, "Param 'origClientOrderId' or 'orderId' must be sent, but both were empty/null!")
  return orderId !== undefined ? { orderId } : { clientId }
}
