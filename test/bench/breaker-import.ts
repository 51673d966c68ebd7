// Breaker re-evaluation on a price import (SPEC 9): the import transaction of one new daily candle
// for each of 500 pairs, with 1,000 tenants whose loss breakers are on (max_daily_loss_usd,
// max_drawdown_pct, max_consecutive_losses, never reached) and who hold 2 to 5 open trades each
// across those pairs (and 2 to 6 closed ones), so that the listener re-evaluates all 1,000.
// Baseline in the same run and the same database: the same import for 500 other pairs with the
// same history that nobody holds (the listener finds no tenant; the upserts and the paper broker's
// look for pending orders cost the same). Also timed: evaluateOnNewPrices alone, in its own
// transaction. Each run starts from the same copy of the database, taken after one minute tick
// (every tenant's equity state is today's, as it is on a running server); median of --reps runs,
// the variants interleaved. Target: the re-evaluation (import minus baseline) under 200 ms.
// For reference, the first import of a UTC day before any tick of that day (a CLI import just
// after midnight): the tenants are 30 days old and their equity states yesterday's, so each
// evaluation also writes yesterday's equity history point.
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/breaker-import.ts [--reps 7] [--tenants 1000] [--pairs 500] [--closed N] [--cpu-prof]
// --closed N gives every tenant N closed trades instead of 2 to 6 (long-lived books).
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Session } from 'node:inspector/promises'
import { openApp, type App } from '../../src/app.ts'
import { commandConfig } from '../../src/config.ts'
import { query } from '../../src/store/store.ts'
import { upsertCandles, type Candle } from '../../src/market/prices.ts'
import { addDays, utcDay } from '../../src/shared/dates.ts'
import { prng } from '../../src/shared/prng.ts'
import { createTenant } from '../../src/tenants/tenants.ts'
import { updateRiskProfile } from '../../src/risk/profile.ts'
import { evaluateAll, evaluateOnNewPrices } from '../../src/risk/breaker-watch.ts'
import { importHistory, nextCandles, seedBook } from './breaker-book.ts'
import { runAsScript } from './script.ts'

const TARGET_MS = 200
const HISTORY_DAYS = 60

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
const REPS = Number(flag('reps', '7'))
const TENANTS = Number(flag('tenants', '1000'))
const PAIRS = Number(flag('pairs', '500'))
const CLOSED = flag('closed', '')
const PROFILE = process.argv.includes('--cpu-prof')

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const ms = (n: number) => `${n.toFixed(1)} ms`

const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-breaker-import-'))
const dataDir = join(work, 'data')
const template = join(work, 'template.db')
const staleTemplate = join(work, 'stale.db')
// One instant for every measured import; the template's equity states are from the same UTC day.
const now = new Date()
// The minute tick the template is taken after, a second earlier on the same UTC day.
const tickAt = new Date(Math.max(now.getTime() - 1000, Date.parse(`${utcDay(now)}T00:00:00.000Z`)))
const yesterday = addDays(utcDay(now), -1)
const held = Array.from({ length: PAIRS }, (_, i) => `H${String(i).padStart(4, '0')}/USDT`)
const unheld = Array.from({ length: PAIRS }, (_, i) => `U${String(i).padStart(4, '0')}/USDT`)
const backdate = query<[string]>('UPDATE tenants SET created_at = ?')
const tradeCount = query<[string], { n: number }>('SELECT count(*) AS n FROM trades WHERE status = ?')
const evaluatedCount = query<[string], { n: number }>('SELECT count(*) AS n FROM equity_state WHERE updated_at = ?')
const pointCount = query<[string], { n: number }>('SELECT count(*) AS n FROM equity_history WHERE date = ?')
const tripCount = query<[], { n: number }>("SELECT count(*) AS n FROM incidents WHERE action = 'CIRCUIT_BREAKER_TRIPPED'")
const warningCount = query<[], { n: number }>("SELECT count(*) AS n FROM events WHERE type = 'risk.limit.warning'")
/** The App open on the data dir: one per restore. */
let app: App | undefined

