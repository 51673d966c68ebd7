// The endpoints the venue serves, each with its security type, request weight and documented
// parameters (anything else is refused with -1104, as Binance does): the public market data here,
// the account endpoints, the order book from depth.ts and the order endpoints from order-routes.ts.
import type { ApiKey, Params, Security } from './auth.ts'
import type { Book } from './book.ts'
import { depthRoute } from './depth.ts'
import { VenueError } from './errors.ts'
import type { WeightLimiter } from './faults.ts'
import type { MarketData } from './market-data.ts'
import { listRoutes } from './list-routes.ts'
import { orderRoutes } from './order-routes.ts'
import { findSymbol, fmt, symbolInfo, type VenueSymbol } from './symbols.ts'

export interface VenueState {
  symbols: Map<string, VenueSymbol>
  book: Book
  market: MarketData
  keys: Map<string, ApiKey>
  limiter: WeightLimiter
  now: () => number
}

export interface Route {
  security: Security
  /** The parameters Binance documents for the endpoint (signed ones add recvWindow and timestamp). */
  params: string[]
  weight: number | ((p: Params) => number)
  /** `key` is there for every endpoint but NONE. */
  handle(p: Params, key: ApiKey): unknown
}

export type Routes = Record<string, Route>

const SIGNED = ['recvWindow', 'timestamp']

/** `symbols` as Binance takes it: a JSON array of symbol names. */
function symbolList(state: VenueState, p: Params): VenueSymbol[] {
  if (p.symbol !== undefined && p.symbols !== undefined) throw new VenueError(-1128, 'Combination of optional parameters invalid.')
  if (p.symbol !== undefined) return [findSymbol(state.symbols, p.symbol)]
  if (p.symbols === undefined) return [...state.symbols.values()]
  let names: unknown
  try {
    names = JSON.parse(p.symbols)
  } catch {
    throw new VenueError(
      -1100,
      'Illegal characters found in parameter \'symbols\'; legal range is \'^\\[("[A-Z0-9-_.]{1,20}"(,"[A-Z0-9-_.]{1,20}"){0,}){0,1}\\]$\'.',
    )
  }
  if (!Array.isArray(names)) throw new VenueError(-1102, "Mandatory parameter 'symbols' was not sent, was empty/null, or malformed.")
  return names.map((name) => findSymbol(state.symbols, String(name)))
}

/** One answer for `symbol`, an array for `symbols` or for none. */
function perSymbol(state: VenueState, p: Params, each: (s: VenueSymbol) => unknown): unknown {
  const list = symbolList(state, p).map(each)
  return p.symbol !== undefined ? list[0] : list
}

export function routes(state: VenueState): Routes {
  const { book, market } = state
  return {
    'GET /api/v3/ping': { security: 'NONE', params: [], weight: 1, handle: () => ({}) },
    'GET /api/v3/time': { security: 'NONE', params: [], weight: 1, handle: () => ({ serverTime: state.now() }) },
    'GET /api/v3/exchangeInfo': {
      security: 'NONE',
      params: ['symbol', 'symbols', 'permissions', 'showPermissionSets', 'symbolStatus'],
      weight: 20,
      handle: (p) => ({
        timezone: 'UTC',
        serverTime: state.now(),
        rateLimits: [
          {
            rateLimitType: 'REQUEST_WEIGHT',
            interval: 'MINUTE',
            intervalNum: Math.max(1, Math.round(state.limiter.windowMs / 60_000)),
            limit: state.limiter.limit,
          },
          { rateLimitType: 'ORDERS', interval: 'SECOND', intervalNum: 10, limit: 100 },
          { rateLimitType: 'ORDERS', interval: 'DAY', intervalNum: 1, limit: 200000 },
          { rateLimitType: 'RAW_REQUESTS', interval: 'MINUTE', intervalNum: 5, limit: 61000 },
        ],
        exchangeFilters: [],
        symbols: symbolList(state, p).map(symbolInfo),
      }),
    },
    'GET /api/v3/klines': {
      security: 'NONE',
      params: ['symbol', 'interval', 'startTime', 'endTime', 'timeZone', 'limit'],
      weight: 2,
      handle: (p) => market.klines(findSymbol(state.symbols, p.symbol), p),
    },
    'GET /api/v3/depth': depthRoute(state),
    'GET /api/v3/ticker/price': {
      security: 'NONE',
      params: ['symbol', 'symbols', 'symbolStatus'],
      weight: (p) => (p.symbol !== undefined ? 2 : 4),
      handle: (p) => perSymbol(state, p, (s) => market.tickerPrice(s)),
    },
    'GET /api/v3/ticker/24hr': {
      security: 'NONE',
      params: ['symbol', 'symbols', 'type', 'symbolStatus'],
      // rest-api.md: symbol 2; symbols 1-20 2, 21-100 40, 101 or more 80; neither 80.
      weight: (p) => (p.symbol !== undefined ? 2 : p.symbols !== undefined ? symbolsWeight(p.symbols) : 80),
      handle: (p) => perSymbol(state, p, (s) => market.ticker24(s)),
    },
    'GET /api/v3/account': {
      security: 'USER_DATA',
      params: ['omitZeroBalances', ...SIGNED],
      weight: 20,
      handle: (p, key) => {
        const account = book.account(key.account)
        const assets = new Set([...[...state.symbols.values()].flatMap((s) => [s.base, s.quote]), ...account.balances.keys()])
        const balances = [...assets]
          .map((asset) => ({ asset, ...book.balance(key.account, asset) }))
          .filter((b) => p.omitZeroBalances !== 'true' || b.free + b.locked > 0n)
          .map((b) => ({ asset: b.asset, free: fmt(b.free), locked: fmt(b.locked) }))
        return {
          makerCommission: 10,
          takerCommission: 10,
          buyerCommission: 0,
          sellerCommission: 0,
          commissionRates: { maker: '0.00100000', taker: '0.00100000', buyer: '0.00000000', seller: '0.00000000' },
          canTrade: account.canTrade,
          canWithdraw: account.canWithdraw,
          canDeposit: account.canDeposit,
          brokered: false,
          requireSelfTradePrevention: false,
          preventSor: false,
          updateTime: account.updateTime,
          accountType: 'SPOT',
          balances,
          permissions: ['SPOT'],
          uid: 354937868,
        }
      },
    },
    'GET /sapi/v1/account/apiRestrictions': {
      security: 'USER_DATA',
      params: SIGNED,
      weight: 1,
      handle: (_p, key) => ({ ...key.restrictions, createTime: key.createTime }),
    },
    // ccxt asks for the margin pairs during loadMarkets when it holds a key: a spot-only venue has none.
    'GET /sapi/v1/margin/allPairs': { security: 'USER_DATA', params: ['symbol', ...SIGNED], weight: 1, handle: () => [] },
    'GET /sapi/v1/margin/isolated/allPairs': { security: 'USER_DATA', params: ['symbol', ...SIGNED], weight: 10, handle: () => [] },
    ...orderRoutes(state, SIGNED),
    ...listRoutes(state, SIGNED),
  }
}

/** The weight of GET /api/v3/ticker/24hr for a `symbols` list (unparseable: what the most costs). */
function symbolsWeight(symbols: string): number {
  let count = 101
  try {
    const list = JSON.parse(symbols)
    if (Array.isArray(list)) count = list.length
  } catch {
    /* refused by the handler */
  }
  return count <= 20 ? 2 : count <= 100 ? 40 : 80
}
