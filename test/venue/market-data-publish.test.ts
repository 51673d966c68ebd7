// A fresh `serve --market-data` against the test venue (SPEC 10): the publisher's catch-up ~0.5 s
// after start finds no candles (the back-fill is still running), and the run it leaves incomplete
// completes as soon as market data has stored them, not at the next quarter hour's retry. Each
// (model, pair, date) gets exactly one signal, and the public feed serves the day's signals.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { client, startServer, type Server } from '../support/harness.ts'
import { startVenue, type Venue } from '../support/venue/index.ts'
import { withDb } from '../trading/market.ts'
import { eventually } from './fixture-live.ts'

const test = suite('venue: market data completes the publisher run left incomplete at start')
const DAY_MS = 86_400_000
let venue: Venue
let server: Server | undefined

const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10)

/** The run date the server owes a model: today once past its HH:MM UTC, else yesterday. */
function dueDate(schedule: string, now: Date): string {
  const today = now.toISOString().slice(0, 10)
  return now.toISOString().slice(11, 16) >= schedule ? today : addDays(today, -1)
}

interface CatalogueModel {
  id: string
  pairs: string[]
  schedule_utc: string
}

async function models(s: Server): Promise<CatalogueModel[]> {
  const rows = (await withDb(s, (db) => db.all("SELECT id, universe, quote_asset, schedule_utc FROM models WHERE status != 'RETIRED' ORDER BY id"))) as {
    id: string
    universe: string
    quote_asset: string
    schedule_utc: string
  }[]
  return rows.map((m) => ({ id: m.id, schedule_utc: m.schedule_utc, pairs: (JSON.parse(m.universe) as string[]).map((a) => `${a}/${m.quote_asset}`).sort() }))
}

test.before(async () => {
  // 400 closed days: more than the 300 the back-fill reaches, more than any model's rule reads.
  venue = await startVenue({ historyDays: 400 })
})
test.after(async () => {
  await server?.stop()
  await venue.close()
})

test("the day's signals appear within seconds of a fresh start, once, published when the candles arrived", async () => {
  const started = new Date()
  server = await startServer({ args: ['--market-data', 'binance', '--venue-url', venue.url, '--ca-file', venue.caFile] })
  const s = server
  const catalogue = await models(s)
  assert.ok(catalogue.length >= 3, `models: ${catalogue.map((m) => m.id)}`)
  const runsOf = () =>
    withDb(s, (db) => db.all('SELECT model_id, date, signals, missing_pairs FROM publish_runs ORDER BY model_id, date')) as Promise<
      {
        model_id: string
        date: string
        signals: number
        missing_pairs: number
      }[]
    >
  // Each model's due run, complete: every pair of its universe has its signal for that date.
  const complete = await eventually(
    'every due run complete',
    async () => {
      const runs = await runsOf()
      const done = catalogue.every((m) =>
        [dueDate(m.schedule_utc, started), dueDate(m.schedule_utc, new Date())].some((date) =>
          runs.some((r) => r.model_id === m.id && r.date === date && r.missing_pairs === 0 && r.signals === m.pairs.length),
        ),
      )
      return done ? runs : undefined
    },
    20_000,
  )
  const seconds = (Date.now() - started.getTime()) / 1000
  assert.ok(seconds < 30, `complete ${seconds.toFixed(1)} s after start: far sooner than the quarter hour's retry`)
  // The catch-up ran before the back-fill was done: its run was left incomplete, and new candles completed it.
  const log = s.output()
  assert.match(log, /"msg":"market data fetched","exchange":"binance"/)
  assert.match(log, /"msg":"published","reason":"candles","model_id":"[a-z-]+","date":"[\d-]+","as_of":"[\d-]+","status":"published"/)
  assert.not.match(log, /"msg":"published","reason":"retry"/, 'the quarter-hour retry did not do it')

  // Exactly one signal per (model, pair, as_of), linked once onto each model's chain.
  const signals = (await withDb(s, (db) => db.all('SELECT model_id, pair, as_of, chain_seq FROM signals ORDER BY model_id, chain_seq'))) as {
    model_id: string
    pair: string
    as_of: string
    chain_seq: number
  }[]
  const keys = signals.map((x) => `${x.model_id} ${x.pair} ${x.as_of}`)
  assert.is(new Set(keys).size, keys.length, `no duplicate signal: ${keys.join(', ')}`)
  for (const m of catalogue) {
    const own = signals.filter((x) => x.model_id === m.id)
    assert.equal(
      own.map((x) => x.chain_seq),
      own.map((_, i) => own[0].chain_seq + i),
      `${m.id}: one chain, no gap`,
    )
    const run = complete.find((r) => r.model_id === m.id && r.missing_pairs === 0)!
    assert.equal(
      own
        .filter((x) => x.as_of === addDays(run.date, -1))
        .map((x) => x.pair)
        .sort(),
      m.pairs,
      `${m.id} ${run.date}: one signal per pair`,
    )
  }
  assert.is(
    signals.length,
    catalogue.reduce((n, m) => n + m.pairs.length, 0),
    'nothing else was published',
  )

  // The public feed serves them.
  const feed = (await client(s)('GET', '/api/v1/public/signals')).json as { pair: string; as_of: string }[]
  assert.is(feed.length, signals.length)
})

test.run()
