// Market data: a seeded, deterministic daily series per symbol (a mean-reverting random walk from
// 2020-01-01, the same for the same seed on every run), today's still-forming candle as the last
// kline (as Binance serves it), the last price the tests set, and the tickers built from them.
import { prng } from '../../../src/shared/prng.ts'
import { VenueError } from './errors.ts'
import { fmt, larger, mul, ONE, smaller, type VenueSymbol } from './symbols.ts'

export const DAY_MS = 86_400_000
const EPOCH = Date.UTC(2020, 0, 1)

export interface Candle {
  openTime: number
  open: bigint
  high: bigint
  low: bigint
  close: bigint
  /** Base asset traded, and its value in the quote asset. */
  volume: bigint
  quoteVolume: bigint
  trades: number
}

interface Session {
  day: number
  open: bigint
  last: bigint
  high: bigint
  low: bigint
  volume: bigint
  quoteVolume: bigint
  trades: number
}

function hash(text: string): number {
  let h = 0x811c9dc5
  for (const c of text) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193)
  return h >>> 0
}

/** A kline as GET /api/v3/klines answers it. */
export function klineRow(c: Candle): unknown[] {
  const takerShare = (x: bigint) => fmt(x / 2n)
  return [
    c.openTime,
    fmt(c.open),
    fmt(c.high),
    fmt(c.low),
    fmt(c.close),
    fmt(c.volume),
    c.openTime + DAY_MS - 1,
    fmt(c.quoteVolume),
    c.trades,
    takerShare(c.volume),
    takerShare(c.quoteVolume),
    '0',
  ]
}

export class MarketData {
  private readonly series = new Map<string, Candle[]>()
  private readonly sessions = new Map<string, Session>()

  constructor(
    private readonly seed: number,
    /** Closed daily candles served before today. */
    private readonly historyDays: number,
    private readonly now: () => number,
  ) {}

  today(): number {
    return Math.floor((this.now() - EPOCH) / DAY_MS)
  }

  /** Day d of the seeded walk (d counted from 2020-01-01): each day draws from its own seeded stream. */
  private seeded(s: VenueSymbol, day: number): Candle {
    const list = this.series.get(s.id) ?? []
    this.series.set(s.id, list)
    const anchor = Math.log(s.startPrice)
    const ticks = (x: number) => BigInt(Math.max(1, Math.round((x * Number(ONE)) / Number(s.tick)))) * s.tick
    while (list.length <= day) {
      const random = prng(hash(`${this.seed}:${s.id}:${list.length}`))
      const previous = list.at(-1)?.close
      const open = previous ?? ticks(s.startPrice)
      const log = Math.log(Number(open) / Number(ONE))
      const close = ticks(Math.exp(log + 0.08 * (random() - 0.5) - 0.01 * (log - anchor)))
      const top = larger(open, close)
      const bottom = smaller(open, close)
      const high = ticks((Number(top) / Number(ONE)) * (1 + 0.02 * random()))
      const low = ticks((Number(bottom) / Number(ONE)) * (1 - 0.02 * random()))
      const volume = BigInt(Math.round((0.5 + random()) * (1e6 / (Number(close) / Number(ONE))))) * ONE
      list.push({
        openTime: EPOCH + list.length * DAY_MS,
        open,
        high: larger(high, top),
        low: smaller(low, bottom),
        close,
        volume,
        quoteVolume: mul(volume, close),
        trades: 1000 + Math.floor(random() * 9000),
      })
    }
    return list[day]
  }

  private session(s: VenueSymbol): Session {
    const day = this.today()
    let session = this.sessions.get(s.id)
    if (!session || session.day !== day) {
      // The first session opens at the seeded close of yesterday; a later day at the last price.
      const open = session?.last ?? this.seeded(s, day - 1).close
      session = { day, open, last: open, high: open, low: open, volume: 0n, quoteVolume: 0n, trades: 0 }
      this.sessions.set(s.id, session)
    }
    return session
  }

