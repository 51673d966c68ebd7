// Back-fill cost: 300 closed days of 15 pairs (the catalogue's 12 and 3 more the venue lists) through
// the real ccxt from the test venue (in a process of its own), written to an empty database through
// the path `serve --market-data` takes, against a baseline in the same run:
// the same kline requests made with node:https (keep-alive, trusting the test CA),
// parsed, nothing stored. Target: under 5 s. Median of --reps runs, each on a fresh data dir.
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/market-data.ts [--reps 5]
import { readFileSync } from 'node:fs'
import { Agent, get } from 'node:https'
import { openApp } from '../../src/app.ts'
import { commandConfig } from '../../src/config.ts'
import { upsertCandles } from '../../src/market/prices.ts'
import { cataloguePairs, fetchClosedCandles } from '../../src/venues/market-data.ts'
import { tempDir } from '../support/harness.ts'
import { CATALOGUE_SYMBOLS, startVenueChild } from '../support/venue/index.ts'

/** Three pairs beyond the catalogue, so that the figure is the 15 pairs. */
const EXTRA = [
  { base: 'ATOM', quote: 'USDT', tickSize: '0.001', stepSize: '0.01', minQty: '0.01', minNotional: '5', startPrice: 8 },
  { base: 'NEAR', quote: 'USDT', tickSize: '0.001', stepSize: '0.1', minQty: '0.1', minNotional: '5', startPrice: 5 },
  { base: 'UNI', quote: 'USDT', tickSize: '0.001', stepSize: '0.01', minQty: '0.01', minNotional: '5', startPrice: 7 },
]

const reps = Number(process.argv[process.argv.indexOf('--reps') + 1] || 5)
const DAY_MS = 86_400_000

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

async function main(): Promise<void> {
  const venue = await startVenueChild({ symbols: [...CATALOGUE_SYMBOLS, ...EXTRA] })
  try {
    const first = await openApp(commandConfig(tempDir('bulwark-bench-md')))
    const pairs = [...(await cataloguePairs(first.store.read)), ...EXTRA.map((s) => `${s.base}/${s.quote}`)]
    await first.close()
    const agent = new Agent({ keepAlive: true, ca: readFileSync(venue.caFile, 'utf8') })
    const klines = (url: string) =>
      new Promise<unknown[]>((resolve, reject) => {
        get(url, { agent }, (res) => {
          let body = ''
          res.setEncoding('utf8')
          res.on('data', (chunk) => (body += chunk))
          res.on('end', () => resolve(JSON.parse(body)))
        }).on('error', reject)
      })
    const timesBulwark: number[] = []
    const timesBare: number[] = []
    let candles = 0
    for (let i = 0; i < reps; i++) {
      const app = await openApp(commandConfig(tempDir('bulwark-bench-md')))
      let t0 = performance.now()
      const now = new Date()
      const fetched = await fetchClosedCandles(app.store.read, { exchange: 'binance', venueUrl: venue.url, caFile: venue.caFile }, pairs, now)
      await app.store.write((tx) => upsertCandles(tx, fetched.candles, now))
      timesBulwark.push(performance.now() - t0)
      candles = fetched.candles.length
      if (fetched.problems.length) throw new Error(fetched.problems.join('\n'))
      await app.close()

      const start = Date.now() - 301 * DAY_MS
      t0 = performance.now()
      let rows = 0
      for (const pair of pairs) {
        const symbol = pair.replace('/', '')
        rows += (await klines(`${venue.url}/api/v3/klines?symbol=${symbol}&interval=1d&startTime=${start}&limit=1000`)).length
      }
      timesBare.push(performance.now() - t0)
      if (rows < candles) throw new Error(`baseline saw ${rows} rows, fewer than ${candles}`)
    }
    const ours = median(timesBulwark)
    const bare = median(timesBare)
    console.log(
      `back-fill: ${pairs.length} pairs x 300 days = ${candles} candles through ccxt from the test venue, median of ${reps} (Node ${process.version})`,
    )
    console.log(`  bulwark fetch + validate + store   ${ours.toFixed(0)} ms  (runs: ${timesBulwark.map((t) => t.toFixed(0)).join(', ')})`)
    console.log(`  bare fetch of the same klines      ${bare.toFixed(0)} ms  (runs: ${timesBare.map((t) => t.toFixed(0)).join(', ')})`)
    console.log(`  ratio ${(ours / bare).toFixed(2)}; target < 5000 ms: ${ours < 5000 ? 'met' : 'MISSED'}`)
    agent.destroy()
  } finally {
    await venue.close()
  }
}

await main()
