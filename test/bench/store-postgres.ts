// PostgreSQL against SQLite, in the same run (SPEC 15 "Speed": the docs give PostgreSQL's figures as
// ratios to SQLite's). One `bulwark serve` (the built executable, copied to a temp dir first so a
// concurrent `npm run build` cannot swap it mid-run) on each engine in turn: SQLite in its data dir,
// or a throwaway PostgreSQL 15 on 127.0.0.1 (test/support/postgres.ts; fsync and full_page_writes
// ON, as in production, unlike the test suite's server), a fresh data dir and a fresh database
// for every measurement. For --rounds rounds, each figure is measured on SQLite and on PostgreSQL
// back to back (SQLite first in even rounds, PostgreSQL first in odd ones), and the median of each
// side and PG/SQLite are printed with every round's value:
//   - orders: POST /api/v1/orders, a LIMIT BUY at half the last close (it stays PENDING), from 50
//     tenants with a key each: the median of 400 sequential orders over one keep-alive connection
//     (after 100 unmeasured), then orders/s with 32 connections (autocannon, --seconds, each request
//     with one of the 50 keys at random) with its p50 and p99, and the CPU time the server and
//     PostgreSQL's processes (postmaster, backends, from /proc) spent per order meanwhile;
//   - signals: authenticated GET /api/v1/signals answering 100 rows, 50 connections (as
//     test/bench/signals.ts), the mean of two runs of --seconds after a 2 s warm-up, and the CPU
//     time per request as for the orders;
//   - kill-switch: CANCEL_AND_PAUSE on a tenant with 10,000 pending orders (as
//     test/bench/kill-switch.ts; 5 tenants per measurement): the answer, and the time until every
//     canceled row and event is settled in the background (polled every 5 ms).
// The existing benches seed with SQLite's own SQL into bulwark.db; this one seeds through the Store
// (src/store/store.ts, the same domain functions, one SQL text per dialect for the bulk rows), so
// both engines get the same rows, and drives the server itself.
// Everything shares the machine's cores: the server, PostgreSQL's backends and the load generator.
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/store-postgres.ts [--bin dist/bulwark] [--rounds 3] [--seconds 8] [--only orders,signals,kill-switch] [--pg-setting synchronous_commit=off]
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { ChildProcess } from 'node:child_process'
import Database from 'better-sqlite3'
import pg from 'pg'
import { openApp } from '../../src/app.ts'
import { commandConfig } from '../../src/config.ts'
import { createApiKey } from '../../src/auth/api-keys.ts'
import type { Scope } from '../../src/auth/scopes.ts'
import { latestCandle } from '../../src/market/prices.ts'
import { addDays, utcDay } from '../../src/shared/dates.ts'
import { prng } from '../../src/shared/prng.ts'
import { query, type Store } from '../../src/store/store.ts'
import { createTenant } from '../../src/tenants/tenants.ts'
import { startPostgres, type PostgresServer } from '../support/postgres.ts'
import { importHistory } from './breaker-book.ts'
import { ROOT, runAsScript, startLoggedServer, stopChild } from './script.ts'

export interface AutocannonResult {
  requests: { average: number; total: number }
  latency: { p50: number; p90: number; p97_5: number; p99: number; average: number; max: number }
  errors: number
  timeouts: number
  non2xx: number
  '2xx': number
  duration: number
}
export const autocannon = createRequire(import.meta.url)('autocannon') as (options: Record<string, unknown>) => Promise<AutocannonResult>