  last(s: VenueSymbol): bigint {
    return this.session(s).last
  }

  setLast(s: VenueSymbol, price: bigint): void {
    const session = this.session(s)
    session.last = price
    session.high = larger(session.high, price)
    session.low = smaller(session.low, price)
  }

  recordTrade(s: VenueSymbol, quantity: bigint, quote: bigint): void {
    const session = this.session(s)
    session.volume += quantity
    session.quoteVolume += quote
    session.trades++
  }

  /** Today's candle so far: opened at yesterday's close, closing (for now) at the last price. */
  forming(s: VenueSymbol): Candle {
    const session = this.session(s)
    const open = session.open
    const high = larger(session.high, open)
    const low = smaller(session.low, open)
    const { volume, quoteVolume, trades } = session
    return { openTime: EPOCH + session.day * DAY_MS, open, high, low, close: session.last, volume, quoteVolume, trades }
  }

  /** Every daily candle served, oldest first: the closed ones, then today's forming one. */
  candles(s: VenueSymbol): Candle[] {
    const today = this.today()
    const first = Math.max(0, today - this.historyDays)
    this.seeded(s, today - 1)
    return [...this.series.get(s.id)!.slice(first, today), this.forming(s)]
  }

  /** GET /api/v3/klines: Binance's time rules (rest-api.md, General API Information); 1d only. */
  klines(s: VenueSymbol, p: Record<string, string>): unknown[][] {
    if (p.interval === undefined) throw new VenueError(-1102, "Mandatory parameter 'interval' was not sent, was empty/null, or malformed.")
    if (p.interval !== '1d') throw new VenueError(-1120, 'Invalid interval.')
    const limit = p.limit === undefined ? 500 : Number(p.limit)
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new VenueError(-1130, "Data sent for parameter 'limit' is not valid.")
    for (const name of ['startTime', 'endTime']) {
      if (p[name] !== undefined && !/^[0-9]{1,20}$/.test(p[name])) {
        throw new VenueError(-1100, `Illegal characters found in parameter '${name}'; legal range is '^[0-9]{1,20}$'.`)
      }
    }
    const start = p.startTime === undefined ? undefined : Number(p.startTime)
    const end = p.endTime === undefined ? undefined : Number(p.endTime)
    let rows = this.candles(s).filter((c) => (start === undefined || c.openTime >= start) && (end === undefined || c.openTime <= end))
    rows = start === undefined ? rows.slice(-limit) : rows.slice(0, limit)
    return rows.map(klineRow)
  }

  /** GET /api/v3/ticker/24hr (FULL), over today's session. */
  ticker24(s: VenueSymbol): Record<string, unknown> {
    const c = this.forming(s)
    const now = this.now()
    const change = c.close - c.open
    return {
      symbol: s.id,
      priceChange: fmt(change),
      priceChangePercent: ((Number(change) / Number(c.open)) * 100).toFixed(3),
      weightedAvgPrice: fmt(c.volume > 0n ? (c.quoteVolume * ONE) / c.volume : c.close),
      prevClosePrice: fmt(c.open),
      lastPrice: fmt(c.close),
      lastQty: '0.00000000',
      bidPrice: fmt(c.close - s.tick),
      bidQty: fmt(ONE),
      askPrice: fmt(c.close + s.tick),
      askQty: fmt(ONE),
      openPrice: fmt(c.open),
      highPrice: fmt(c.high),
      lowPrice: fmt(c.low),
      volume: fmt(c.volume),
      quoteVolume: fmt(c.quoteVolume),
      openTime: now - DAY_MS,
      closeTime: now,
      firstId: c.trades ? 0 : -1,
      lastId: c.trades ? c.trades - 1 : -1,
      count: c.trades,
    }
  }

  tickerPrice(s: VenueSymbol): Record<string, unknown> {
    return { symbol: s.id, price: fmt(this.last(s)) }
  }
}
