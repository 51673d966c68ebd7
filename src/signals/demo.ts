// `serve --demo`: a clearly-labelled synthetic price history for every pair the models trade
// (./synthetic-prices.ts), a `demo` tenant whose owner's password is printed once, and a replay of
// that history through the real publisher and paper broker, so a newcomer sees a track record,
// closed trades and an equity curve within seconds of the first start; then today's publish. A
// running demo server extends the history each midnight UTC, so the pending orders fill and the
// next day publishes like a real one.
//
// The replay: the history is loaded up to the candle the first model can run on, then for each
// day D up to yesterday, every model that has enough candles publishes D as if it were D at its
// schedule time (a live run: automation places the demo tenant's PAPER orders), then the candle of
// D arrives at the next midnight (the paper broker fills those orders at its close). A week of
// days is one change. Idempotent: it resumes after the last synthetic candle loaded, so a restart
// replays only the days it has not seen, however long the server was down.
import type { ScheduledTask } from 'node-cron'
import { log } from '../shared/log.ts'
import { query, type Store, type Tx } from '../store/store.ts'
import type { Service } from '../store/service.ts'
import { addDays, utcDay } from '../shared/dates.ts'
import type { Candle } from '../market/prices.ts'
import { catalogue, type Model } from '../models/catalogue.ts'
import { STRATEGIES } from '../models/strategies.ts'
import { createTenant, PLAN_MODEL_LIMIT, findTenant } from '../tenants/tenants.ts'
import { createUser } from '../tenants/users.ts'
import { setActiveModels } from '../tenants/workspace.ts'
import { generatePassword, hashPassword } from '../auth/passwords.ts'
import { publishAndLog, publishModel } from './publisher.ts'
import { asOfFor } from './run-dates.ts'
import { DEMO_SEED, importSynthetic, loadSyntheticHistory, syntheticCandles, syntheticPairs, syntheticSpan, syntheticWindow } from './synthetic-prices.ts'

const DEMO_SLUG = 'demo'
const DEMO_OWNER = 'owner@demo.localhost'
// A week of replayed days per change: a commit per day made the replay about 20% slower (docs/signals.md),
// and a week is still a short transaction (tens of ms) that a restart resumes after.
const DAYS_PER_CHANGE = 7

// Trades are trading's ledger (a layer above); the summary line only counts them.
const tradeCounts = query<[string], { closed: number | null; open: number | null }>(
  "SELECT sum(CASE WHEN status = 'CLOSED' THEN 1 ELSE 0 END) AS closed, sum(CASE WHEN status = 'OPEN' THEN 1 ELSE 0 END) AS open FROM trades WHERE tenant_id = ?",
)

/** serve --demo: extends the synthetic history every day at 00:00 UTC. */
export const demoPrices: Service = {
  name: 'demo-prices',
  start({ store }) {
    // node-cron is loaded off the start path (it loads child_process and ICU), as the publisher's is.
    let task: ScheduledTask | undefined
    let stopped = false
    let running: Promise<void> | undefined
    const extend = async () => {
      try {
        const pairs = await store.write((tx) => loadSyntheticHistory(tx, new Date()))
        log({ level: 'info', msg: 'synthetic demo candles extended', pairs: pairs.length })
      } catch (error) {
        log({ level: 'error', msg: 'synthetic demo candles not extended', error: error instanceof Error ? error.message : String(error) })
      }
    }
    void import('node-cron').then(({ default: cron }) => {
      if (stopped) return
      task = cron.schedule(
        '0 0 * * *',
        () => {
          running = extend()
          return running
        },
        { name: 'demo-prices', timezone: 'Etc/UTC' },
      )
    })
    return async () => {
      stopped = true
      await task?.destroy()
      await running // the day's candles being written, before the database closes
    }
  },
}

const at = (date: string, hhmm: string) => new Date(`${date}T${hhmm}:00.000Z`)
const midnightAfter = (date: string) => at(addDays(date, 1), '00:00')

interface Replay {
  days: string[]
  signals: number
}

/**
 * Walks the synthetic history from the day after the last candle loaded up to yesterday, a week of
 * days per change; a first load first loads the candles up to the first run day's (`start`) and
 * calls `firstDay(start)`. Returns the days replayed and the signals they wrote.
 */
