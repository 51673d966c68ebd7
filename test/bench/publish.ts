// Publish cost: 5 models over N pairs of 2,000 daily candles each, automation included for 100
// EXECUTE tenants with all 5 models active, for N = 100, 250 and 500 (target: under 2 s at 500,
// growing linearly). Two baselines measured in the same run and the same way:
//   - "read floor": only reading the candle windows the rules need, the way the publisher reads
//     them (what no publisher can avoid);
//   - "no tenants": the publish with nobody subscribed (signals written, no events, no automation).
// Each measured publish starts from the same copy of the database (first run of the day, nothing
// held), median of --reps runs. The models and pairs are created in a throwaway data dir.
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/publish.ts [--reps 7] [--sizes 100,250,500]
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { query } from '../../src/store/store.ts'
import { upsertCandles } from '../../src/market/prices.ts'
import { catalogue, type Model } from '../../src/models/catalogue.ts'
import { STRATEGIES } from '../../src/models/strategies.ts'
import { createTenant, allTenants } from '../../src/tenants/tenants.ts'
import { setActiveModels } from '../../src/tenants/workspace.ts'
import { addDays, utcDay } from '../../src/shared/dates.ts'
import { modelHash, publishModel } from '../../src/signals/publisher.ts'
import { windowOf } from '../../src/signals/price-window.ts'
import { asOfFor } from '../../src/signals/run-dates.ts'
import { syntheticCandles } from '../../src/signals/synthetic-prices.ts'
import { openApp, type App } from '../../src/app.ts'
import { commandConfig } from '../../src/config.ts'
import { BENCH_MODELS } from './script.ts'

const flag = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
const REPS = Number(flag('reps', '7'))
const SIZES = flag('sizes', '100,250,500').split(',').map(Number)
const CANDLES = 2000
const TENANTS = 100
const MAX = Math.max(...SIZES)

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const ms = (n: number) => `${n.toFixed(0).padStart(6)} ms`

const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-publish-'))
const dataDir = join(work, 'data')
const template = join(work, 'template.db')
const now = new Date()
const date = utcDay(now)
const asOf = asOfFor(date)
const retireAll = query<[]>("UPDATE models SET status = 'RETIRED'")
const insertModel = query<unknown[]>(
  'INSERT INTO models (id, name, strategy, version, status, universe, parameters, hash, schedule_utc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
)
const countOf = (sql: string) => query<[], { n: number }>(sql)
const orderCount = countOf('SELECT count(*) AS n FROM orders')
const publishedCount = countOf("SELECT count(*) AS n FROM events WHERE type = 'signal.published'")
let app: App | undefined

