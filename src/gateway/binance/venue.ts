// The tenant's venue as the gateway uses it: its session (the executor's, shared), a call that
// must answer within 7 s (inside ccxt's default 10 s, so a bot hears -1007 rather than its own
// timeout), and the refusal a bot reads when the tenant has no venue.
import type { Queries } from '../../store/store.ts'
import type { Exchange } from '../../venues/exchange.ts'
import type { VenueSessions } from '../../venues/sessions.ts'
import type { GatewayKey } from '../keys.ts'
import { BinanceError } from './errors.ts'

/** How long the gateway waits for the venue before answering -1007 (SPEC 14). */
export const VENUE_WAIT_MS = 7000

export const sendStatusUnknown = () =>
  new BinanceError(-1007, 'Timeout waiting for response from backend server. Send status unknown; execution status unknown.')

/** The tenant's venue instance for reads and its markets. */
export async function venueOf(sessions: VenueSessions, db: Queries, key: GatewayKey): Promise<Exchange> {
  try {
    return (await sessions.open(db, key.tenantId)).quotes
  } catch (error) {
    throw new BinanceError(-1000, `Bulwark could not reach the tenant's venue: ${(error as Error).message}.`, { 'Retry-After': '5' }, 503)
  }
}

/**
 * The tenant's venue instance for its markets only (a symbol's pair, its precision): the session
 * already open when there is one, without a read of the account. An order still goes out through
 * the executor's session, opened on the account as it stands.
 */
export async function marketsOf(sessions: VenueSessions, db: Queries, key: GatewayKey): Promise<Exchange> {
  const open = await sessions.findOpen(key.tenantId)?.catch(() => undefined)
  return open?.quotes ?? venueOf(sessions, db, key)
}

/** One venue call, or -1007 after VENUE_WAIT_MS. */
export async function withinVenueWait<T>(call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(sendStatusUnknown()), VENUE_WAIT_MS)
  })
  try {
    return await Promise.race([call, late])
  } finally {
    clearTimeout(timer)
  }
}
