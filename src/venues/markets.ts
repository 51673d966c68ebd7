// The markets each exchange listed when this process last loaded them (the executor loads them when
// it opens a venue): what the pre-trade checks hold a LIVE order against inside its transaction,
// where no network call can be made. In memory; the executor's own check before sending stays the
// last word (placement.ts fitToMarket).
import type { Market } from 'ccxt'

const known = new Map<string, Record<string, Market>>()

export function rememberMarkets(exchange: string, markets: Record<string, Market> | undefined): void {
  if (markets) known.set(exchange, markets)
}

/**
 * Why the venue would refuse an order of `amount` at `price` on `symbol` for its size, or undefined
 * (also when the markets are not loaded yet).
 *
 * @example
 * belowMinimum('binance', 'BTC/USDT', 0.000001, 65000) // 'amount 0.000001 BTC is below the minimum 0.00001 of BTC/USDT'
 */
export function belowMinimum(exchange: string, symbol: string, amount: number, price: number): string | undefined {
  const market = known.get(exchange)?.[symbol]
  if (!market) return undefined
  const minAmount = market.limits.amount?.min
  if (minAmount && amount < minAmount) return `amount ${amount} ${market.base} is below the minimum ${minAmount} of ${symbol}`
  const minCost = market.limits.cost?.min
  if (minCost && amount * price < minCost) return `cost ${amount * price} ${market.quote} is below the minimum ${minCost} of ${symbol}`
  return undefined
}
