// The backtest queue over a real server: a long backtest (a model of 500 pairs listed 8 times, 2,250
// candles each, written straight into the data dir before serve starts) keeps its workspace's next ones QUEUED
// while another workspace's runs and the API keeps answering; 20 unfinished per workspace, the
// 21st refused; a serve killed mid-backtest leaves it RUNNING, and the next start queues it again
// and runs everything, one at a time per workspace, oldest first.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { prng } from '../../src/shared/prng.ts'
import { modelHash } from '../../src/signals/publisher.ts'
import { openTestDatabase } from '../support/database.ts'
import { cli, client, startServer, tempDir, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { addDays, eventually, query } from '../signals/fixtures.ts'

const test = suite('backtests: the queue')
const PAIRS = 500
const CANDLES = 2250 // 250 of warm-up for ema_cross 20/50, then 2,000 days
const FIRST = '2019-01-01'
const FROM = addDays(FIRST, 250)
const TO = addDays(FIRST, CANDLES - 1)
const WIDE = 'wide-trend'
// Its universe lists each pair 8 times: a backtest reads a pair once per listing, so it lasts
// seconds (what the queue's checks need) without writing 8 times the candles.
const LISTINGS = 8
const dataDir = tempDir('bulwark-backtest-queue')
let server: Server
let api: ReturnType<typeof client>
let alpha: TenantFixture
let beta: TenantFixture

type Row = { id: string; tenant_id: string; status: string; started_at: string | null; finished_at: string | null }
const rows = () => query<Row>(dataDir, 'SELECT id, tenant_id, status, started_at, finished_at FROM backtests ORDER BY id')
const status = async (token: string, id: string) => (await api('GET', `/api/v1/backtests/${id}`, { token })).json.status as string

async function post(token: string, body: Record<string, unknown>): Promise<string> {
  const res = await api('POST', '/api/v1/backtests', { token, body })
  assert.is(res.status, 200, res.text)
  return res.json.id
}

/** A seeded random walk per pair, and a model trading all of them, written before serve reads the catalogue. */
async function seed(): Promise<void> {
  const db = await openTestDatabase(dataDir)
  // A pair's candles per statement (2,250 rows, 13,500 parameters: under both engines' limits).
  const insert = `INSERT INTO prices (pair, date, open, high, low, close, volume) VALUES ${Array(CANDLES).fill('(?, ?, ?, ?, ?, ?, 1000)').join(', ')}`
  const dates = Array.from({ length: CANDLES }, (_, i) => addDays(FIRST, i))
  const assets = Array.from({ length: PAIRS }, (_, i) => `W${String(i).padStart(3, '0')}`)
  await db.exec('BEGIN')
  try {
    for (const [p, asset] of assets.entries()) {
      const random = prng(1000 + p)
      let close = 100
      const params: unknown[] = []
      for (const date of dates) {
        const open = close
        close = open * Math.exp(0.04 * (random() - 0.5))
        params.push(`${asset}/USDT`, date, open, Math.max(open, close) * 1.01, Math.min(open, close) * 0.99, close)
      }
      await db.run(insert, params)
    }
    const parameters = { fast_ema: 20, slow_ema: 50, band_pct: 0.5 }
    await db.run('INSERT INTO models (id, name, strategy, version, status, universe, parameters, hash, schedule_utc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      WIDE,
      'Wide Trend',
      'ema_cross',
      '1.0.0',
      'FORWARD_PAPER',
      JSON.stringify(Array.from({ length: LISTINGS }, () => assets).flat()),
      JSON.stringify(parameters),
      modelHash({ id: WIDE, version: '1.0.0', parameters }),
      '00:05',
    ])
    await db.exec('COMMIT')
  } finally {
    await db.close() // without a COMMIT, the transaction goes with the connection
  }
}

test.before(async () => {
  const migrated = await cli(['tenant', 'create', 'bystander', '--plan', 'SIGNAL'], { dataDir })
  assert.is(migrated.code, 0, migrated.stderr)
  await seed()
  server = await startServer({ dataDir, args: ['--quiet'] })
  api = client(server)
  alpha = await tenantFixture(server, 'alpha')
  beta = await tenantFixture(server, 'beta')
})
test.after(async () => {
  await server.stop()
})

let long = ''
const queued: string[] = []

test("while a workspace's backtest runs, its next ones wait, another workspace's runs, and the API answers", async () => {
  const reader = await alpha.key(['signals:read'])
  long = await post(alpha.jwt, { model_id: WIDE, from: FROM, to: TO })
  await eventually(async () => ((await status(alpha.jwt, long)) === 'RUNNING' ? true : undefined), 'the long backtest to start')
  const signals = await api('GET', '/api/v1/signals', { token: reader })
  assert.is(signals.status, 200, signals.text)
  // Short ones: the catalogue's trend follower over a month (no candles for its pairs here).
  for (let i = 0; i < 19; i++) queued.push(await post(alpha.jwt, { model_id: 'trend-follower', from: '2025-01-01', to: '2025-01-31' }))
  const full = await api('POST', '/api/v1/backtests', { token: alpha.jwt, body: { model_id: 'trend-follower', from: '2025-01-01', to: '2025-01-31' } })
  assert.is(full.status, 409, full.text)
  assert.is(full.json.code, 'backtest_queue_full')
  assert.match(full.json.detail, /already has 20 backtests queued or running/)
  const other = await post(beta.jwt, { model_id: 'trend-follower', from: '2025-01-01', to: '2025-01-31' })
  await eventually(async () => ((await status(beta.jwt, other)) === 'SUCCEEDED' ? true : undefined), "beta's backtest to succeed")
  // All of that happened while the long one ran: it is still RUNNING, and nothing of alpha's started.
  assert.is(await status(alpha.jwt, long), 'RUNNING')
  for (const id of queued) assert.is(await status(alpha.jwt, id), 'QUEUED', id)
  const list = await api('GET', '/api/v1/backtests?limit=5', { token: alpha.jwt })
  assert.equal(
    list.json.map((b: { id: string }) => b.id),
    queued.slice(-5).reverse(),
  )
  assert.match(list.headers.get('link') ?? '', /rel="next"/)
})

test('a serve killed mid-backtest leaves it RUNNING; the next start queues it again and runs them all, one at a time, oldest first', async () => {
  await server.stop('SIGKILL')
  const left = (await rows()).find((r) => r.id === long)!
  assert.is(left.status, 'RUNNING')
  server = await startServer({ dataDir, args: ['--quiet'] })
  api = client(server)
  await eventually(async () => ((await rows()).every((r) => r.status === 'SUCCEEDED') ? true : undefined), 'every backtest to succeed', 120_000)
  assert.match(server.output(), /backtests left RUNNING by the last stop queued again/)
  const mine = (await rows()).filter((r) => r.tenant_id === left.tenant_id)
  assert.equal(
    mine.map((r) => r.id),
    [long, ...queued],
  )
  for (let i = 1; i < mine.length; i++) assert.ok(mine[i].started_at! >= mine[i - 1].finished_at!, `${mine[i].id} started after ${mine[i - 1].id} finished`)
  const done = await api('GET', `/api/v1/backtests/${long}`, { token: alpha.jwt })
  assert.is(done.json.equity.length, CANDLES - 250)
  assert.ok(done.json.trades.length > PAIRS, `${done.json.trades.length} trades`)
})

test.run()
