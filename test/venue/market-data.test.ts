// Market data through the real ccxt against the test venue: `bulwark prices fetch` and
// `serve --market-data` back-fill the closed daily candles of every catalogue pair (never the one
// still forming), fetch only what is missing, refuse bad flags, and report a venue that is down.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cli, startServer, tempDir } from '../support/harness.ts'
import { startVenue, type Venue } from '../support/venue/index.ts'
import { withDb } from '../trading/market.ts'

const test = suite('venue: market data')
let venue: Venue
const DAY_MS = 86_400_000

function flags(): string[] {
  return ['--exchange', 'binance', '--venue-url', venue.url, '--ca-file', venue.caFile]
}

function today(): string {
  return new Date().toISOString().slice(0, 10)
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10)
}

/** The closed candles the venue serves for a pair, as rows [date, open, high, low, close, volume]. */
async function venueCandles(pair: string, from: string): Promise<[string, number, number, number, number, number][]> {
  const rows = await venue.candles(pair)
  return rows
    .map((r) => [new Date(Number(r[0])).toISOString().slice(0, 10), ...r.slice(1, 6).map(Number)] as [string, number, number, number, number, number])
    .filter(([date]) => date >= from && date < today())
}

async function storedCandles(dataDir: string, pair: string): Promise<[string, number, number, number, number, number][]> {
  const rows = await withDb({ dataDir }, (db) => db.all('SELECT date, open, high, low, close, volume FROM prices WHERE pair = ? ORDER BY date', [pair]))
  return rows.map((r) => [r.date, r.open, r.high, r.low, r.close, r.volume])
}

async function catalogPairs(dataDir: string): Promise<string[]> {
  const models = await withDb({ dataDir }, (db) =>
    db.all<{ universe: string; quote_asset: string }>("SELECT universe, quote_asset FROM models WHERE status != 'RETIRED'"),
  )
  return [...new Set(models.flatMap((m) => (JSON.parse(m.universe) as string[]).map((asset) => `${asset}/${m.quote_asset}`)))].sort()
}

test.before(async () => {
  venue = await startVenue()
})
test.after(async () => {
  await venue.close()
})

test('prices fetch back-fills 300 closed days of every catalogue pair, equal to what the venue serves, and then only what is missing', async () => {
  const dataDir = tempDir()
  const res = await cli(['prices', 'fetch', ...flags()], { dataDir })
  assert.is(res.code, 0, res.stderr)
  const pairs = await catalogPairs(dataDir)
  assert.ok(pairs.length >= 10, `catalogue pairs: ${pairs}`)
  assert.is(res.stdout, `fetched ${300 * pairs.length} candles for ${pairs.length} pairs from binance\n`)
  const first = addDays(today(), -300)
  for (const pair of pairs) {
    const stored = await storedCandles(dataDir, pair)
    assert.equal(stored, await venueCandles(pair, first), pair)
    assert.is(stored[stored.length - 1][0], addDays(today(), -1), `${pair}: yesterday is the newest, today's forming candle is left out`)
  }
  const again = await cli(['prices', 'fetch', ...flags()], { dataDir })
  assert.is(again.code, 0, again.stderr)
  assert.is(again.stdout, `fetched 0 candles for 0 pairs from binance\n`)
  const since = addDays(today(), -320)
  const older = await cli(['prices', 'fetch', ...flags(), '--since', since], { dataDir })
  assert.is(older.code, 0, older.stderr)
  assert.equal(await storedCandles(dataDir, 'BTC/USDT'), await venueCandles('BTC/USDT', since))
})

test('bad flags are usage errors (exit 2) and a venue that is down is reported per pair (exit 1)', async () => {
  const dataDir = tempDir()
  for (const [args, message] of [
    [['--exchange', 'binance', '--venue-url', `${venue.url}/api`], /--venue-url takes a scheme, a host and a port only/],
    [['--exchange', 'Binance!'], /--exchange must be a ccxt exchange id/],
    [['--exchange', 'binance', '--since', today()], /--since .* has no closed candle yet/],
    [['--exchange', 'binance', '--since', '2025-02-30'], /--since "2025-02-30"/],
    [[], /--exchange is required/],
    [['--exchange', 'binance', '--ca-file', '/nonexistent/ca.pem'], /--ca-file \/nonexistent\/ca.pem: ENOENT/],
  ] as const) {
    const res = await cli(['prices', 'fetch', ...args], { dataDir })
    assert.is(res.code, 2, `${args.join(' ')}: ${res.stderr}`)
    assert.match(res.stderr, message)
  }
  await venue.down()
  try {
    const res = await cli(['prices', 'fetch', ...flags()], { dataDir })
    assert.is(res.code, 1, res.stdout)
    assert.match(res.stderr, /^warning: binance: its markets could not be loaded: /)
  } finally {
    await venue.up()
  }
})

test('serve --market-data back-fills at start, in the background', async () => {
  const server = await startServer({ args: ['--market-data', 'binance', '--venue-url', venue.url, '--ca-file', venue.caFile] })
  try {
    const pairs = await catalogPairs(server.dataDir)
    let stored = 0
    for (let i = 0; i < 200 && stored < 300 * pairs.length; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      stored = (await withDb(server, (db) => db.get<{ n: number }>('SELECT count(*) AS n FROM prices')))!.n
    }
    assert.is(stored, 300 * pairs.length)
    assert.equal(await storedCandles(server.dataDir, 'ETH/USDT'), await venueCandles('ETH/USDT', addDays(today(), -300)))
    assert.match(server.output(), /"msg":"market data fetched","exchange":"binance","candles":\d+/)
  } finally {
    await server.stop()
  }
})

test('serve --market-data with the venue down at start retries with backoff and back-fills once it is up', async () => {
  await venue.down()
  const server = await startServer({ args: ['--market-data', 'binance', '--venue-url', venue.url, '--ca-file', venue.caFile] })
  try {
    for (let i = 0; i < 100 && !/market data behind; retrying/.test(server.output()); i++) await new Promise((resolve) => setTimeout(resolve, 100))
    assert.match(server.output(), /"msg":"market data problem","exchange":"binance","detail":"binance: its markets could not be loaded: /)
    assert.match(server.output(), /"msg":"market data behind; retrying","exchange":"binance","pairs":\d+,"retry_ms":5000/)
    assert.is((await withDb(server, (db) => db.get<{ n: number }>('SELECT count(*) AS n FROM prices')))!.n, 0)
    const health = async () => (await fetch(`${server.url}/api/v1/health`).then((r) => r.json())) as { status: string; venues: Record<string, string> }
    assert.equal((await health()).venues, { binance: 'degraded' })
    assert.is((await health()).status, 'HEALTHY', "a venue's trouble is reported, not Bulwark's")
    await venue.up()
    const pairs = await catalogPairs(server.dataDir)
    let stored = 0
    for (let i = 0; i < 300 && stored < 300 * pairs.length; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      stored = (await withDb(server, (db) => db.get<{ n: number }>('SELECT count(*) AS n FROM prices')))!.n
    }
    assert.is(stored, 300 * pairs.length, 'back-filled by the first retry after the venue came back')
    assert.equal((await health()).venues, { binance: 'ok' })
  } finally {
    await venue.up()
    await server.stop()
  }
})

test.run()
