// Market data from an exchange through ccxt (SPEC 10): the closed daily candles of every catalogue
// pair, back-filled up to 300 days at start and fetched shortly after 00:00 UTC, before the first
// publish, retried with backoff. Never the candle still forming (an exchange serves today's as its
// last row), and every candle passes the rule a CSV import obeys. Written with upsertCandles, in one
// transaction opened after every venue call, so fills and breakers run as for an import; after the
// commit the feed tells whoever src/app.ts hooked on (the publisher), so a run left incomplete for
// want of candles completes then.
import { addDays, utcDay } from '../shared/dates.ts'
import { log } from '../shared/log.ts'
import type { Service } from '../store/service.ts'
import type { Queries, Store } from '../store/store.ts'
import { priceProblem } from '../market/csv.ts'
import { latestCandle, upsertCandles, type Candle } from '../market/prices.ts'
import { catalogue } from '../models/catalogue.ts'
import { openExchange, type ExchangeOptions } from './exchange.ts'
import { noteVenue } from './status.ts'
import { loadCcxt } from './ccxt-loader.ts'

/** The most recent closed days a back-fill reaches: what the slowest model needs, with room. */
export const BACKFILL_DAYS = 300
const DAY_MS = 86_400_000
/** Rows per request: Binance answers at most 1,000 klines. */
const PAGE = 1000
/** After 00:00 UTC: the exchange has closed yesterday's candle; the first model publishes at 00:05. */
const FETCH_AT_SECONDS = 30
const RETRY_FIRST_MS = 5_000
const RETRY_MAX_MS = 5 * 60_000

export interface Fetched {
  candles: Candle[]
  /** One line per pair that got nothing, or a row that was refused. */
  problems: string[]
  /** Pairs the exchange does not list: no retry will bring them. */
  unlisted: string[]
  /** A call got no answer (down, timeout, 5xx, 429), as opposed to an answer refusing something. */
  unanswered: boolean
}

/** Every pair a catalogue model trades, sorted. */
export async function cataloguePairs(db: Queries): Promise<string[]> {
  return [...new Set((await catalogue(db)).flatMap((m) => m.pairs))].sort()
}

/** The first day to fetch for a pair: `since` when given (fetched again), else the day after its newest candle, at most BACKFILL_DAYS back. */
async function firstDay(db: Queries, pair: string, today: string, since?: string): Promise<string> {
  if (since) return since
  const floor = addDays(today, -BACKFILL_DAYS)
  const newest = (await latestCandle(db, pair))?.date
  return newest && newest >= floor ? addDays(newest, 1) : floor
}

/**
 * Fetches the closed daily candles of `pairs` that are missing (or from `since`), up to yesterday.
 * Network and exchange errors of one pair are reported in `problems`, not thrown.
 *
 * @example
 * const { candles, problems } = await fetchClosedCandles(store.read, { exchange: 'binance' }, ['BTC/USDT'], new Date())
 */
export async function fetchClosedCandles(db: Queries, source: ExchangeOptions, pairs: string[], now: Date, since?: string): Promise<Fetched> {
  const today = utcDay(now)
  const exchange = await openExchange(source)
  const fetched: Fetched = { candles: [], problems: [], unlisted: [], unanswered: false }
  try {
    await exchange.loadMarkets()
  } catch (error) {
    fetched.problems.push(`${source.exchange}: its markets could not be loaded: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`)
    fetched.unanswered = true
    return fetched
  }
  for (const pair of pairs) {
    if (!exchange.markets?.[pair]) {
      fetched.problems.push(`${pair}: not listed on ${source.exchange}`)
      fetched.unlisted.push(pair)
      continue
    }
    let from = Date.parse(`${await firstDay(db, pair, today, since)}T00:00:00.000Z`)
    try {
      while (from < Date.parse(`${today}T00:00:00.000Z`)) {
        const rows = await exchange.fetchOHLCV(pair, '1d', from, PAGE)
        for (const [ms, open, high, low, close, volume] of rows) {
          const date = new Date(Number(ms)).toISOString().slice(0, 10)
          if (date >= today) continue // still forming
          const candle = { pair, date, open: Number(open), high: Number(high), low: Number(low), close: Number(close), volume: Number(volume) }
          const problem = priceProblem(candle) ?? (Number.isFinite(candle.volume) && candle.volume >= 0 ? undefined : 'volume must be a non-negative number')
          if (problem) fetched.problems.push(`${pair} ${date}: refused: ${problem}`)
          else fetched.candles.push(candle)
        }
        if (rows.length < PAGE) break
        from = Number(rows[rows.length - 1][0]) + DAY_MS
      }
    } catch (error) {
      fetched.problems.push(`${pair}: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`)
      // ccxt's ExchangeError family is an answer (a refusal); anything else never got one.
      if (!(error instanceof (await loadCcxt()).ExchangeError)) fetched.unanswered = true
    }
  }
  return fetched
}