export function flag(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
/** Every value of a repeatable flag. */
export function flags(name: string): string[] {
  return process.argv.flatMap((arg, i) => (arg === `--${name}` && process.argv[i + 1] !== undefined ? [process.argv[i + 1]] : []))
}

export type EngineName = 'sqlite' | 'postgres'

/** Where one measurement's server keeps its data: a data dir, and on PostgreSQL a fresh database. */
export interface Target {
  engine: EngineName
  dataDir: string
  databaseUrl: string | undefined
  /** The PostgreSQL server the database is on. */
  postgres?: PostgresServer
}

/**
 * The throwaway PostgreSQL of a run, configured as a production server would be as far as a commit
 * goes (fsync and full_page_writes on; test/support/postgres.ts turns them off for the suite),
 * plus any --pg-setting name=value.
 */
export function startBenchPostgres(): Promise<PostgresServer> {
  const settings: Record<string, string> = { fsync: 'on', full_page_writes: 'on', max_connections: '200' }
  for (const setting of flags('pg-setting')) {
    const [name, ...value] = setting.split('=')
    settings[name] = value.join('=')
  }
  return startPostgres({ settings })
}

/** A fresh target in `work`: a new data dir, and on PostgreSQL a new database of `server`. */
export async function freshTarget(engine: EngineName, work: string, server: PostgresServer | undefined, label: string): Promise<Target> {
  const dataDir = mkdtempSync(join(work, `${label}-${engine}-`))
  const databaseUrl =
    engine === 'postgres' ? await server!.createDatabase(`${label.replace(/\W/g, '_')}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`) : undefined
  return { engine, dataDir, databaseUrl, postgres: engine === 'postgres' ? server : undefined }
}

/** Opens the target's store through the App (migrations, secrets) as `serve` would, runs `seed`, closes it. */
export async function seedTarget<T>(target: Target, seed: (store: Store) => Promise<T>): Promise<T> {
  const app = await openApp(commandConfig({ 'data-dir': target.dataDir, database: target.databaseUrl }))
  try {
    return await seed(app.store)
  } finally {
    await app.close()
  }
}

/** `bulwark serve` on the target, logging to a file as in production. */
export function serveTarget(target: Target, bin: string, extra: string[] = []): Promise<ChildProcess & { url: string }> {
  const args = ['--data-dir', target.dataDir, ...(target.databaseUrl ? ['--database', target.databaseUrl] : []), ...extra]
  return startLoggedServer(args, join(target.dataDir, 'serve.log'), bin)
}

/** The executable copied to `work`, so that a build replacing dist/bulwark mid-run changes nothing. */
export function copiedBin(work: string): string {
  const bin = resolve(ROOT, flag('bin', 'dist/bulwark')!)
  const copy = join(work, 'bulwark')
  copyFileSync(bin, copy)
  return copy
}

export const PAIRS = ['BTC/USDT', 'ETH/USDT', 'SOL/USDT', 'BNB/USDT', 'XRP/USDT']

/** 60 daily candles of each pair up to yesterday: a LIMIT BUY needs the pair's last close. */
export async function seedCandles(store: Store): Promise<number[]> {
  const now = new Date()
  await store.write((tx) => importHistory(tx, PAIRS, addDays(utcDay(now), -1), 60, prng(11), now))
  const limits: number[] = []
  for (const pair of PAIRS) limits.push(Math.round((await latestCandle(store.read, pair))!.close * 0.5 * 1e4) / 1e4)
  return limits
}

/** `count` EXECUTE tenants (limits no order of a bench reaches) with `keysEach` API keys each. */
export async function seedTenants(store: Store, prefix: string, count: number, keysEach: number, scopes: Scope[]): Promise<{ id: string; keys: string[] }[]> {
  const tenants: { id: string; keys: string[] }[] = []
  // In batches: one transaction of 10,000 savepoints would hold SQLite's writer a long time.
  for (let start = 0; start < count; start += 100) {
    tenants.push(
      ...(await store.write(async (tx) => {
        const batch: { id: string; keys: string[] }[] = []
        for (let i = start; i < Math.min(count, start + 100); i++) {
          const tenant = await createTenant(tx, { slug: `${prefix}-${i}`, plan: 'EXECUTE', maxOpenTrades: 1_000_000, maxExposureUsd: 1e12 })
          const keys: string[] = []
          for (let k = 0; k < keysEach; k++)
            keys.push((await createApiKey(tx, { tenantId: tenant.id, createdBy: null, name: `bot-${k}`, scopes, expiresAt: null })).token)
          batch.push({ id: tenant.id, keys })
        }
        return batch
      })),
    )
  }
  return tenants
}

/** CPU seconds (user + system) a process has used; with `reaped`, also its children that have exited and were waited for. */
export function cpuSeconds(pid: number, reaped = false): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    // utime, stime, cutime, cstime in USER_HZ (100)
    return (Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0)) / 100
  } catch {
    return 0 // gone
  }
}

