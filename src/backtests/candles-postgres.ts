// The candles a backtest reads for one pair on PostgreSQL, in its worker thread (./worker.ts) over
// the worker's own pg client: what ./candles.ts's candleReader reads from the SQLite file, with its
// semantics (the warm-up from the (needed - 1)th candle before from, the range, the dates only for
// a pair with a gap), in one round trip per pair: the closes (or highs, lows and closes) come as one
// bytea per column, each double's 8 bytes as float8send gives them (big-endian IEEE 754), one row
// per pair: bit for bit what was stored, with no decimal text to print or parse, several times
// faster than a row per candle. Loaded by the worker only on PostgreSQL (a dynamic import): the
// SQLite path never evaluates pg.
import { numberTypes } from '../store/postgres/types.ts'
import pg from 'pg'
import type { Strategy } from '../models/strategies.ts'
import type { PairCandles } from './candles.ts'

/** The candles of `pair` a backtest of `strategy` over the calendar reads, as ReadCandles, asynchronously. */
export type ReadCandlesAsync = (
  strategy: Pick<Strategy, 'reads'>,
  pair: string,
  days: Map<string, number>,
  from: string,
  to: string,
  needed: number,
) => Promise<PairCandles>

/** A client of the worker's own on `url`. */
export async function connectCandles(url: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 5000,
    query_timeout: 35_000,
    keepAlive: true,
    application_name: 'bulwark backtest',
    types: numberTypes,
  })
  // A connection that dies while idle: the next backtest's query fails and the worker opens a new one.
  client.on('error', () => {})
  await client.connect()
  // Per statement (one pair's candles): far above what one takes, bounded should the server stall.
  // SET rather than a startup parameter, which PgBouncer refuses.
  await client.query('SET statement_timeout = 30000')
  return client
}

// The range's closes (or bars) from the warm-up's start, with the range's count, first and last
// date: the warm-up starts at the (needed - 1)th candle before from, or at the first candle when
// there are fewer (''), or at from when the strategy needs one candle only.
const WARM_UP_START = `COALESCE((SELECT date FROM prices WHERE pair = $1 AND date < $2 ORDER BY date DESC LIMIT 1 OFFSET $4), '')`
const packed = (column: string) => `string_agg(float8send(${column}), ''::bytea ORDER BY date) AS ${column}`
const columns = (reads: Strategy['reads']) => (reads === 'closes' ? packed('close') : `${packed('high')}, ${packed('low')}, ${packed('close')}`)
const shape = `count(*) FILTER (WHERE date >= $2) AS in_range, min(date) FILTER (WHERE date >= $2) AS first, max(date) FILTER (WHERE date >= $2) AS last`
const candlesQuery = (reads: Strategy['reads'], warmUp: boolean) =>
  `SELECT ${columns(reads)}, ${shape} FROM prices WHERE pair = $1 AND date >= ${warmUp ? WARM_UP_START : '$2'} AND date <= $3`
const QUERIES = {
  closes: { warm: candlesQuery('closes', true), cold: candlesQuery('closes', false) },
  bars: { warm: candlesQuery('bars', true), cold: candlesQuery('bars', false) },
}
const DATES_BETWEEN = 'SELECT array_agg(date ORDER BY date) AS dates FROM prices WHERE pair = $1 AND date >= $2 AND date <= $3'

type Row = { close: Buffer | null; high?: Buffer | null; low?: Buffer | null; in_range: number; first: string | null; last: string | null }

/** float8send's bytes, concatenated, as the doubles they are. */
function doubles(bytes: Buffer | null | undefined): Float64Array {
  if (!bytes) return new Float64Array(0)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const out = new Float64Array(bytes.byteLength >> 3)
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat64(i << 3, false)
  return out
}

/** A ReadCandlesAsync over `client`, its statements prepared once per connection (named). */
export function postgresCandleReader(client: pg.Client): ReadCandlesAsync {
  return async (strategy, pair, days, from, to, needed) => {
    const warmUp = needed > 1
    const text = QUERIES[strategy.reads][warmUp ? 'warm' : 'cold']
    const { rows } = await client.query<Row>({
      name: `backtest_${strategy.reads}_${warmUp ? 'warm' : 'cold'}`,
      text,
      values: warmUp ? [pair, from, to, needed - 2] : [pair, from, to],
    })
    const row = rows[0]
    const candles: PairCandles = { day: new Int32Array(0), close: new Float64Array(0), high: new Float64Array(0), low: new Float64Array(0) }
    candles.close = doubles(row.close)
    if (strategy.reads !== 'closes') {
      candles.high = doubles(row.high)
      candles.low = doubles(row.low)
    }
    const inRange = row.in_range
    const n = candles.close.length
    const warmUpLength = n - inRange
    candles.day = new Int32Array(n).fill(-1)
    if (inRange === 0) return candles
    const firstDay = days.get(row.first!)!
    if (days.get(row.last!)! - firstDay + 1 === inRange) {
      for (let j = 0; j < inRange; j++) candles.day[warmUpLength + j] = firstDay + j
    } else {
      const dates = (await client.query<{ dates: string[] }>({ name: 'backtest_dates', text: DATES_BETWEEN, values: [pair, from, to] })).rows[0].dates
      for (let j = 0; j < inRange; j++) candles.day[warmUpLength + j] = days.get(dates[j])!
    }
    return candles
  }
}
