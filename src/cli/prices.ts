import { readFileSync } from 'node:fs'
import { parseArgs, required, str, UsageError } from './args.ts'
import type { CliCommand } from './command.ts'
import { commandConfig, exchangeId, VENUE_FLAGS, venueSettings, type VenueSettings, STORE_FLAGS } from '../config.ts'
import { openApp } from '../app.ts'
import { parseCandlesCsv } from '../market/csv.ts'
import { upsertCandles } from '../market/prices.ts'
import { parseDate, utcDay } from '../shared/dates.ts'
import { BACKFILL_DAYS, fetchAndStore } from '../venues/market-data.ts'
import { unknownExchange } from '../venues/exchange-ids.ts'

export const pricesImport: CliCommand = {
  name: 'prices import',
  usage: 'bulwark prices import FILE.csv [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary: 'upsert daily candles from a CSV with header pair,date,open,high,low,close,volume; all or nothing',
  examples: ['bulwark prices import candles-2026-11-22.csv'],
  async run(argv) {
    const args = parseArgs(argv, { ...STORE_FLAGS })
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
    const app = await openApp(commandConfig(args.flags))
    try {
      const count = await app.store.write((tx) => upsertCandles(tx, candles, now))
      const pairs = new Set(candles.map((c) => c.pair)).size
      process.stdout.write(`imported ${count} candles for ${pairs} pairs\n`)
      return 0
    } finally {
      await app.close()
    }
  },
}

export const pricesFetch: CliCommand = {
  name: 'prices fetch',
  usage: 'bulwark prices fetch --exchange ID [--since YYYY-MM-DD] [--venue-url URL] [--ca-file FILE] [--data-dir DIR] [--secrets-dir DIR] [--database URL]',
  summary: `fetch the closed daily candles of every catalogue pair from an exchange (ccxt id); what is missing, up to ${BACKFILL_DAYS} days back, or from --since`,
  examples: ['bulwark prices fetch --exchange binance', 'bulwark prices fetch --exchange binance --venue-url https://127.0.0.1:9443 --ca-file lan-ca.pem'],
  async run(argv) {
    const args = parseArgs(argv, { exchange: 'string', since: 'string', ...VENUE_FLAGS, ...STORE_FLAGS })
    if (args.positional.length) throw new UsageError(`unexpected argument ${args.positional[0]}`)
    const now = new Date()
    let exchange: string | undefined
    let venues: VenueSettings
    try {
      exchange = exchangeId(required(args, 'exchange'), '--exchange')
      venues = venueSettings(args.flags)
    } catch (error) {
      throw new UsageError((error as Error).message)
    }
    const unknown = await unknownExchange(exchange!)
    if (unknown) throw new UsageError(`--exchange ${unknown}`)
    const since = str(args, 'since')
    if (since !== undefined) {
      const parsed = parseDate(since)
      if (!parsed.ok) throw new UsageError(`--since ${JSON.stringify(since)} ${parsed.reason}`)
      if (since >= utcDay(now)) throw new UsageError(`--since ${since} has no closed candle yet; the latest is yesterday (UTC)`)
    }
    const app = await openApp(commandConfig(args.flags))
    try {
      // fetchAndStore reaches the exchange first, then opens its own change for what it fetched.
      const fetched = await fetchAndStore(app.store, { exchange: exchange!, venueUrl: venues.url, caFile: venues.caFile }, now, since)
      for (const problem of fetched.problems) process.stderr.write(`warning: ${problem}\n`)
      const pairs = new Set(fetched.candles.map((c) => c.pair)).size
      process.stdout.write(`fetched ${fetched.candles.length} candles for ${pairs} pairs from ${exchange}\n`)
      return fetched.candles.length === 0 && fetched.problems.length > 0 ? 1 : 0
    } finally {
      await app.close()
    }
  },
}