/** Fetches what is missing, then writes it in one transaction of `store`; returns what was fetched. */
export async function fetchAndStore(store: Store, source: ExchangeOptions, now: Date, since?: string): Promise<Fetched> {
  const fetched = await fetchClosedCandles(store.read, source, await cataloguePairs(store.read), now, since)
  if (fetched.candles.length) await store.write((tx) => upsertCandles(tx, fetched.candles, now))
  return fetched
}

/** Pairs without yesterday's candle: the day's fetch is not done until this is empty. */
async function pairsBehind(db: Queries, now: Date, unlisted: Set<string>): Promise<string[]> {
  const yesterday = addDays(utcDay(now), -1)
  const behind: string[] = []
  for (const pair of await cataloguePairs(db)) if (!unlisted.has(pair) && ((await latestCandle(db, pair))?.date ?? '') < yesterday) behind.push(pair)
  return behind
}

/** Who hears of stored candles, handed in by src/app.ts (the publisher completes the runs that lacked them). */
export interface MarketDataHooks {
  /** After a fetch committed candles, with the feed's store (it opens its own writes); never throws into the feed. */
  onCandles?: (store: Store, now: Date) => void | Promise<void>
}

/**
 * serve --market-data: the back-fill at start, then each UTC day's candle 30 s after 00:00,
 * retried with doubling waits (5 s up to 5 min) while a pair is still behind.
 */
export function marketDataFeed(source: ExchangeOptions, hooks: MarketDataHooks = {}): Service {
  return {
    name: 'market-data',
    start({ store }) {
      let timer: NodeJS.Timeout | undefined
      let stopped = false
      let retry = RETRY_FIRST_MS
      let unlisted = new Set<string>()
      const schedule = (ms: number) => {
        if (stopped) return
        // run catches the venue's errors; a database one (reading what is behind) is logged and retried.
        timer = setTimeout(() => {
          run().catch((error) => {
            log({ level: 'error', msg: 'market data tick failed', exchange: source.exchange, error: error instanceof Error ? error.message : String(error) })
            schedule(retry)
          })
        }, ms)
        timer.unref()
      }
      const untilNextDay = () => {
        const now = Date.now()
        return Math.ceil(now / DAY_MS) * DAY_MS + FETCH_AT_SECONDS * 1000 - now
      }
      const run = async () => {
        const now = new Date()
        let stored = 0
        try {
          const fetched = await fetchAndStore(store, source, now)
          const { candles, problems } = fetched
          stored = candles.length
          unlisted = new Set(fetched.unlisted)
          noteVenue(source.exchange, !fetched.unanswered, 'market-data')
          if (candles.length) log({ level: 'info', msg: 'market data fetched', exchange: source.exchange, candles: candles.length })
          for (const problem of problems) log({ level: 'warn', msg: 'market data problem', exchange: source.exchange, detail: problem })
        } catch (error) {
          noteVenue(source.exchange, false, 'market-data')
          log({ level: 'warn', msg: 'market data fetch failed', exchange: source.exchange, error: error instanceof Error ? error.message : String(error) })
        }
        if (stopped) return
        if (stored) {
          try {
            await hooks.onCandles?.(store, new Date())
          } catch (error) {
            log({ level: 'error', msg: 'new candles hook failed', exchange: source.exchange, error: error instanceof Error ? error.message : String(error) })
          }
        }
        const behind = await pairsBehind(store.read, new Date(), unlisted)
        if (behind.length === 0) {
          retry = RETRY_FIRST_MS
          schedule(untilNextDay())
          return
        }
        log({ level: 'warn', msg: 'market data behind; retrying', exchange: source.exchange, pairs: behind.length, retry_ms: retry })
        schedule(retry)
        retry = Math.min(retry * 2, RETRY_MAX_MS)
      }
      schedule(0)
      return () => {
        stopped = true
        clearTimeout(timer)
      }
    },
  }
}
