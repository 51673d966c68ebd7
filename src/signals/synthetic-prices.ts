// The demo's synthetic price history. Table synthetic_prices (pair, seed, first_date, last_date,
// loaded_at) marks the generated pairs; the page at / shows a "synthetic" banner while any exist.
//
// The history is a pure function of (seed, pair, date): a random walk with a slowly wandering
// drift (so trends, reversals and breakouts all occur) from a fixed origin date, so a restart on a
// later day extends the same series instead of inventing a new one, and so does a running demo
// server each midnight UTC (before the first model's schedule). Real prices always win: a pair that
// already has candles and no synthetic mark is never touched.
import { query, type Queries, type Tx } from '../store/store.ts'
import { addDays, utcDay } from '../shared/dates.ts'
import { prng } from '../shared/prng.ts'
import { upsertCandles, type Candle } from '../market/prices.ts'
import { catalogue } from '../models/catalogue.ts'

export const DEMO_SEED = 42
const ORIGIN = '2024-01-01'
const HISTORY_DAYS = 400

// Rough price levels, so the demo looks like the market it imitates; other pairs start at 100.
const START: Record<string, number> = {
  'BTC/USDT': 60000,
  'ETH/USDT': 3000,
  'SOL/USDT': 150,
  'BNB/USDT': 550,
  'XRP/USDT': 0.6,
  'ADA/USDT': 0.45,
  'DOGE/USDT': 0.12,
  'AVAX/USDT': 30,
  'LINK/USDT': 15,
  'DOT/USDT': 6,
  'LTC/USDT': 80,
  'TRX/USDT': 0.12,
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

const round = (n: number) => Number(n.toPrecision(8))

/** Synthetic daily candles of one pair from `from` to `to` (inclusive); reproducible per seed. */
export function syntheticCandles(pair: string, seed: number, from: string, to: string, origin = ORIGIN): Candle[] {
  const random = prng(fnv1a(`${seed}:${pair}`))
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
  const start = START[pair] ?? 100
  const out: Candle[] = []
  let close = start
  let drift = 0
  for (let date = origin; date <= to; date = addDays(date, 1)) {
    drift = 0.97 * drift + 0.0015 * normal()
    const pull = 0.002 * Math.log(start / close)
    const open = close
    close = open * Math.exp(drift + pull + 0.03 * normal())
    const high = Math.max(open, close) * (1 + 0.01 * Math.abs(normal()))
    const low = Math.min(open, close) * (1 - 0.01 * Math.abs(normal()))
    const volume = 1000 * (1 + random() * 4)
    if (date >= from) out.push({ pair, date, open: round(open), high: round(high), low: round(low), close: round(close), volume: round(volume) })
  }
  return out
}

const pairHasPrices = query<[string], { n: number }>('SELECT count(*) AS n FROM prices WHERE pair = ?')
const isSynthetic = query<[string], { pair: string }>('SELECT pair FROM synthetic_prices WHERE pair = ?')
const markSyntheticText = `INSERT INTO synthetic_prices (pair, seed, first_date, last_date, loaded_at) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (pair) DO UPDATE SET last_date = MAX_OF(synthetic_prices.last_date, excluded.last_date), loaded_at = excluded.loaded_at`
// SQLite's two-argument max() is PostgreSQL's greatest().
const markSynthetic = query<[string, number, string, string, string]>({
  sqlite: markSyntheticText.replace('MAX_OF', 'max'),
  postgres: markSyntheticText.replace('MAX_OF', 'greatest'),
})
const loadedSpan = query<[], { first: string | null; last: string | null }>('SELECT min(first_date) AS first, min(last_date) AS last FROM synthetic_prices')

/** The dates a start at `now` covers: HISTORY_DAYS up to yesterday, not before the origin. */
export function syntheticWindow(now: Date): { from: string; to: string } {
  const to = addDays(utcDay(now), -1)
  const from = addDays(to, -(HISTORY_DAYS - 1))
  return { from: from < ORIGIN ? ORIGIN : from, to }
}

/** The universe pairs the demo may fill: those already synthetic and those with no candle at all. */
export async function syntheticPairs(db: Queries): Promise<string[]> {
  const pairs = [...new Set((await catalogue(db)).flatMap((m) => m.pairs))].sort()
  const mayFill: string[] = []
  for (const pair of pairs) {
    if ((await db.get(isSynthetic, [pair])) || (await db.get(pairHasPrices, [pair]))!.n === 0) mayFill.push(pair)
  }
  return mayFill
}

/** The first and the last date every synthetic pair has loaded, or nulls before the first load. */
export async function syntheticSpan(db: Queries): Promise<{ first: string | null; last: string | null }> {
  return (await db.get(loadedSpan)) ?? { first: null, last: null }
}

/**
 * Imports generated candles (their import runs the price listeners: the paper broker fills at them)
 * and marks their pairs synthetic from `first`, in a savepoint of `tx`.
 */
export async function importSynthetic(tx: Tx, candles: Candle[], first: string, now: Date, seed = DEMO_SEED): Promise<void> {
  await tx.savepoint(async () => {
    if (candles.length === 0) return
    await upsertCandles(tx, candles, now)
    const last = new Map<string, string>()
    for (const c of candles) if ((last.get(c.pair) ?? '') < c.date) last.set(c.pair, c.date)
    for (const [pair, date] of last) await tx.run(markSynthetic, [pair, seed, first, date, now.toISOString()])
  })
}

/** Loads the synthetic history up to yesterday for every pair it may touch, in `tx`; returns those pairs. */
export async function loadSyntheticHistory(tx: Tx, now: Date, seed = DEMO_SEED): Promise<string[]> {
  const { from, to } = syntheticWindow(now)
  const pairs = await syntheticPairs(tx)
  await importSynthetic(
    tx,
    pairs.flatMap((pair) => syntheticCandles(pair, seed, from, to)),
    from,
    now,
    seed,
  )
  return pairs
}