async function setup(): Promise<void> {
  const t0 = performance.now()
  app = await openApp(commandConfig(dataDir))
  const { store } = app
  const pairs = Array.from({ length: MAX }, (_, i) => `B${String(i).padStart(3, '0')}/USDT`)
  const from = addDays(asOf, -(CANDLES - 1))
  for (let start = 0; start < pairs.length; start += 50) {
    const batch = pairs.slice(start, start + 50).flatMap((pair) => syntheticCandles(pair, 7, from, asOf, from))
    await store.write((tx) => upsertCandles(tx, batch, now))
  }
  await store.write(async (tx) => {
    await tx.run(retireAll, [])
    for (const size of SIZES) {
      for (const m of BENCH_MODELS) {
        const id = `bench-${m.key}-${size}`
        await tx.run(insertModel, [
          id,
          id,
          m.strategy,
          '1.0.0',
          'FORWARD_PAPER',
          JSON.stringify(pairs.slice(0, size).map((pair) => pair.split('/')[0])),
          JSON.stringify(m.parameters),
          modelHash({ id, version: '1.0.0', parameters: m.parameters }),
          '00:05',
        ])
      }
    }
  })
  await store.write(async (tx) => {
    for (let i = 0; i < TENANTS; i++) await createTenant(tx, { slug: `bench-${i}`, plan: 'EXECUTE' })
  })
  // Closing the last connection checkpoints the WAL into the file.
  await app.close()
  app = undefined
  copyFileSync(join(dataDir, 'bulwark.db'), template)
  console.log(
    `setup: ${MAX} pairs x ${CANDLES} candles, ${SIZES.length * BENCH_MODELS.length} models, ${TENANTS} EXECUTE tenants in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  )
}

/** A fresh copy of the template, with every tenant subscribed to `subscribed` (or to nothing). */
async function restore(subscribed: string[]): Promise<void> {
  await app?.close()
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `bulwark.db${suffix}`), { force: true })
  copyFileSync(template, join(dataDir, 'bulwark.db'))
  const opened = await openApp(commandConfig(dataDir))
  app = opened
  await opened.store.write(async (tx) => {
    for (const t of await allTenants(tx)) await setActiveModels(tx, t.id, subscribed)
  })
}

async function modelsOf(size: number): Promise<Model[]> {
  return (await catalogue(app!.store.read)).filter((m) => m.id.endsWith(`-${size}`))
}

async function timeReadFloor(models: Model[]): Promise<number> {
  const db = app!.store.read
  const t0 = performance.now()
  for (const m of models) {
    const strategy = STRATEGIES[m.strategy]
    const needed = strategy.candlesNeeded(m.parameters)
    for (const pair of m.pairs) await windowOf(db, strategy, pair, asOf, needed)
  }
  return performance.now() - t0
}

async function timePublish(models: Model[]): Promise<{ ms: number; signals: number; orders: number; events: number }> {
  const { store } = app!
  const t0 = performance.now()
  let signals = 0
  for (const m of models) signals += (await store.write((tx) => publishModel(tx, m, date, now))).signals.length
  const elapsed = performance.now() - t0
  return {
    ms: elapsed,
    signals,
    orders: (await store.read.get(orderCount, []))!.n,
    events: (await store.read.get(publishedCount, []))!.n,
  }
}

await setup()
await restore([])
const samples: Record<number, { floor: number[]; bare: number[]; full: number[]; last: Awaited<ReturnType<typeof timePublish>> }> = {}
for (const size of SIZES) samples[size] = { floor: [], bare: [], full: [], last: { ms: 0, signals: 0, orders: 0, events: 0 } }
// One unmeasured run first (JIT warm-up); then the sizes interleaved, so that a change in the load
// of the machine touches every size alike.
await restore((await modelsOf(SIZES[0])).map((m) => m.id))
await timePublish(await modelsOf(SIZES[0]))
for (let r = 0; r < REPS; r++) {
  for (const size of SIZES) {
    const models = await modelsOf(size)
    const s = samples[size]
    await restore([])
    s.floor.push(await timeReadFloor(models))
    await restore([])
    s.bare.push((await timePublish(models)).ms)
    await restore(models.map((m) => m.id))
    s.last = await timePublish(models)
    s.full.push(s.last.ms)
  }
}
const rows: string[] = []
const full: Record<number, number> = {}
for (const size of SIZES) {
  const s = samples[size]
  full[size] = median(s.full)
  rows.push(
    `${String(size).padStart(5)} pairs | read floor ${ms(median(s.floor))} | no tenants ${ms(median(s.bare))} | 100 tenants ${ms(full[size])}` +
      ` | ${s.last.signals} signals, ${s.last.events} events, ${s.last.orders} orders`,
  )
}
await app?.close()
rmSync(work, { recursive: true, force: true })

console.log(`publish of ${BENCH_MODELS.length} models, ${CANDLES} candles per pair, automation for ${TENANTS} EXECUTE tenants (median of ${REPS})`)
for (const row of rows) console.log(row)
// Linear growth means a fixed part plus a constant cost per pair: fit t = a + b * pairs.
const xs = SIZES
const ys = SIZES.map((n) => full[n])
const mx = xs.reduce((x, y) => x + y, 0) / xs.length
const my = ys.reduce((x, y) => x + y, 0) / ys.length
const slope = xs.reduce((sum, x, i) => sum + (x - mx) * (ys[i] - my), 0) / xs.reduce((sum, x) => sum + (x - mx) ** 2, 0)
const intercept = my - slope * mx
const residual = ys.reduce((sum, y, i) => sum + (y - (intercept + slope * xs[i])) ** 2, 0)
const total = ys.reduce((sum, y) => sum + (y - my) ** 2, 0)
console.log(`linear fit: ${intercept.toFixed(0)} ms + ${slope.toFixed(2)} ms per pair (R² ${(1 - residual / total).toFixed(3)})`)
for (let i = 1; i < SIZES.length; i++) {
  console.log(`  ${SIZES[i - 1]} -> ${SIZES[i]} pairs: ${((full[SIZES[i]] - full[SIZES[i - 1]]) / (SIZES[i] - SIZES[i - 1])).toFixed(2)} ms per added pair`)
}
const largest = Math.max(...SIZES)
console.log(`${largest} pairs: ${full[largest].toFixed(0)} ms, target < 2000 ms: ${full[largest] < 2000 ? 'met' : 'MISSED'}`)
