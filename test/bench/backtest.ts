// Backtest cost: 500 pairs x 2,000 days of synthetic candles, one model, then the five models of
// test/bench/publish.ts back to back (one tenant: they run one after another), each timed from the
// claim to the committed result (the row's started_at and finished_at) by the real runner service
// with its worker threads. Baseline measured in the same run: the "read floor", reading the very
// candles the backtest reads (on this thread, one pair per turn of the event loop; the worker reads
// them on its own connection). Median of --reps runs, after one unmeasured run.
// Then the API while a backtest runs: ~200 sequential GET /api/v1/signals on a real `serve`, idle
// and during the five-model chain, median and p95 of each and their ratio.
// Targets: one model < 1 s, five < 3 s.
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/backtest.ts [--reps 5] [--pairs 500] [--days 2000]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import Database from 'better-sqlite3'
import { query } from '../../src/store/store.ts'
import { upsertCandles } from '../../src/market/prices.ts'
import { findModel } from '../../src/models/catalogue.ts'
import { STRATEGIES } from '../../src/models/strategies.ts'
import { createTenant } from '../../src/tenants/tenants.ts'
import { addDays, utcDay } from '../../src/shared/dates.ts'
import { modelHash } from '../../src/signals/publisher.ts'
import { syntheticCandles } from '../../src/signals/synthetic-prices.ts'
import { queueBacktest } from '../../src/backtests/backtests.ts'
import { calendar, candleReader } from '../../src/backtests/candles.ts'
import { backtestRunner } from '../../src/backtests/runner.ts'
import { openApp } from '../../src/app.ts'
import { commandConfig } from '../../src/config.ts'
import { client, startServer, tenantFixture } from '../support/harness.ts'
import { BENCH_MODELS } from './script.ts'

const flag = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
const REPS = Number(flag('reps', '5'))
const PAIRS = Number(flag('pairs', '500'))
const DAYS = Number(flag('days', '2000'))
const REQUESTS = 200

const MODEL_IDS = BENCH_MODELS.map((m) => `bench-${m.key}`)

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]
const ms = (n: number) => `${n.toFixed(0).padStart(6)} ms`
const sleep = (n: number) => new Promise((resolve) => setTimeout(resolve, n))

const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-backtest-'))
const dataDir = join(work, 'data')
const now = new Date()
const to = addDays(utcDay(now), -1)
// The range is the last DAYS days; the candles start early enough for the longest warm-up (250).
const from = addDays(to, -(DAYS - 1))
const first = addDays(from, -300)

let app = await openApp(commandConfig(dataDir))
const insertModel = query<unknown[]>(
  'INSERT INTO models (id, name, strategy, version, status, universe, parameters, hash, schedule_utc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
)
const backtestRow = query<[string], { status: string; started_at: string | null; finished_at: string | null; error: string | null }>(
  'SELECT status, started_at, finished_at, error FROM backtests WHERE id = ?',
)