/** The CPU seconds of a PostgreSQL server: its postmaster, every backend alive, and those that have exited. */
export function postgresCpuSeconds(server: PostgresServer): number {
  const postmaster = Number(readFileSync(join(server.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
  let total = cpuSeconds(postmaster, true)
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === postmaster) total += cpuSeconds(Number(entry))
    } catch {
      // exited meanwhile
    }
  }
  return total
}

/** Starts counting the CPU the server (and PostgreSQL's processes, when given) use; the meter reads the seconds used since. */
export function cpuMeter(serverPid: number, postgres: PostgresServer | undefined): () => { node: number; postgres: number; wall: number } {
  const node0 = cpuSeconds(serverPid)
  const pg0 = postgres ? postgresCpuSeconds(postgres) : 0
  const t0 = performance.now()
  return () => ({ node: cpuSeconds(serverPid) - node0, postgres: postgres ? postgresCpuSeconds(postgres) - pg0 : 0, wall: (performance.now() - t0) / 1000 })
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** POST a JSON body with a bearer key; the status, the parsed body and the client's time. */
export async function call(url: string, key: string, method: string, body?: unknown): Promise<{ status: number; body: any; ms: number }> {
  const started = performance.now()
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const parsed = await res.json()
  return { status: res.status, body: parsed, ms: performance.now() - started }
}

/** A LIMIT BUY at half the pair's last close: it stays PENDING. */
export function orderBody(i: number, limits: number[]): string {
  const pair = i % PAIRS.length
  return JSON.stringify({ pair: PAIRS[pair], side: 'BUY', type: 'LIMIT', quantity: 0.01, limit_price: limits[pair] })
}

/** autocannon on POST /api/v1/orders: each request from one of `keys` at random, the bodies rotating over the pairs. */
export function ordersLoad(base: string, keys: string[], limits: number[], connections: number, seconds: number): Promise<AutocannonResult> {
  const bodies = PAIRS.map((_, i) => orderBody(i, limits))
  let n = 0
  return autocannon({
    url: `${base}/api/v1/orders`,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (request: Record<string, unknown>) => {
          n++
          return {
            ...request,
            method: 'POST',
            headers: { authorization: `Bearer ${keys[Math.floor(Math.random() * keys.length)]}`, 'content-type': 'application/json' },
            body: bodies[n % bodies.length],
          }
        },
      },
    ],
  })
}

function checkLoad(what: string, r: AutocannonResult): void {
  const failed = r.non2xx + r.errors + r.timeouts
  if (failed > 0 || r['2xx'] === 0) throw new Error(`${what}: ${r['2xx']} answered 200, ${r.non2xx} other statuses, ${r.errors} errors, ${r.timeouts} timeouts`)
}

// ---- the figures ---------------------------------------------------------------------------------

type Figures = Record<string, number>
interface Measure {
  name: string
  units: Record<string, 'ms' | '/s'>
  run(target: Target, bin: string): Promise<Figures>
}

const SECONDS = Number(flag('seconds', '8'))
const PENDING = 10_000