/** Tenants with loss breakers on and books across `held`; candles up to the day before yesterday. */
async function setup(): Promise<{ open: number; closed: number }> {
  const t0 = performance.now()
  const rng = prng(20261123)
  await reopen()
  const { store } = app!
  await store.write((tx) => importHistory(tx, [...held, ...unheld], addDays(yesterday, -1), HISTORY_DAYS, rng, now))
  const until = new Date(Date.parse(`${utcDay(now)}T00:00:00.000Z`) - 3_600_000)
  for (let start = 0; start < TENANTS; start += 100) {
    await store.write(async (tx) => {
      for (let i = start; i < Math.min(TENANTS, start + 100); i++) {
        const tenant = await createTenant(tx, { slug: `brk-${i}`, plan: 'EXECUTE', maxOpenTrades: 100, maxExposureUsd: 1e9 })
        await updateRiskProfile(tx, tenant.id, { max_daily_loss_usd: 1e9, max_drawdown_pct: 99, max_consecutive_losses: 1000 }, 'bench@localhost', now)
        await seedBook(tx, tenant.id, held, { open: 2 + Math.floor(rng() * 4), closed: CLOSED ? Number(CLOSED) : 2 + Math.floor(rng() * 5) }, rng, until)
      }
    })
  }
  // Tenants a month old, ticked yesterday (history caught up to the day before): the stale copy.
  await store.write((tx) => tx.run(backdate, [`${addDays(yesterday, -30)}T12:00:00.000Z`]))
  await evaluateAll(store, new Date(`${yesterday}T12:00:00.000Z`))
  await snapshot(staleTemplate)
  // The minute tick a running server has already done today: equity states start from here.
  await evaluateAll(app!.store, tickAt)
  const book = {
    open: (await app!.store.read.get(tradeCount, ['OPEN']))!.n,
    closed: (await app!.store.read.get(tradeCount, ['CLOSED']))!.n,
  }
  await snapshot(template)
  await app!.close()
  app = undefined
  console.log(
    `setup: ${TENANTS} tenants, ${book.open} open and ${book.closed} closed trades across ${PAIRS} pairs, ${2 * PAIRS} pairs x ${HISTORY_DAYS} days of candles in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  )
  return book
}

/** The App open on the data dir again (closed first if open). */
async function reopen(): Promise<App> {
  await app?.close()
  app = await openApp(commandConfig(dataDir))
  return app
}

/** A copy of the database as it is now: the App closed (its last connection checkpoints the WAL), copied, opened again. */
async function snapshot(file: string): Promise<void> {
  await app?.close()
  app = undefined
  copyFileSync(join(dataDir, 'bulwark.db'), file)
  await reopen()
}

async function restore(from = template): Promise<App> {
  await app?.close()
  app = undefined
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `bulwark.db${suffix}`), { force: true })
  copyFileSync(from, join(dataDir, 'bulwark.db'))
  return reopen()
}

/** The candles of one import: the same moves for either set of pairs, so both write alike. */
function candlesFor(pairs: string[]): Promise<Candle[]> {
  return nextCandles(app!.store.read, pairs, yesterday, prng(7))
}

async function timeImport(pairs: string[], from = template): Promise<number> {
  const { store } = await restore(from)
  const candles = await candlesFor(pairs)
  const t0 = performance.now()
  await store.write((tx) => upsertCandles(tx, candles, now))
  return performance.now() - t0
}

async function timeListener(): Promise<number> {
  const { store } = await restore()
  const latest = new Map((await candlesFor(held)).map((c) => [c.pair, c]))
  const t0 = performance.now()
  await store.write((tx) => evaluateOnNewPrices(tx, latest, now))
  return performance.now() - t0
}

/** What the measured import left: tenants evaluated (equity states written now), history points of yesterday, trips and warnings. */
async function outcome(): Promise<{ evaluated: number; points: number; trips: number; warnings: number }> {
  const db = app!.store.read
  return {
    evaluated: (await db.get(evaluatedCount, [now.toISOString()]))!.n,
    points: (await db.get(pointCount, [yesterday]))!.n,
    trips: (await db.get(tripCount, []))!.n,
    warnings: (await db.get(warningCount, []))!.n,
  }
}

/** --cpu-prof: a CPU profile of 5 imports of held pairs from `from`, the imports only, into the working directory. */
async function profiled(name: string, from: string): Promise<void> {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 100 })
  for (let i = 0; i < 5; i++) {
    const { store } = await restore(from)
    const candles = await candlesFor(held)
    await session.post('Profiler.start')
    await store.write((tx) => upsertCandles(tx, candles, now))
    const { profile } = await session.post('Profiler.stop')
    if (i === 4) writeFileSync(join(process.cwd(), `breaker-import-${name}.cpuprofile`), JSON.stringify(profile))
  }
  console.log(`CPU profile of an import with breakers (${name}): breaker-import-${name}.cpuprofile`)
  session.disconnect()
}

async function main(): Promise<void> {
  try {
    const book = await setup()
    // One unmeasured run of each (JIT, statement cache), then the variants interleaved.
    await timeImport(held)
    await timeImport(unheld)
    await timeListener()
    await timeImport(held, staleTemplate)
    const samples = { held: [] as number[], unheld: [] as number[], listener: [] as number[], stale: [] as number[], staleBase: [] as number[] }
    let seen = { evaluated: 0, points: 0, trips: 0, warnings: 0 }
    let staleSeen = seen
    for (let r = 0; r < REPS; r++) {
      samples.held.push(await timeImport(held))
      seen = await outcome()
      samples.unheld.push(await timeImport(unheld))
      if ((await outcome()).evaluated !== 0) throw new Error('the baseline import evaluated tenants: its pairs are held')
      samples.listener.push(await timeListener())
      samples.stale.push(await timeImport(held, staleTemplate))
      staleSeen = await outcome()
      samples.staleBase.push(await timeImport(unheld, staleTemplate))
    }
    if (seen.evaluated !== TENANTS) throw new Error(`the import evaluated ${seen.evaluated} tenants, expected ${TENANTS}`)
    if (staleSeen.evaluated !== TENANTS || staleSeen.points !== TENANTS) {
      throw new Error(`the first import of the day evaluated ${staleSeen.evaluated} tenants and wrote ${staleSeen.points} points, expected ${TENANTS}`)
    }
    if (PROFILE) {
      await profiled('steady', template)
      await profiled('first-of-day', staleTemplate)
    }

    const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)])) as Record<keyof typeof samples, number>
    const difference = m.held - m.unheld
    const runs = (xs: number[]) => `(runs: ${xs.map((x) => x.toFixed(0)).join(', ')})`
    const line = (label: string, value: number, xs?: number[]) => console.log(`  ${label.padEnd(52)} ${ms(value).padStart(9)}${xs ? `  ${runs(xs)}` : ''}`)
    console.log(
      `price import of ${PAIRS} pairs (one candle each) re-evaluating ${TENANTS} tenants' loss breakers (Node ${process.versions.node}, median of ${REPS}):`,
    )
    console.log(`  book: ${book.open} open trades, ${book.closed} closed, over ${PAIRS} pairs; ${seen.trips} trips, ${seen.warnings} warnings`)
    line(`import, pairs held by ${TENANTS} tenants`, m.held, samples.held)
    line(`baseline: ${PAIRS} pairs nobody holds`, m.unheld, samples.unheld)
    line('difference: the breaker re-evaluation', difference)
    line('evaluateOnNewPrices alone, own transaction', m.listener, samples.listener)
    console.log(`  per tenant: ${((difference / TENANTS) * 1000).toFixed(0)} us (difference), ${((m.listener / TENANTS) * 1000).toFixed(0)} us (alone)`)
    console.log(`  target < ${TARGET_MS} ms: ${difference < TARGET_MS ? 'met' : 'MISSED'}`)
    console.log("  for reference, the first import of a UTC day before its first tick (writes yesterday's history point per tenant):")
    line('import, pairs held', m.stale, samples.stale)
    line('baseline: pairs nobody holds', m.staleBase, samples.staleBase)
    line('difference', m.stale - m.staleBase)
    console.log(`| ${ms(m.held)} | ${ms(m.unheld)} | ${ms(difference)} | ${ms(m.listener)} | ${ms(m.stale - m.staleBase)} |`)
    if (!(difference < TARGET_MS)) process.exitCode = 1
  } finally {
    await app?.close()
    rmSync(work, { recursive: true, force: true })
  }
}

runAsScript(import.meta.url, main)