async function setup(): Promise<string> {
  const t0 = performance.now()
  const pairs = Array.from({ length: PAIRS }, (_, i) => `B${String(i).padStart(3, '0')}/USDT`)
  for (let start = 0; start < pairs.length; start += 50) {
    const batch = pairs.slice(start, start + 50).flatMap((pair) => syntheticCandles(pair, 7, first, to, first))
    await app.store.write((tx) => upsertCandles(tx, batch, now))
  }
  const tenant = await app.store.write(async (tx) => {
    for (const m of BENCH_MODELS) {
      const id = `bench-${m.key}`
      const universe = JSON.stringify(pairs.map((pair) => pair.split('/')[0]))
      await tx.run(insertModel, [
        id,
        id,
        m.strategy,
        '1.0.0',
        'FORWARD_PAPER',
        universe,
        JSON.stringify(m.parameters),
        modelHash({ id, version: '1.0.0', parameters: m.parameters }),
        '00:05',
      ])
    }
    return createTenant(tx, { slug: 'bench', plan: 'EXECUTE' })
  })
  console.log(`setup: ${PAIRS} pairs x ${DAYS + 300} candles, ${BENCH_MODELS.length} models in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  return tenant.id
}

/** A connection of its own for the read floor, as the backtest's worker reads on its own (opened after setup). */
let reader: Database.Database

/** Reads what a backtest of `modelId` reads, in the same slices. */
async function readFloor(modelId: string): Promise<number> {
  const model = (await findModel(app.store.read, modelId))!
  const strategy = STRATEGIES[model.strategy]
  const needed = strategy.candlesNeeded(model.parameters)
  const t0 = performance.now()
  const read = candleReader(reader)
  const days = calendar(from, to)
  for (const pair of model.pairs) {
    await nextTurn()
    read(strategy, pair, days, from, to, needed)
  }
  return performance.now() - t0
}

/** Queues the models' backtests for one tenant and waits for the last; claim to last commit, in ms. */
async function runBacktests(tenantId: string, modelIds: string[]): Promise<number> {
  const ids = await app.store.write(async (tx) => {
    const queued: string[] = []
    for (const model_id of modelIds) queued.push((await queueBacktest(tx, tenantId, { model_id, from, to }, new Date())).id)
    return queued
  })
  const row = async (id: string) => (await app.store.read.get(backtestRow, [id]))!
  for (;;) {
    await sleep(5)
    const last = await row(ids[ids.length - 1])
    if (last.status === 'FAILED') throw new Error(last.error ?? 'failed')
    if (last.status === 'SUCCEEDED') break
  }
  const start = (await row(ids[0])).started_at!
  const end = (await row(ids[ids.length - 1])).finished_at!
  return Date.parse(end) - Date.parse(start)
}

const tenantId = await setup()
// Closing the last connection checkpoints the WAL into the file, which the backtests then read.
await app.close()
app = await openApp(commandConfig(dataDir))
reader = new Database(join(dataDir, 'bulwark.db'), { readonly: true })
const stopRunner = backtestRunner().start({ dataDir, store: app.store })
await runBacktests(tenantId, [MODEL_IDS[0]]) // unmeasured: worker start-up, JIT
const samples = { oneFloor: [] as number[], one: [] as number[], fiveFloor: [] as number[], five: [] as number[] }
for (let r = 0; r < REPS; r++) {
  samples.oneFloor.push(await readFloor(MODEL_IDS[0]))
  samples.one.push(await runBacktests(tenantId, [MODEL_IDS[0]]))
  let floor = 0
  for (const id of MODEL_IDS) floor += await readFloor(id)
  samples.fiveFloor.push(floor)
  samples.five.push(await runBacktests(tenantId, MODEL_IDS))
}
await stopRunner()
reader.close()
await app.close()

// The API on a real server: idle, then while the five-model chain runs.
const server = await startServer({ dataDir, args: ['--quiet'] })
const latency: { idle: number[]; busy: number[]; during: number } = { idle: [], busy: [], during: 0 }
try {
  const api = client(server)
  const owner = await tenantFixture(server, 'reader')
  const key = await owner.key(['signals:read'])
  const timed = async () => {
    const t0 = performance.now()
    const res = await api('GET', '/api/v1/signals', { token: key })
    if (res.status !== 200) throw new Error(res.text)
    return performance.now() - t0
  }
  for (let i = 0; i < 20; i++) await timed()
  for (let i = 0; i < REQUESTS; i++) latency.idle.push(await timed())
  const queued = []
  for (const model_id of MODEL_IDS) queued.push((await api('POST', '/api/v1/backtests', { token: owner.jwt, body: { model_id, from, to } })).json.id)
  const status = async (id: string) => (await api('GET', `/api/v1/backtests/${id}`, { token: owner.jwt })).json.status
  while ((await status(queued[0])) === 'QUEUED') await sleep(5)
  for (let i = 0; i < REQUESTS; i++) latency.busy.push(await timed())
  // Were they all answered while a backtest ran? The last one must still be unfinished.
  latency.during = (await status(queued[queued.length - 1])) === 'SUCCEEDED' ? 0 : REQUESTS
  while (!['SUCCEEDED', 'FAILED'].includes(await status(queued[queued.length - 1]))) await sleep(50)
} finally {
  await server.stop()
  rmSync(work, { recursive: true, force: true })
}

const one = median(samples.one)
const five = median(samples.five)
console.log(`backtest of ${PAIRS} pairs x ${DAYS} days (median of ${REPS}; claim to committed result, runner service with worker threads)`)
console.log(`  one model    | read floor ${ms(median(samples.oneFloor))} | backtest ${ms(one)} | target < 1000 ms: ${one < 1000 ? 'met' : 'MISSED'}`)
console.log(`  five models  | read floor ${ms(median(samples.fiveFloor))} | backtest ${ms(five)} | target < 3000 ms: ${five < 3000 ? 'met' : 'MISSED'}`)
const row = (name: string, xs: number[]) =>
  `${name} median ${xs.length ? median(xs).toFixed(2) : '-'} ms, p95 ${xs.length ? percentile(xs, 0.95).toFixed(2) : '-'} ms`
console.log(`GET /api/v1/signals, ${REQUESTS} sequential requests on serve:`)
console.log(`  ${row('idle:            ', latency.idle)}`)
console.log(`  ${row('during backtests:', latency.busy)}${latency.during ? '' : ' (the chain finished before the last request)'}`)
console.log(
  `  ratio: median x${(median(latency.busy) / median(latency.idle)).toFixed(2)}, p95 x${(percentile(latency.busy, 0.95) / percentile(latency.idle, 0.95)).toFixed(2)}`,
)
