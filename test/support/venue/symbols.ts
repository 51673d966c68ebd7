// The venue's spot symbols, their filters as GET /api/v3/exchangeInfo shows them, the filter checks
// of POST /api/v3/order (Binance's filters.md), and amounts as exact integers of 1e-8.
import { VenueError } from './errors.ts'

/** Every amount and price is a bigint count of 1e-8 (Binance shows 8 decimals everywhere). */
export const ONE = 100_000_000n

const DECIMAL = /^([0-9]{1,20})(\.[0-9]{1,20})?$/

/** A request's DECIMAL parameter: -1100 on anything but digits, -1111 past 8 decimals. */
export function parseAmount(name: string, text: string): bigint {
  if (!DECIMAL.test(text)) throw new VenueError(-1100, `Illegal characters found in parameter '${name}'; legal range is '^([0-9]{1,20})(\\.[0-9]{1,20})?$'.`)
  const [whole, fraction = ''] = text.split('.')
  const digits = fraction.replace(/0+$/, '')
  if (digits.length > 8) throw new VenueError(-1111, `Parameter '${name}' has too much precision.`)
  return BigInt(whole) * ONE + BigInt(digits.padEnd(8, '0'))
}

/** An amount from a test (a number or a decimal string). */
export function units(value: number | string): bigint {
  return parseAmount('amount', typeof value === 'number' ? value.toFixed(8) : value)
}

export function fmt(value: bigint): string {
  const sign = value < 0n ? '-' : ''
  const abs = value < 0n ? -value : value
  return `${sign}${abs / ONE}.${(abs % ONE).toString().padStart(8, '0')}`
}

/** price x quantity, truncated to 1e-8. */
export function mul(a: bigint, b: bigint): bigint {
  return (a * b) / ONE
}

/** a / b, truncated to 1e-8. */
export function div(a: bigint, b: bigint): bigint {
  return (a * ONE) / b
}

/** The larger and the smaller of two amounts (Math.max and Math.min take no bigint). */
export function larger(a: bigint, b: bigint): bigint {
  if (a > b) return a
  return b
}

export function smaller(a: bigint, b: bigint): bigint {
  if (a < b) return a
  return b
}

/** Rounds down to a multiple of step. */
export function floorTo(value: bigint, step: bigint): bigint {
  return step === 0n ? value : (value / step) * step
}

export interface SymbolSpec {
  base: string
  quote: string
  tickSize: string
  stepSize: string
  minQty: string
  minNotional: string
  /** Where the seeded daily series starts (2020-01-01). */
  startPrice: number
  /** exchangeInfo's `orderTypes` (default: every type Binance spot offers). */
  orderTypes?: string[]
  /** exchangeInfo's `ocoAllowed` (default true). */
  ocoAllowed?: boolean
  /** MAX_NUM_ALGO_ORDERS: open stop-loss and take-profit orders per account (default 5, as on Binance). */
  maxNumAlgoOrders?: number
}

/** Every order type of Binance spot (enums.md "Order types"). */
export const ORDER_TYPES = ['LIMIT', 'LIMIT_MAKER', 'MARKET', 'STOP_LOSS', 'STOP_LOSS_LIMIT', 'TAKE_PROFIT', 'TAKE_PROFIT_LIMIT']

export interface VenueSymbol {
  id: string
  base: string
  quote: string
  tick: bigint
  step: bigint
  minQty: bigint
  maxQty: bigint
  minPrice: bigint
  maxPrice: bigint
  minNotional: bigint
  maxNotional: bigint
  startPrice: number
  orderTypes: string[]
  ocoAllowed: boolean
  maxNumAlgoOrders: number
}

/** The pairs of Bulwark's catalogue (sql/001_init.sql), with filters close to Binance's own. */
export const CATALOGUE_SYMBOLS: SymbolSpec[] = [
  { base: 'BTC', quote: 'USDT', tickSize: '0.01', stepSize: '0.00001', minQty: '0.00001', minNotional: '5', startPrice: 60000 },
  { base: 'ETH', quote: 'USDT', tickSize: '0.01', stepSize: '0.0001', minQty: '0.0001', minNotional: '5', startPrice: 3000 },
  { base: 'SOL', quote: 'USDT', tickSize: '0.01', stepSize: '0.001', minQty: '0.001', minNotional: '5', startPrice: 150 },
  { base: 'BNB', quote: 'USDT', tickSize: '0.01', stepSize: '0.001', minQty: '0.001', minNotional: '5', startPrice: 550 },
  { base: 'XRP', quote: 'USDT', tickSize: '0.0001', stepSize: '0.1', minQty: '0.1', minNotional: '5', startPrice: 0.55 },
  { base: 'ADA', quote: 'USDT', tickSize: '0.0001', stepSize: '0.1', minQty: '0.1', minNotional: '5', startPrice: 0.45 },
  { base: 'DOGE', quote: 'USDT', tickSize: '0.00001', stepSize: '1', minQty: '1', minNotional: '5', startPrice: 0.12 },
  { base: 'AVAX', quote: 'USDT', tickSize: '0.01', stepSize: '0.01', minQty: '0.01', minNotional: '5', startPrice: 30 },
  { base: 'LINK', quote: 'USDT', tickSize: '0.01', stepSize: '0.01', minQty: '0.01', minNotional: '5', startPrice: 15 },
  { base: 'DOT', quote: 'USDT', tickSize: '0.001', stepSize: '0.01', minQty: '0.01', minNotional: '5', startPrice: 6 },
  { base: 'LTC', quote: 'USDT', tickSize: '0.01', stepSize: '0.001', minQty: '0.001', minNotional: '5', startPrice: 80 },
  { base: 'TRX', quote: 'USDT', tickSize: '0.0001', stepSize: '0.1', minQty: '0.1', minNotional: '5', startPrice: 0.12 },
]