async function replay(store: Store, now: Date, firstDay: (start: string) => Promise<void>): Promise<Replay> {
  const { from, to } = syntheticWindow(now)
  const pairs = await syntheticPairs(store.read)
  const span = await syntheticSpan(store.read)
  const first = span.first ?? from
  // A model runs from the day its rule has enough candles: no warning for every day before that.
  const firstRun = new Map<Model, string>(
    (await catalogue(store.read)).map((m) => [m, addDays(first, STRATEGIES[m.strategy]?.candlesNeeded(m.parameters) ?? 0)]),
  )
  // The first run date: the day after the first model's first full window.
  const start = [...firstRun.values()].sort()[0] ?? from
  const result: Replay = { days: [], signals: 0 }
  if (pairs.length === 0) return result
  // Generated once (a walk from the origin per pair), then handed out a day at a time.
  const byDate = new Map<string, Candle[]>()
  for (const pair of pairs) {
    for (const c of syntheticCandles(pair, DEMO_SEED, first, to)) {
      const day = byDate.get(c.date)
      if (day) day.push(c)
      else byDate.set(c.date, [c])
    }
  }
  if (!span.last) {
    const before = [...byDate].filter(([date]) => date <= asOfFor(start)).flatMap(([, candles]) => candles)
    await store.write((tx) => importSynthetic(tx, before, first, midnightAfter(asOfFor(start))))
    await firstDay(start)
  }
  const warnings: string[] = []
  const days: string[] = []
  for (let day = addDays(span.last ?? asOfFor(start), 1); day <= to; day = addDays(day, 1)) days.push(day)
  for (let i = 0; i < days.length; i += DAYS_PER_CHANGE) {
    const batch = days.slice(i, i + DAYS_PER_CHANGE)
    await store.write(async (tx) => {
      for (const day of batch) {
        for (const [model, runFrom] of firstRun) {
          if (day < runFrom) continue
          const outcome = await publishModel(tx, model, day, at(day, model.schedule_utc))
          result.signals += outcome.signals.length
          warnings.push(...outcome.warnings)
        }
        await importSynthetic(tx, byDate.get(day) ?? [], first, midnightAfter(day))
      }
    })
    result.days.push(...batch)
  }
  if (warnings.length) log({ level: 'warn', msg: 'demo replay warnings', count: warnings.length, first: warnings[0] })
  return result
}

/** The demo tenant, its owner and its models, in one change: all of them exist, or none. */
async function createDemoTenant(store: Store, passwordHash: string, createdAt: Date): Promise<void> {
  await store.write(async (tx) => {
    const tenant = await createTenant(tx, { slug: DEMO_SLUG, plan: 'EXECUTE', now: createdAt })
    await createUser(tx, { tenantId: tenant.id, email: DEMO_OWNER, role: 'owner', passwordHash })
    await setActiveModels(
      tx,
      tenant.id,
      (await catalogue(tx)).slice(0, PLAN_MODEL_LIMIT.EXECUTE).map((m) => m.id),
    )
  })
}

/**
 * Hands the demo tenant, after the replay and before today's publish, to what sets its breakers
 * (risk/demo-breakers.ts, a layer beside this one: cli/serve.ts passes it in); returns a banner line
 * or undefined. Called with the change it makes.
 */
export type DemoBreakersHook = (tx: Tx, tenantId: string, now: Date) => Promise<string | undefined>

/** Everything `serve --demo` does before the server listens; returns the lines to print. */
export async function loadDemo(store: Store, now = new Date(), setBreakers?: DemoBreakersHook): Promise<string[]> {
  const lines: string[] = []
  // The password hash is made before the replay (outside any transaction), so the tenant exists from its first day.
  const password = (await findTenant(store.read, DEMO_SLUG)) ? undefined : generatePassword()
  const passwordHash = password === undefined ? undefined : await hashPassword(password)
  const started = Date.now()
  // Dated back to the replay's first day, so its equity history starts there (SPEC 9).
  const replayed = await replay(store, now, async (start) => {
    if (passwordHash) await createDemoTenant(store, passwordHash, at(start, '00:00'))
  })
  if (passwordHash && !(await findTenant(store.read, DEMO_SLUG))) await createDemoTenant(store, passwordHash, now)
  const ms = Date.now() - started
  const pairs = await syntheticPairs(store.read)
  lines.push(`Demo:    SYNTHETIC prices (seeded random walk, seed ${DEMO_SEED}, not market data) for ${pairs.length} pairs, up to ${addDays(utcDay(now), -1)}`)
  if (!password) {
    lines.push(`Demo:    tenant "${DEMO_SLUG}" already exists; its owner ${DEMO_OWNER} keeps the password printed when it was created`)
  } else {
    lines.push(`Demo:    tenant "${DEMO_SLUG}" (plan EXECUTE, every model active), owner ${DEMO_OWNER}`)
    lines.push(`         password (shown once): ${password}`)
  }
  const tenant = await findTenant(store.read, DEMO_SLUG)
  const trades = tenant ? (await store.read.get(tradeCounts, [tenant.id]))! : { closed: 0, open: 0 }
  const { days } = replayed
  lines.push(
    `Demo:    replayed ${days.length} day${days.length === 1 ? '' : 's'} (${days.length ? `${days[0]} .. ${days.at(-1)}` : 'the history was up to date'}) in ${ms} ms: ` +
      `${replayed.signals} signals, ${trades.closed ?? 0} closed trades, ${trades.open ?? 0} open`,
  )
  const breakers = tenant && setBreakers ? await store.write((tx) => setBreakers(tx, tenant.id, now)) : undefined
  if (breakers) lines.push(breakers)
  let signals = 0
  const date = utcDay(now)
  for (const model of await catalogue(store.read)) signals += (await publishAndLog(store, model, date, 'demo', now))?.signals.length ?? 0
  lines.push(`Demo:    published ${date} (as of ${addDays(date, -1)}): ${signals} new signals`)
  return lines
}
