// The publisher's clock itself: node-cron firing at a model's schedule_utc, and the 15-minute retry
// completing a run whose candles arrived late. The server runs with its wall clock started a few
// seconds before the minute under test (test/support/shifted-clock.mjs); its timers are real.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { fileURLToPath } from 'node:url'
import { client, startServer, tempDir, type Server } from '../support/harness.ts'
import { EXPECTED, DIRECTION, eventually, importSeries, query } from './fixtures.ts'

const test = suite('signals: node-cron in serve')
// The clock preload needs Node's --import, which the executable does not take: this suite always
// runs the server from source, also when BULWARK_BIN points the other suites at the executable.
delete process.env.BULWARK_BIN
const CLOCK = fileURLToPath(new URL('../support/shifted-clock.mjs', import.meta.url))
const RUN_DATE = '2025-06-02'
const CLOSED = '2025-06-01' // the newest closed candle on RUN_DATE
let server: Server | undefined

function startAt(dataDir: string, now: string): Promise<Server> {
  const options = [process.env.NODE_OPTIONS, `--import=${CLOCK}`].filter(Boolean).join(' ')
  return startServer({ dataDir, env: { NODE_OPTIONS: options, BULWARK_TEST_NOW: now } })
}

test.after.each(async () => {
  await server?.stop()
  server = undefined
})

test('trend-follower publishes by the clock at 00:05 UTC, on the candle closed the day before', async () => {
  const dataDir = tempDir()
  const pairs = Object.keys(EXPECTED['trend-follower'])
  await importSeries(dataDir, pairs, CLOSED)
  server = await startAt(dataDir, `${RUN_DATE}T00:04:56.000Z`)
  // Before 00:05 the newest due run is yesterday's: caught up at start, on the candle before.
  await eventually(
    () =>
      /"reason":"catch-up","model_id":"trend-follower","date":"2025-06-01","as_of":"2025-05-31","status":"published","signals":5/.test(server!.output())
        ? true
        : undefined,
    'the catch-up of yesterday',
  )
  assert.not.match(server.output(), /"reason":"schedule"/)

  await eventually(
    () =>
      /"reason":"schedule","model_id":"trend-follower","date":"2025-06-02","as_of":"2025-06-01","status":"published","signals":5/.test(server!.output())
        ? true
        : undefined,
    'the 00:05 run',
    15_000,
  )
  const signals = await query(dataDir, "SELECT pair, action FROM signals WHERE model_id = 'trend-follower' AND as_of = ? ORDER BY pair", CLOSED)
  assert.equal(
    signals.map((s) => `${s.pair} ${s.action}`),
    pairs.sort().map((p) => `${p} ${EXPECTED['trend-follower'][p]}`),
  )
  const feed = (await client(server)('GET', '/api/v1/public/signals')).json as any[]
  const today = feed.filter((r) => r.as_of === CLOSED)
  assert.is(today.length, 5)
  for (const row of today) assert.is(row.direction, DIRECTION[EXPECTED['trend-follower'][row.pair]], row.pair)
  // The other models' schedules have not come yet: nothing of theirs ran by the clock.
  assert.not.match(server.output(), /"reason":"schedule","model_id":"(mean-reversion|breakout-momentum)"/)
})

test('the 15-minute retry completes a run whose candles were imported after its schedule', async () => {
  const dataDir = tempDir()
  const pairs = Object.keys(EXPECTED['mean-reversion'])
  await importSeries(dataDir, pairs, CLOSED, 1) // everything but the newest candle
  server = await startAt(dataDir, `${RUN_DATE}T00:14:55.000Z`)
  // mean-reversion (00:10) is due for today; without the 2025-06-01 candles it publishes nothing.
  await eventually(
    () =>
      /"reason":"catch-up","model_id":"mean-reversion","date":"2025-06-02","as_of":"2025-06-01","status":"incomplete","signals":0,"missing":5/.test(
        server!.output(),
      )
        ? true
        : undefined,
    'the incomplete catch-up',
  )
  assert.is((await query(dataDir, "SELECT count(*) AS n FROM signals WHERE model_id = 'mean-reversion'"))[0].n, 0)

  await importSeries(dataDir, pairs, CLOSED) // the late candles, through the CLI while serving
  await eventually(
    () =>
      /"reason":"retry","model_id":"mean-reversion","date":"2025-06-02","as_of":"2025-06-01","status":"published","signals":5/.test(server!.output())
        ? true
        : undefined,
    'the 00:15 retry',
    15_000,
  )
  const signals = await query(dataDir, "SELECT pair, action FROM signals WHERE model_id = 'mean-reversion' AND as_of = ? ORDER BY pair", CLOSED)
  assert.equal(
    signals.map((s) => `${s.pair} ${s.action}`),
    pairs.sort().map((p) => `${p} ${EXPECTED['mean-reversion'][p]}`),
  )
})

test('a start catches up every run missed while the server was down, at most 7 days back', async () => {
  const dataDir = tempDir()
  const pairs = Object.keys(EXPECTED['trend-follower'])
  await importSeries(dataDir, pairs, '2025-06-01') // 260 candles: enough history for the first run
  await importSeries(dataDir, pairs, '2025-06-20') // and a candle for every later day
  const runs = () => query(dataDir, "SELECT date, as_of, signals FROM publish_runs WHERE model_id = 'trend-follower' ORDER BY date")
  const published = async (date: string) => {
    await eventually(async () => ((await runs()).some((r) => r.date === date) ? true : undefined), `the run of ${date}`)
    await server!.stop()
    server = undefined
  }
  // A first start ever publishes only the newest due run.
  server = await startAt(dataDir, '2025-06-02T06:00:00.000Z')
  await published('2025-06-02')
  assert.equal(
    (await runs()).map((r) => r.date),
    ['2025-06-02'],
  )
  // Down three days: each missed day is published, on its own candle.
  server = await startAt(dataDir, '2025-06-05T06:00:00.000Z')
  await published('2025-06-05')
  assert.equal(
    (await runs()).map((r) => `${r.date} ${r.as_of} ${r.signals}`),
    ['2025-06-02 2025-06-01 5', '2025-06-03 2025-06-02 5', '2025-06-04 2025-06-03 5', '2025-06-05 2025-06-04 5'],
  )
  // Down ten days: the last 7 are caught up, the older ones are left to `bulwark publish --date`.
  server = await startAt(dataDir, '2025-06-15T06:00:00.000Z')
  await published('2025-06-15')
  const dates = (await runs()).map((r) => r.date)
  assert.equal(dates.slice(4), ['2025-06-09', '2025-06-10', '2025-06-11', '2025-06-12', '2025-06-13', '2025-06-14', '2025-06-15'])
  assert.equal((await query(dataDir, "SELECT count(*) AS n FROM signals WHERE model_id = 'trend-follower'"))[0].n, 11 * 5)
})

test.run()
