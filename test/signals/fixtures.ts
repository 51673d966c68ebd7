// Candle series designed so that each seeded model's rule has a known answer per pair, imported
// through the real `bulwark prices import`. Every candle: open = close, high = close + 0.5,
// low = close - 0.5, so a one-unit daily move is a Donchian breakout and a flat series is not.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as assert from 'uvu/assert'
import { openTestDatabase } from '../support/database.ts'
import { cli, tempDir } from '../support/harness.ts'

export const DAY = 86_400_000

/** Today (UTC) plus `days`, as YYYY-MM-DD. */
export function day(days = 0, from = new Date()): string {
  return new Date(Date.parse(from.toISOString().slice(0, 10)) + days * DAY).toISOString().slice(0, 10)
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(date) + days * DAY).toISOString().slice(0, 10)
}

const LENGTH = 260 // the trend follower reads 250 candles
const rising = () => Array.from({ length: LENGTH }, (_, i) => 100 + i)
const falling = () => Array.from({ length: LENGTH }, (_, i) => 400 - i)
const flat = () => Array(LENGTH).fill(100)
// Ten 100s and nine 102s alternate before the last close: mean and deviation are known (see
// test/models), and the last close decides the z-score: 90 -> -4.04, 100 -> -0.90, 110 -> 3.91.
const swinging = (last: number) => [...Array.from({ length: LENGTH - 1 }, (_, i) => (i % 2 === 0 ? 100 : 102)), last]

export const SERIES: Record<string, () => number[]> = {
  'BTC/USDT': rising,
  'ETH/USDT': falling,
  'SOL/USDT': flat,
  'BNB/USDT': rising,
  'XRP/USDT': falling,
  'LTC/USDT': rising,
  'TRX/USDT': flat,
  'ADA/USDT': () => swinging(90),
  'DOGE/USDT': () => swinging(110),
  'AVAX/USDT': () => swinging(100),
  'LINK/USDT': flat,
  'DOT/USDT': () => swinging(90),
}

/** The action each model must publish for each pair of its universe on these series. */
export const EXPECTED: Record<string, Record<string, string>> = {
  'trend-follower': { 'BTC/USDT': 'ENTER_LONG', 'ETH/USDT': 'EXIT_LONG', 'SOL/USDT': 'HOLD', 'BNB/USDT': 'ENTER_LONG', 'XRP/USDT': 'EXIT_LONG' },
  'mean-reversion': { 'ADA/USDT': 'ENTER_LONG', 'DOGE/USDT': 'EXIT_LONG', 'AVAX/USDT': 'HOLD', 'LINK/USDT': 'EXIT_LONG', 'DOT/USDT': 'ENTER_LONG' },
  'breakout-momentum': { 'BTC/USDT': 'ENTER_LONG', 'ETH/USDT': 'EXIT_LONG', 'SOL/USDT': 'HOLD', 'LTC/USDT': 'ENTER_LONG', 'TRX/USDT': 'HOLD' },
}

export const DIRECTION: Record<string, string> = { ENTER_LONG: 'LONG', HOLD: 'HOLD', EXIT_LONG: 'DE-RISK' }

export function lastClose(pair: string): number {
  const closes = SERIES[pair]()
  return closes[closes.length - 1]
}

/** CSV rows of `pairs`, the series' last candle dated `lastDate`; `drop` leaves the newest n out. */
export function seriesCsv(pairs: string[], lastDate: string, drop = 0): string {
  const lines = ['pair,date,open,high,low,close,volume']
  for (const pair of pairs) {
    const closes = SERIES[pair]()
    closes.forEach((close, i) => {
      const back = closes.length - 1 - i
      if (back < drop) return
      lines.push(`${pair},${addDays(lastDate, -back)},${close},${close + 0.5},${close - 0.5},${close},1000`)
    })
  }
  return `${lines.join('\n')}\n`
}

export async function importCsv(dataDir: string, text: string): Promise<void> {
  const file = join(tempDir('candles'), 'candles.csv')
  writeFileSync(file, text)
  const res = await cli(['prices', 'import', file], { dataDir })
  assert.is(res.code, 0, res.stderr)
}

export function importSeries(dataDir: string, pairs: string[], lastDate: string, drop = 0): Promise<void> {
  return importCsv(dataDir, seriesCsv(pairs, lastDate, drop))
}

/** Reads the data dir's database directly (on either engine), as an auditor would. */
export async function query<T = any>(dataDir: string, sql: string, ...params: unknown[]): Promise<T[]> {
  const db = await openTestDatabase(dataDir, { readonly: true })
  try {
    return await db.all<T>(sql, params)
  } finally {
    await db.close()
  }
}

/** Polls until `check` returns a value (not a timing assertion: it only bounds a wait). */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, what: string, limitMs = 20_000): Promise<T> {
  const end = Date.now() + limitMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

export const ALL_PAIRS = Object.keys(SERIES)
