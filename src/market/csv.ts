// Parses a daily-candle CSV: header pair,date,open,high,low,close,volume. Every bad row is reported
// with its line number; the caller applies nothing unless the whole file is good. A candle dated
// today (UTC) or later has not closed: the paper broker would fill at a price that does not exist
// yet, and a typo (2099) would stay the newest price of its pair, so it refuses the file too.
import { dateProblem } from '../shared/dates.ts'
import type { Candle } from './prices.ts'

const HEADER = 'pair,date,open,high,low,close,volume'
const PAIR = /^[A-Z0-9]{1,20}\/[A-Z0-9]{1,20}$/

export interface CsvResult {
  candles: Candle[]
  errors: string[]
}

/** What is wrong with a candle's prices, if anything: the rule every source of candles obeys (a CSV, an exchange). */
export function priceProblem(c: Pick<Candle, 'open' | 'high' | 'low' | 'close'>): string | undefined {
  if (!(c.open > 0 && c.close > 0 && c.low > 0)) return 'prices must be positive'
  if (!(c.high >= Math.max(c.open, c.close, c.low) && c.low <= Math.min(c.open, c.close))) return 'high/low do not contain open and close'
  return undefined
}

/** `today` is the current UTC date, YYYY-MM-DD: the first date whose candle is not closed. */
export function parseCandlesCsv(text: string, today: string): CsvResult {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/)
  const errors: string[] = []
  const candles: Candle[] = []
  if ((lines[0] ?? '').trim().toLowerCase() !== HEADER) {
    return { candles, errors: [`line 1: header must be "${HEADER}"`] }
  }
  const seen = new Set<string>()
  lines.slice(1).forEach((line, i) => {
    const lineNo = i + 2
    if (line.trim() === '') return
    const cells = line.split(',').map((c) => c.trim())
    if (cells.length !== 7) {
      errors.push(`line ${lineNo}: expected 7 fields, got ${cells.length}`)
      return
    }
    const [pair, date, ...rest] = cells
    if (!PAIR.test(pair)) {
      errors.push(`line ${lineNo}: pair ${JSON.stringify(pair)} must look like BTC/USDT`)
      return
    }
    const badDate = dateProblem(date)
    if (badDate) {
      errors.push(`line ${lineNo}: date ${JSON.stringify(date)} ${badDate}`)
      return
    }
    if (date >= today) {
      errors.push(`line ${lineNo}: ${pair} ${date} is not closed yet (today is ${today} UTC); only candles up to yesterday can be imported`)
      return
    }
    const numbers = rest.map((v) => (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(v) ? Number(v) : NaN))
    const names = ['open', 'high', 'low', 'close', 'volume']
    const bad = numbers.findIndex((n) => !Number.isFinite(n) || n < 0)
    if (bad !== -1) {
      errors.push(`line ${lineNo}: ${names[bad]} ${JSON.stringify(rest[bad])} must be a non-negative number`)
      return
    }
    const [open, high, low, close, volume] = numbers
    const problem = priceProblem({ open, high, low, close })
    if (problem) {
      errors.push(`line ${lineNo}: ${problem}`)
      return
    }
    const key = `${pair} ${date}`
    if (seen.has(key)) {
      errors.push(`line ${lineNo}: ${pair} ${date} appears twice`)
      return
    }
    seen.add(key)
    candles.push({ pair, date, open, high, low, close, volume })
  })
  return { candles, errors }
}
