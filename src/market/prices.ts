// Daily candles. Table prices (pair, date, open, high, low, close, volume), one row per pair and
// UTC date. Listeners (the paper broker) run inside the import transaction, so a fill and the price
// that caused it land together.
import { utcDay } from '../shared/dates.ts'
import { query, type Queries, type Tx } from '../store/store.ts'

export interface Candle {
  pair: string
  date: string
  open: number
  high: number
  low: number
  close: number
  volume: number
}

const upsert = query<Candle>(`INSERT INTO prices (pair, date, open, high, low, close, volume) VALUES (@pair, @date, @open, @high, @low, @close, @volume)
  ON CONFLICT (pair, date) DO UPDATE SET open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close, volume = excluded.volume`)
// PostgreSQL answers each statement over the network: candles go in a thousand at a time, as arrays.
const upsertMany = query<[string[], string[], number[], number[], number[], number[], (number | null)[]]>(`
  INSERT INTO prices (pair, date, open, high, low, close, volume)
  SELECT * FROM unnest(?::text[], ?::text[], ?::float8[], ?::float8[], ?::float8[], ?::float8[], ?::float8[])
  ON CONFLICT (pair, date) DO UPDATE SET open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close, volume = excluded.volume`)
const BATCH = 1000
const latest = query<[string], Candle>('SELECT * FROM prices WHERE pair = ? ORDER BY date DESC LIMIT 1')

export type PriceListener = (tx: Tx, latestByPair: Map<string, Candle>, now: Date) => Promise<void>
const listeners: PriceListener[] = []

/** Called with the newest imported candle of each pair, inside the import's transaction, one listener after another (each awaited). */
export function onNewPrices(listener: PriceListener): void {
  listeners.push(listener)
}

/** Upserts candles (already validated) in a savepoint of the caller's transaction; returns how many were written. */
export async function upsertCandles(tx: Tx, candles: Candle[], now = new Date()): Promise<number> {
  // The CSV reader refuses these with line numbers; this guards every other writer.
  const today = utcDay(now)
  const open = candles.find((c) => c.date >= today)
  if (open) throw new Error(`candle ${open.pair} ${open.date} is not closed yet (today is ${today} UTC)`)
  return tx.savepoint(async () => {
    const newest = new Map<string, Candle>()
    for (const c of candles) {
      const seen = newest.get(c.pair)
      if (!seen || seen.date < c.date) newest.set(c.pair, c)
    }
    if (tx.engine === 'postgres') await upsertBatches(tx, candles)
    else for (const c of candles) await tx.run(upsert, c)
    for (const listener of listeners) await listener(tx, newest, now)
    return candles.length
  })
}

/** The candles in batches of arrays; within one, the last candle of a (pair, date) wins, as row by row. */
async function upsertBatches(tx: Tx, candles: Candle[]): Promise<void> {
  for (let start = 0; start < candles.length; start += BATCH) {
    const last = new Map<string, Candle>()
    for (const c of candles.slice(start, start + BATCH)) last.set(`${c.pair}\n${c.date}`, c)
    const rows = [...last.values()]
    const column = <K extends keyof Candle>(key: K) => rows.map((c) => c[key])
    await tx.run(upsertMany, [
      column('pair'),
      column('date'),
      column('open'),
      column('high'),
      column('low'),
      column('close'),
      column('volume') as (number | null)[],
    ] as never)
  }
}

export function latestCandle(db: Queries, pair: string): Promise<Candle | undefined> {
  return db.get(latest, [pair])
}
