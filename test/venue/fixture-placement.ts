// Shared by the placement tests: an account of its own per test, and the requests its key made
// (method, endpoint, status, "-" when no answer came), which prove "at most once" and "never
// hammered"; the venue's own orders prove how many exist under a client order id.
import type { OrderToPlace } from '../../src/venues/placement.ts'
import { type Venue, venueKey } from '../support/venue/index.ts'
import { trader } from './fixture.ts'

let accounts = 0

/** A fresh account, its exchange (markets loaded, a 2 s recvWindow), and what its key has sent since. */
export async function account(venue: Venue, balances: Record<string, number> = { USDT: 10_000, BTC: 1 }) {
  const label = `acct${++accounts}`
  const exchange = await trader(venue, label, balances)
  exchange.options.recvWindow = 2000
  await exchange.loadMarkets()
  const { apiKey } = venueKey(label, label)
  await venue.clearRequests()
  const sent = async () => (await venue.requests()).filter((r) => r.apiKey === apiKey).map((r) => `${r.method} ${r.path.slice(8)} ${r.status ?? '-'}`)
  const held = async (clientOrderId: string) => venue.orders({ clientOrderId, account: label })
  return { exchange, sent, held, label }
}

const BTC = { symbol: 'BTC/USDT', side: 'buy' } as const

export const limitBuy = (clientOrderId: string, amount = 0.01): OrderToPlace => ({ ...BTC, type: 'limit', amount, price: 50_000, clientOrderId })
export const marketBuy = (clientOrderId: string): OrderToPlace => ({ ...BTC, type: 'market', amount: 0.001, referencePrice: 60_000, clientOrderId })
