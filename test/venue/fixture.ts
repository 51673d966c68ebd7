// Shared by the venue tests: one account and API key per test on the test venue, reached through
// the real ccxt via src/venues/exchange.ts, and a helper that expects a refusal.
import * as assert from 'uvu/assert'
import { openExchange, type Exchange } from '../../src/venues/exchange.ts'
import { venueKey, type Venue } from '../support/venue/index.ts'

/** A fresh account `label` with its own key and balances, and a ccxt exchange acting for it. */
export async function trader(
  venue: Venue,
  label: string,
  balances: Record<string, number | string> = {},
  restrictions: Record<string, boolean> = {},
): Promise<Exchange> {
  const key = venueKey(label, label)
  await venue.addKey({ ...key, restrictions })
  await venue.setBalances(balances, label)
  return openExchange({ exchange: 'binance', venueUrl: venue.url, caFile: venue.caFile, apiKey: key.apiKey, secret: key.secret })
}

/** The error a call must fail with. */
export async function refusal(call: Promise<unknown>): Promise<Error> {
  try {
    await call
  } catch (error) {
    assert.instance(error, Error)
    return error as Error
  }
  assert.unreachable('expected the call to fail')
  throw new Error('unreachable')
}