const orders: Measure = {
  name: 'orders',
  units: {
    'POST /orders median, one connection': 'ms',
    'POST /orders orders/s, 32 connections': '/s',
    'POST /orders p50 at 32': 'ms',
    'POST /orders p99 at 32': 'ms',
    'POST /orders CPU ms per order, node + PostgreSQL': 'ms',
    'POST /orders CPU ms per order, PostgreSQL alone': 'ms',
  },
  async run(target, bin) {
    const { limits, keys } = await seedTarget(target, async (store) => {
      const limits = await seedCandles(store)
      const tenants = await seedTenants(store, 'orders', 50, 1, ['orders:write'])
      return { limits, keys: tenants.map((t) => t.keys[0]) }
    })
    const server = await serveTarget(target, bin, ['--rate-limit', '1000000000'])
    try {
      const url = `${server.url}/api/v1/orders`
      const sequential: number[] = []
      for (let i = 0; i < 500; i++) {
        const placed = await call(url, keys[i % keys.length], 'POST', JSON.parse(orderBody(i, limits)))
        if (placed.status !== 200 || placed.body.status !== 'PENDING') throw new Error(`order answered ${placed.status}: ${JSON.stringify(placed.body)}`)
        if (i >= 100) sequential.push(placed.ms)
      }
      await ordersLoad(server.url, keys, limits, 32, 2) // warm-up of the pool and the JIT under load
      const meter = cpuMeter(server.pid!, target.postgres)
      const load = await ordersLoad(server.url, keys, limits, 32, SECONDS)
      const cpu = meter()
      checkLoad('orders', load)
      const placed = load['2xx']
      return {
        'POST /orders median, one connection': median(sequential),
        'POST /orders orders/s, 32 connections': load.requests.average,
        'POST /orders p50 at 32': load.latency.p50,
        'POST /orders p99 at 32': load.latency.p99,
        'POST /orders CPU ms per order, node + PostgreSQL': ((cpu.node + cpu.postgres) * 1000) / placed,
        'POST /orders CPU ms per order, PostgreSQL alone': (cpu.postgres * 1000) / placed,
      }
    } finally {
      await stopChild(server)
    }
  },
}

const insertSignal = query<unknown[]>(
  `INSERT INTO signals (id, model_id, pair, action, direction, entry_price, as_of, created_at, model_version, model_hash, chain_seq, prev_hash, hash)
   VALUES (?, ?, ?, 'ENTER_LONG', 'LONG', ?, ?, ?, '1.0.0', ?, ?, ?, ?)`,
)
const activateModel = query<unknown[]>('INSERT INTO workspace_models (tenant_id, model_id) VALUES (?, ?)')

const signals: Measure = {
  name: 'signals',
  units: { 'GET /signals req/s, 50 connections': '/s', 'GET /signals p99': 'ms', 'GET /signals CPU ms per request, node + PostgreSQL': 'ms' },
  async run(target, bin) {
    const key = await seedTarget(target, async (store) => {
      const [tenant] = await seedTenants(store, 'reader', 1, 1, ['signals:read'])
      // 150 signals over 2 models, as the publisher writes them (placeholder chain links: sql/013 wants them).
      const zeros = '0'.repeat(64)
      await store.write(async (tx) => {
        for (const model of ['trend-follower', 'mean-reversion']) await tx.run(activateModel, [tenant.id, model])
        for (let i = 0; i < 150; i++) {
          const day = new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 10) * 86_400_000).toISOString().slice(0, 10)
          const model = i % 2 ? 'trend-follower' : 'mean-reversion'
          const id = `sig_01M7${String(i).padStart(3, '0')}0000000000000000000`
          await tx.run(insertSignal, [id, model, PAIRS[i % 5], 100 + i * 1.25, day, `${day}T00:05:00.000Z`, zeros, i + 1, zeros, zeros])
        }
      })
      return tenant.keys[0]
    })
    const server = await serveTarget(target, bin, ['--rate-limit', '1000000000'])
    try {
      const url = `${server.url}/api/v1/signals`
      const headers = { authorization: `Bearer ${key}` }
      const sample = await fetch(url, { headers })
      const rows = (await sample.json()).length
      if (sample.status !== 200 || rows !== 100) throw new Error(`expected 100 signals, got ${sample.status} ${rows}`)
      await autocannon({ url, connections: 50, duration: 2, headers })
      const runs: AutocannonResult[] = []
      const meter = cpuMeter(server.pid!, target.postgres)
      for (let i = 0; i < 2; i++) {
        const r = await autocannon({ url, connections: 50, duration: SECONDS, headers })
        checkLoad('signals', r)
        runs.push(r)
      }
      const cpu = meter()
      return {
        'GET /signals req/s, 50 connections': (runs[0].requests.average + runs[1].requests.average) / 2,
        'GET /signals p99': Math.max(runs[0].latency.p99, runs[1].latency.p99),
        'GET /signals CPU ms per request, node + PostgreSQL': ((cpu.node + cpu.postgres) * 1000) / (runs[0]['2xx'] + runs[1]['2xx']),
      }
    } finally {
      await stopChild(server)
    }
  },
}