export function venueSymbol(spec: SymbolSpec): VenueSymbol {
  const tick = units(spec.tickSize)
  return {
    id: `${spec.base}${spec.quote}`,
    base: spec.base,
    quote: spec.quote,
    tick,
    step: units(spec.stepSize),
    minQty: units(spec.minQty),
    maxQty: 9_000_000n * ONE,
    minPrice: tick,
    maxPrice: 1_000_000n * ONE,
    minNotional: units(spec.minNotional),
    maxNotional: 9_000_000n * ONE,
    startPrice: spec.startPrice,
    orderTypes: spec.orderTypes ?? ORDER_TYPES,
    ocoAllowed: spec.ocoAllowed ?? true,
    maxNumAlgoOrders: spec.maxNumAlgoOrders ?? 5,
  }
}

/** 'BTC/USDT' or 'BTCUSDT' -> the symbol; -1121 when there is none. */
export function findSymbol(symbols: Map<string, VenueSymbol>, name: string | undefined): VenueSymbol {
  if (name === undefined || name === '') throw new VenueError(-1102, "Mandatory parameter 'symbol' was not sent, was empty/null, or malformed.")
  const found = symbols.get(name.replace('/', ''))
  if (!found) throw new VenueError(-1121, 'Invalid symbol.')
  return found
}

/** One entry of exchangeInfo's symbols: the fields ccxt's parseMarket reads, as Binance words them. */
export function symbolInfo(s: VenueSymbol): Record<string, unknown> {
  return {
    symbol: s.id,
    status: 'TRADING',
    baseAsset: s.base,
    baseAssetPrecision: 8,
    quoteAsset: s.quote,
    quotePrecision: 8,
    quoteAssetPrecision: 8,
    baseCommissionPrecision: 8,
    quoteCommissionPrecision: 8,
    orderTypes: s.orderTypes,
    icebergAllowed: false,
    ocoAllowed: s.ocoAllowed,
    otoAllowed: false,
    opoAllowed: false,
    quoteOrderQtyMarketAllowed: true,
    allowTrailingStop: false,
    cancelReplaceAllowed: false,
    amendAllowed: false,
    pegInstructionsAllowed: false,
    isSpotTradingAllowed: true,
    isMarginTradingAllowed: false,
    filters: [
      { filterType: 'PRICE_FILTER', minPrice: fmt(s.minPrice), maxPrice: fmt(s.maxPrice), tickSize: fmt(s.tick) },
      { filterType: 'LOT_SIZE', minQty: fmt(s.minQty), maxQty: fmt(s.maxQty), stepSize: fmt(s.step) },
      { filterType: 'MARKET_LOT_SIZE', minQty: '0.00000000', maxQty: fmt(s.maxQty), stepSize: '0.00000000' },
      {
        filterType: 'NOTIONAL',
        minNotional: fmt(s.minNotional),
        applyMinToMarket: true,
        maxNotional: fmt(s.maxNotional),
        applyMaxToMarket: false,
        avgPriceMins: 5,
      },
      { filterType: 'MAX_NUM_ORDERS', maxNumOrders: 200 },
      { filterType: 'MAX_NUM_ALGO_ORDERS', maxNumAlgoOrders: s.maxNumAlgoOrders },
    ],
    permissions: [],
    permissionSets: [['SPOT']],
    defaultSelfTradePreventionMode: 'EXPIRE_MAKER',
    allowedSelfTradePreventionModes: ['NONE', 'EXPIRE_TAKER', 'EXPIRE_MAKER', 'EXPIRE_BOTH'],
  }
}

export const failure = (filter: string) => new VenueError(-1013, `Filter failure: ${filter}`)

/**
 * The quantity an order trades, once it passed the filters (-1013): PRICE_FILTER, LOT_SIZE and
 * NOTIONAL; a MARKET order is held to the minimum notional at the last price, and one by quote
 * amount buys or sells what that amount is worth, rounded down to the step.
 */
export function orderQuantity(
  s: VenueSymbol,
  o: { type: string; quantity?: bigint; quoteOrderQty?: bigint; price?: bigint; stopPrice?: bigint },
  last: bigint,
): bigint {
  if (o.type === 'MARKET' && o.quoteOrderQty !== undefined) {
    checkNotional(s, o.quoteOrderQty, true)
    const quantity = floorTo(div(o.quoteOrderQty, last), s.step)
    checkQuantity(s, quantity)
    return quantity
  }
  const quantity = o.quantity ?? 0n
  // STOP_LOSS and TAKE_PROFIT become MARKET orders: no price, the notional at their stop price.
  const market = o.type === 'MARKET' || o.type === 'STOP_LOSS' || o.type === 'TAKE_PROFIT'
  if (!market) checkPrice(s, o.price ?? 0n)
  if (o.stopPrice !== undefined) checkPrice(s, o.stopPrice)
  checkQuantity(s, quantity)
  checkNotional(s, mul(o.price ?? o.stopPrice ?? last, quantity), market)
  return quantity
}

export function checkPrice(s: VenueSymbol, price: bigint): void {
  if (price < s.minPrice || price > s.maxPrice || price % s.tick !== 0n) throw failure('PRICE_FILTER')
}

export function checkQuantity(s: VenueSymbol, quantity: bigint): void {
  if (quantity < s.minQty || quantity > s.maxQty || quantity % s.step !== 0n) throw failure('LOT_SIZE')
}

/** NOTIONAL: price x quantity within [minNotional, maxNotional]; MARKET orders check the minimum only. */
export function checkNotional(s: VenueSymbol, notional: bigint, market: boolean): void {
  if (notional < s.minNotional || (!market && notional > s.maxNotional)) throw failure('NOTIONAL')
}
