// The markets each exchange listed when this process last loaded them (a venue session loads them
// when it opens): what the pre-trade checks hold a LIVE order against inside its transaction, where
// no network call can be made, and what tells dust from a position. In memory; the executor's own
// check before sending stays the last word (placement.ts fitToMarket).
import type { Market } from 'ccxt'

/** ccxt's precision modes: TICK_SIZE gives precision.amount as the step itself, the others as digits. */
const TICK_SIZE = 4
const DECIMAL_PLACES = 2

interface Listing {
  markets: Record<string, Market>
  precisionMode: number
}

const known = new Map<string, Listing>()

export function rememberMarkets(exchange: string, markets: Record<string, Market> | undefined, precisionMode = TICK_SIZE): void {
  if (markets) known.set(exchange, { markets, precisionMode })
}

/**
 * Why the venue would refuse an order of `amount` at `price` on `symbol` for its size, or undefined
 * (also when the markets are not loaded yet).
 *
 * @example
 * belowMinimum('binance', 'BTC/USDT', 0.000001, 65000) // 'amount 0.000001 BTC is below the minimum 0.00001 of BTC/USDT'
 */
export function belowMinimum(exchange: string, symbol: string, amount: number, price: number): string | undefined {
  const market = known.get(exchange)?.markets[symbol]
  if (!market) return undefined
  const minAmount = market.limits.amount?.min
  if (minAmount && amount < minAmount) return `amount ${amount} ${market.base} is below the minimum ${minAmount} of ${symbol}`
  const minCost = market.limits.cost?.min
  if (minCost && amount * price < minCost) return `cost ${amount * price} ${market.quote} is below the minimum ${minCost} of ${symbol}`
  return undefined
}

/** The market's quantity step, when it states one. */
function stepOf(listing: Listing, market: Market): number | undefined {
  const precision = market?.precision?.amount
  if (precision === undefined || precision === null) return undefined
  if (listing.precisionMode === TICK_SIZE) return precision
  return listing.precisionMode === DECIMAL_PLACES ? 10 ** -precision : undefined
}

/**
 * How much of `quantity` the market lets anyone sell at `price`: rounded down to its step, and 0
 * when that is below its minimum amount or cost. All of it when the markets are not loaded.
 *
 * @example
 * sellableQuantity('binance', 'BTC/USDT', 0.0024975, 60000) // 0.00249 (step 0.00001)
 * sellableQuantity('binance', 'BTC/USDT', 0.0000075, 60000) // 0: dust
 */
export function sellableQuantity(exchange: string, symbol: string, quantity: number, price: number): number {
  const listing = known.get(exchange)
  const market = listing?.markets[symbol]
  if (!listing || !market) return quantity
  const step = stepOf(listing, market)
  // The step grid in integers of the step, with a tolerance for float sums (0.3 / 0.1 = 2.9999...).
  const sellable = step ? Math.floor(quantity / step + 1e-9) * step : quantity
  return sellable > 0 && belowMinimum(exchange, symbol, sellable, price) === undefined ? sellable : 0
}