/**
 * PENDING orders `from`..`to` of the tenant and their order.created events, as the API would have
 * written them, in one statement each (in chunks: one statement for 10,000 rows can outlast
 * PostgreSQL's 4 s statement timeout on a busy machine).
 */
function pendingOrders(tenantId: string, n: number, from: number, to: number): ReturnType<typeof query>[] {
  const id = {
    sqlite: `printf('ord_01JZ${String(n).padStart(4, '0')}%018d', i)`,
    postgres: `'ord_01JZ${String(n).padStart(4, '0')}' || lpad(i::text, 18, '0')`,
  }
  const series = {
    sqlite: `WITH RECURSIVE n(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM n WHERE i < ${to})`,
    postgres: `WITH n(i) AS (SELECT generate_series(${from}, ${to}))`,
  }
  const order = `'${tenantId}', 'BTC/USDT', 'BUY', 'MARKET', 1, 100, '2025-05-01', 'PENDING', '2025-05-01T12:00:00.000Z'`
  const columns = 'id, tenant_id, pair, side, type, quantity, reference_price, reference_date, status, created_at'
  const both = (text: (dialect: 'sqlite' | 'postgres') => string) => query({ sqlite: text('sqlite'), postgres: text('postgres') })
  return [
    both((d) => `${series[d]} INSERT INTO orders (${columns}) SELECT ${id[d]}, ${order} FROM n`),
    both(
      (d) =>
        `${series[d]} INSERT INTO events (id, tenant_id, type, data, created_at) SELECT 'evt_' || substr(${id[d]}, 5), '${tenantId}', 'order.created', ` +
        `${d === 'sqlite' ? `json_object('id', ${id.sqlite})` : `json_build_object('id', ${id.postgres})::text`}, '2025-05-01T12:00:00.000Z' FROM n`,
    ),
  ]
}

/** Milliseconds until no cancellation is left unsettled, read by a connection of the bench's own. */
async function settledAfter(target: Target): Promise<number> {
  const started = performance.now()
  const sql = 'SELECT count(*) AS n FROM order_cancellations WHERE settled_at IS NULL'
  if (target.databaseUrl) {
    const client = new pg.Client({ connectionString: target.databaseUrl })
    await client.connect()
    try {
      while (Number((await client.query(sql)).rows[0].n) > 0) await new Promise((r) => setTimeout(r, 5))
    } finally {
      await client.end()
    }
  } else {
    const db = new Database(join(target.dataDir, 'bulwark.db'), { readonly: true })
    try {
      const open = db.prepare(sql)
      while ((open.get() as { n: number }).n > 0) await new Promise((r) => setTimeout(r, 5))
    } finally {
      db.close()
    }
  }
  return performance.now() - started
}

const TENANTS_WITH_PENDING = 5

const killSwitch: Measure = {
  name: 'kill-switch',
  units: { 'kill switch, 10,000 pending: answer': 'ms', 'kill switch, 10,000 pending: settled': 'ms' },
  async run(target, bin) {
    const { idle, bulk } = await seedTarget(target, async (store) => {
      const [idle, ...bulk] = await seedTenants(store, 'ks', 1 + TENANTS_WITH_PENDING, 1, ['risk:admin'])
      for (const [i, tenant] of bulk.entries()) {
        for (let from = 1; from <= PENDING; from += 2000) {
          await store.write(async (tx) => {
            for (const statement of pendingOrders(tenant.id, i + 1, from, Math.min(PENDING, from + 1999))) await tx.run(statement, [])
          })
        }
      }
      return { idle: idle.keys[0], bulk: bulk.map((t) => t.keys[0]) }
    })
    const server = await serveTarget(target, bin, ['--rate-limit', '1000000000'])
    try {
      const url = `${server.url}/api/v1/risk/kill-switch`
      const pull = async (key: string, action: string) => {
        const r = await call(url, key, 'POST', { action, pause: action !== 'RESUME' })
        if (r.status !== 200) throw new Error(`kill switch answered ${r.status}: ${JSON.stringify(r.body)}`)
        return r
      }
      for (let i = 0; i < 20; i++) await pull(idle, i % 2 ? 'RESUME' : 'CANCEL_AND_PAUSE') // warm up
      const answers: number[] = []
      const settled: number[] = []
      for (const key of bulk) {
        const r = await pull(key, 'CANCEL_AND_PAUSE')
        if (r.body.canceled_orders !== PENDING) throw new Error(`canceled ${r.body.canceled_orders}, expected ${PENDING}`)
        answers.push(r.ms)
        settled.push(await settledAfter(target))
      }
      return { 'kill switch, 10,000 pending: answer': median(answers), 'kill switch, 10,000 pending: settled': median(settled) }
    } finally {
      await stopChild(server)
    }
  },
}

