// Checking a tenant's venue key before it is stored (SPEC 10): the credentials must read the
// account, and a key that can withdraw funds is refused wherever the venue says so. On Binance that
// is the key's own restriction (GET /sapi/v1/account/apiRestrictions: enableWithdrawals), not the
// account's canWithdraw: an account may withdraw while this key cannot, which is what we want.
import { DomainError } from '../shared/errors.ts'
import { loadCcxt } from './ccxt-loader.ts'
import { openExchange, venueError, type ExchangeOptions } from './exchange.ts'

export interface KeyVerdict {
  canTrade: boolean
  /** null: the venue does not say what the key may do. */
  canWithdraw: boolean | null
}

/**
 * Reads the account with the key and what the key may do; throws 422 venue_rejected when the venue
 * refuses the key, 503 venue_unavailable when it cannot be reached, 422 venue_key_unsafe when the key
 * can withdraw.
 *
 * @example
 * await verifyVenueKey({ exchange: 'binance', apiKey, secret, venueUrl: 'https://127.0.0.1:9443', caFile }) // { canTrade: true, canWithdraw: false }
 */
export async function verifyVenueKey(options: ExchangeOptions & { apiKey: string; secret: string }): Promise<KeyVerdict> {
  const exchange = await openExchange(options)
  const verdict: KeyVerdict = { canTrade: true, canWithdraw: null }
  try {
    const balance = (await exchange.fetchBalance()) as { info?: { canTrade?: boolean; canWithdraw?: boolean } }
    if (balance.info?.canTrade === false) verdict.canTrade = false
    if (exchange.id === 'binance') {
      const restrictions =
        (await (exchange as unknown as { sapiGetAccountApiRestrictions(): Promise<Record<string, unknown>> }).sapiGetAccountApiRestrictions()) ?? {}
      verdict.canWithdraw = restrictions.enableWithdrawals === true
      if (restrictions.enableSpotAndMarginTrading === false) verdict.canTrade = false
    }
  } catch (error) {
    const detail = venueError(exchange, error)
    // ccxt's ExchangeError family means the venue answered and refused; the rest (NetworkError and
    // its kin: down, timeout, 5xx, 429) means nobody said no.
    const ccxt = await loadCcxt()
    if (error instanceof ccxt.ExchangeError) throw new DomainError('venue_rejected', `${options.exchange} refused the key: ${detail.reason}`)
    throw new DomainError('venue_unavailable', `${options.exchange} could not be reached to check the key: ${detail.reason}`, {
      headers: { 'Retry-After': String(detail.retryAfterSeconds ?? 30) },
    })
  }
  if (verdict.canWithdraw) {
    throw new DomainError(
      'venue_key_unsafe',
      `this ${options.exchange} key can withdraw funds (enableWithdrawals); make a key with withdrawals disabled: Bulwark never needs them`,
    )
  }
  return verdict
}
