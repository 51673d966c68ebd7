// Which exchange ids exist: ccxt's own list, read as own properties only (as openExchange reads it).
// `ccxt.exchanges` is a plain object, so a lookup by index would also find what every object
// inherits (`constructor`, `toString`, `__proto__`, ...): a function that is no exchange.
import { loadCcxt } from './ccxt-loader.ts'

/**
 * Why `id` names no exchange ccxt knows (one sentence), or undefined when it does. Loads ccxt.
 *
 * @example
 * await unknownExchange('binance') // undefined
 * await unknownExchange('constructor') // '"constructor" is not an exchange ccxt 4.5.84 knows'
 */
export async function unknownExchange(id: string): Promise<string | undefined> {
  const ccxt = await loadCcxt()
  return Object.hasOwn(ccxt.exchanges, id) && typeof (ccxt.exchanges as Record<string, unknown>)[id] === 'function'
    ? undefined
    : `"${id}" is not an exchange ccxt ${ccxt.version} knows`
}
