// The sapi calls ccxt's binance class makes while loading markets with a key (ccxt 4.5.84, default
// options fetchCurrencies and fetchMargins true): GET /sapi/v1/capital/config/getall (fetchCurrencies),
// /sapi/v1/margin/allPairs (fetchCurrencies and fetchMarkets) and /sapi/v1/margin/isolated/allPairs
// (fetchMarkets), all signed. The gateway trades spot only, so they are answered as Binance answers
// a spot-only account, here, without a call to the venue: a bot that fails on them never starts.
// Also GET /sapi/v1/system/status (ccxt's fetchStatus), public.
import type { GatewayRoute } from './dispatch.ts'
import { BinanceError, binanceReply } from './errors.ts'
import { type MarketProxy, relayed } from './market-proxy.ts'

/**
 * The assets Binance marks isLegalMoney (its fiat currencies); a 3-letter code alone says too little
 * (Mantle's MNT is also Mongolia's).
 */
const FIAT = new Set(['ARS', 'AUD', 'BRL', 'COP', 'CZK', 'EUR', 'GBP', 'IDR', 'JPY', 'MXN', 'NGN', 'PLN', 'RON', 'RUB', 'TRY', 'UAH', 'ZAR'])

interface SymbolInfo {
  baseAsset?: unknown
  quoteAsset?: unknown
  status?: unknown
}

/**
 * Binance's coin list for this key: every asset of the venue's spot symbols, tradeable while one of
 * its symbols is TRADING. Deposits and withdrawals are disabled and no network is listed, which is
 * the truth through the gateway: it serves no deposit address and no withdrawal, and a gateway key
 * can move nothing off the account. The balance fields Binance adds (free, locked, ...) are left
 * out: a zero would be a false balance, and reading the venue's here would cost every bot's start a
 * signed venue call; the balances are GET /api/v3/account's.
 *
 * @example
 * coinsOf({ symbols: [{ baseAsset: 'BTC', quoteAsset: 'USDT', status: 'TRADING' }] })
 * // [{ coin: 'BTC', name: 'BTC', depositAllEnable: false, withdrawAllEnable: false, isLegalMoney: false, trading: true, networkList: [] }, { coin: 'USDT', ... }]
 */
export function coinsOf(exchangeInfo: { symbols?: SymbolInfo[] }): Record<string, unknown>[] {
  const trading = new Map<string, boolean>()
  for (const symbol of exchangeInfo.symbols ?? []) {
    for (const asset of [symbol.baseAsset, symbol.quoteAsset]) {
      if (typeof asset === 'string') trading.set(asset, trading.get(asset) === true || symbol.status === 'TRADING')
    }
  }
  return [...trading]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([coin, tradeable]) => ({
      coin,
      name: coin,
      depositAllEnable: false,
      withdrawAllEnable: false,
      isLegalMoney: FIAT.has(coin),
      trading: tradeable,
      networkList: [],
    }))
}

export function sapiRoutes(proxy: MarketProxy): GatewayRoute[] {
  return [
    {
      method: 'GET',
      path: '/sapi/v1/capital/config/getall',
      security: 'SIGNED',
      handle: async () => {
        // The venue's own exchangeInfo, through the same 1 s cache as the bots' market data.
        const info = await proxy.get('/api/v3/exchangeInfo', '')
        if (info.status !== 200) return relayed(info)
        let parsed: { symbols?: SymbolInfo[] }
        try {
          parsed = JSON.parse(info.body.toString('utf8'))
        } catch {
          throw new BinanceError(-1001, 'Internal error; unable to process your request. Please try again.', { 'Retry-After': '1' }, 503)
        }
        return binanceReply(200, coinsOf(parsed))
      },
    },
    // No pair can be traded on margin through the gateway: Binance's answer with none, an empty list.
    { method: 'GET', path: '/sapi/v1/margin/allPairs', security: 'SIGNED', handle: async () => binanceReply(200, []) },
    { method: 'GET', path: '/sapi/v1/margin/isolated/allPairs', security: 'SIGNED', handle: async () => binanceReply(200, []) },
    // The gateway's own state: a venue in trouble shows in the answers themselves (-1007, its errors).
    { method: 'GET', path: '/sapi/v1/system/status', security: 'NONE', handle: async () => binanceReply(200, { status: 0, msg: 'normal' }) },
  ]
}
