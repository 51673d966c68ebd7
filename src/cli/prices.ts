import { readFileSync } from 'node:fs'
import { parseArgs, str, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig } from '../config.ts'
import { openApp } from '../app.ts'
import { parseCandlesCsv } from '../market/csv.ts'
import { upsertCandles } from '../market/prices.ts'
import { write } from '../store/db.ts'
import { utcDay } from '../shared/dates.ts'

export const pricesImport: CliCommand = {
  name: 'prices import',
  usage: 'bulwark prices import FILE.csv [--data-dir DIR]',
  summary: 'upsert daily candles from a CSV with header pair,date,open,high,low,close,volume; all or nothing',
  examples: ['bulwark prices import candles-2026-11-22.csv'],
  run(argv) {
    const args = parseArgs(argv, { 'data-dir': 'string' })
    const [file, extra] = args.positional
    if (!file) throw new UsageError('FILE.csv is required')
    if (extra) throw new UsageError(`unexpected argument ${extra}`)
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (err) {
      process.stderr.write(`error: cannot read ${file}: ${(err as Error).message}\n`)
      return 1
    }
    const now = new Date()
    const { candles, errors } = parseCandlesCsv(text, utcDay(now))
    if (errors.length) {
      for (const e of errors.slice(0, 50)) process.stderr.write(`error: ${file}: ${e}\n`)
      if (errors.length > 50) process.stderr.write(`error: ... and ${errors.length - 50} more\n`)
      process.stderr.write('nothing was imported\n')
      return 1
    }
    openApp(commandConfig(str(args, 'data-dir')))
    const count = write(() => upsertCandles(candles, now))
    const pairs = new Set(candles.map((c) => c.pair)).size
    process.stdout.write(`imported ${count} candles for ${pairs} pairs\n`)
    return 0
  },
}