const MEASURES = [orders, signals, killSwitch]

export function fmt(n: number, unit: string): string {
  if (unit === '/s') return n.toFixed(0)
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)
}

export const machine = () => `${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.versions.node}`

async function main(): Promise<void> {
  const rounds = Number(flag('rounds', '3'))
  const only = flag('only', MEASURES.map((m) => m.name).join(','))!.split(',')
  const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-pg-'))
  let server: PostgresServer | undefined
  try {
    const bin = copiedBin(work)
    server = await startBenchPostgres()
    const loadBefore = loadavg()
    const started = performance.now()
    const samples = new Map<string, { unit: string; sqlite: number[]; postgres: number[] }>()
    for (let round = 0; round < rounds; round++) {
      for (const measure of MEASURES.filter((m) => only.includes(m.name))) {
        for (const engine of round % 2 ? (['postgres', 'sqlite'] as const) : (['sqlite', 'postgres'] as const)) {
          const t0 = performance.now()
          const target = await freshTarget(engine, work, server, measure.name)
          let figures: Figures
          try {
            figures = await measure.run(target, bin)
          } catch (error) {
            // A failure under a busy machine's load is run once more, on a fresh target.
            console.error(`round ${round + 1} ${measure.name} ${engine}: ${(error as Error).message}; once more`)
            figures = await measure.run(await freshTarget(engine, work, server, measure.name), bin)
          }
          rmSync(target.dataDir, { recursive: true, force: true })
          const read: string[] = []
          for (const [name, value] of Object.entries(figures)) {
            if (!samples.has(name)) samples.set(name, { unit: measure.units[name], sqlite: [], postgres: [] })
            samples.get(name)![engine].push(value)
            read.push(`${name} ${fmt(value, measure.units[name])}`)
          }
          console.error(`round ${round + 1}/${rounds} ${measure.name} ${engine} (${((performance.now() - t0) / 1000).toFixed(0)} s): ${read.join('; ')}`)
        }
      }
    }
    const loadAfter = loadavg()
    const settings = flags('pg-setting')
    console.log(
      `PostgreSQL 15 (127.0.0.1, fsync on${settings.length ? `, ${settings.join(', ')}` : ''}) against SQLite, ${machine()}, ${bin.replace(work, '<copy of>')} (${flag('bin', 'dist/bulwark')}), medians of ${rounds} rounds (engines alternating) in ${((performance.now() - started) / 60_000).toFixed(1)} min`,
    )
    console.log('')
    console.log('| figure | SQLite median | PostgreSQL median | PG/SQLite | SQLite runs | PostgreSQL runs | PG/SQLite per round |')
    console.log('|---|---|---|---|---|---|---|')
    for (const [name, s] of samples) {
      const ratio = (p: number, q: number) => (q > 0 ? (p / q).toFixed(2) : '-')
      const perRound = s.postgres.map((p, i) => ratio(p, s.sqlite[i])).join(', ')
      console.log(
        `| ${name} (${s.unit === '/s' ? 'higher is better' : 'ms'}) | ${fmt(median(s.sqlite), s.unit)} | ${fmt(median(s.postgres), s.unit)} | **${ratio(median(s.postgres), median(s.sqlite))}** | ${s.sqlite.map((x) => fmt(x, s.unit)).join(', ')} | ${s.postgres.map((x) => fmt(x, s.unit)).join(', ')} | ${perRound} |`,
      )
    }
    console.log('')
    console.log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after: ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`)
  } finally {
    await server?.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

runAsScript(import.meta.url, main)
