// The publisher inside `serve`: the newest due run of every model is caught up at start (a pair
// without prices gets no signal and a logged warning), a restart repeats nothing, a later start
// completes what was missing, health reports the next scheduled publish, and SIGTERM stops the
// schedule cleanly.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { client, startServer, tempDir, type Server } from '../support/harness.ts'
import { ALL_PAIRS, addDays, day, eventually, importSeries, query } from './fixtures.ts'

const test = suite('signals: schedule and catch-up in serve')
const dataDir = tempDir()
let server: Server | undefined
const SCHEDULE: Record<string, string> = { 'trend-follower': '00:05', 'mean-reversion': '00:10', 'breakout-momentum': '00:15' }

/** The rule the server follows: today once past the model's HH:MM UTC, else yesterday. */
function dueAsOf(schedule: string, now = new Date()): string {
  const today = now.toISOString().slice(0, 10)
  return addDays(now.toISOString().slice(11, 16) >= schedule ? today : addDays(today, -1), -1)
}

const feed = async (s: Server) => (await client(s)('GET', '/api/v1/public/signals')).json as any[]

/** How long until the next of the schedules' times (UTC), in ms. */
function untilNextSchedule(now = Date.now()): number {
  const dayStart = now - (now % 86_400_000)
  return Math.min(
    ...Object.values(SCHEDULE).map((hhmm) => {
      const at = dayStart + (Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3))) * 60_000
      return at > now ? at - now : at + 86_400_000 - now
    }),
  )
}

test.before(async () => {
  // The file takes a few seconds: one that a schedule's time crosses would see a new run fall due
  // between its start and its restart. Near one, it starts just after it instead.
  const until = untilNextSchedule()
  if (until < 30_000) await new Promise((resolve) => setTimeout(resolve, until + 2000))
  // Candles up to yesterday: whichever run is due (today's or yesterday's), its candle exists.
  await importSeries(
    dataDir,
    ALL_PAIRS.filter((p) => p !== 'DOT/USDT'),
    day(-1),
  )
})
test.after(async () => {
  await server?.stop()
})

test("at start, each model's newest due run is caught up; DOT/USDT without prices is a logged warning", async () => {
  const started = new Date()
  server = await startServer({ dataDir })
  const rows = await eventually(async () => {
    const f = await feed(server!)
    return f.length === 14 ? f : undefined
  }, '14 caught-up signals')
  for (const row of rows) {
    const model = Object.keys(SCHEDULE).find((id) => SCHEDULE[id] === row.schedule_utc)!
    assert.ok([dueAsOf(row.schedule_utc, started), dueAsOf(row.schedule_utc)].includes(row.as_of), `${model} ${row.pair} as of ${row.as_of}`)
  }
  assert.not.ok(rows.some((r) => r.pair === 'DOT/USDT'))
  await eventually(
    () =>
      /"level":"warn","msg":"publish warning","model_id":"mean-reversion".*DOT\/USDT: no signal: no candle dated/.test(server!.output()) ? true : undefined,
    'the warning in the log',
  )
  assert.match(server.output(), /"msg":"published","reason":"catch-up","model_id":"trend-follower".*"status":"published","signals":5/)
})

test('health names the next scheduled publish', async () => {
  const res = await client(server!)('GET', '/api/v1/health')
  assert.is(res.status, 200)
  const next = new Date(res.json.next_publish_at)
  const now = Date.now()
  assert.ok(next.getTime() > now - 1000 && next.getTime() <= now + 86_400_000, res.json.next_publish_at)
  assert.ok(Object.values(SCHEDULE).includes(res.json.next_publish_at.slice(11, 16)), res.json.next_publish_at)
  assert.match(res.json.next_publish_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\.000Z$/)
})

test('SIGTERM stops the schedule and the server cleanly', async () => {
  assert.is(await server!.stop('SIGTERM'), 0)
  server = undefined
})

test('a restart repeats nothing; a start after the missing prices arrive completes the run', async () => {
  const count = async () => (await query(dataDir, 'SELECT count(*) AS n FROM signals'))[0].n
  const before = await count()
  server = await startServer({ dataDir })
  await eventually(
    () => (/"reason":"catch-up","model_id":"mean-reversion".*"status":"incomplete","signals":0,"missing":1/.test(server!.output()) ? true : undefined),
    'the incomplete run retried',
  )
  assert.is(await count(), before)
  assert.not.match(server.output(), /"reason":"catch-up","model_id":"trend-follower"/, 'a complete run is not even logged again')
  assert.is(await server.stop(), 0)

  await importSeries(dataDir, ['DOT/USDT'], day(-1))
  server = await startServer({ dataDir })
  const rows = await eventually(async () => {
    const f = await feed(server!)
    return f.length === 15 ? f : undefined
  }, 'the completed feed')
  assert.ok(rows.some((r) => r.pair === 'DOT/USDT' && r.direction === 'LONG'))
  assert.is(await count(), before + 1)
})

test.run()
