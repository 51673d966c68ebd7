// Cost of the SPEC 9 limits and breakers on order placement: `POST /api/v1/orders` over HTTP against
// a real `bulwark serve`, for a tenant with every limit and breaker on (max_daily_loss_usd,
// max_drawdown_pct, max_consecutive_losses, max_order_notional_usd, price_band_pct,
// max_trades_per_day, max_orders_per_minute, set by PATCH /api/v1/risk/profile high enough never to
// refuse or trip) against a tenant with the defaults (all off), in the same run, in alternating
// rounds (A B B A ...) so that drift in the machine's load hits both. Both tenants hold the same
// book (--open trades open and --closed closed, on --pairs pairs), written through the paper
// broker's own functions before the server starts. Each order is a LIMIT BUY at half the last
// price, so it stays pending; it is canceled (untimed) before the next, so the book stays the same.
// Target: median with all on / median with all off <= 1.15.
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/breaker-orders.ts [--bin dist/bulwark] [--rounds 20] [--per-round 50] [--open 20] [--closed 50] [--pairs 20]
// Without --bin the server runs from source (node --import tsx src/main.ts), as the tests do.
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { openApp } from '../../src/app.ts'
import { commandConfig } from '../../src/config.ts'
import { createTenant } from '../../src/tenants/tenants.ts'
import { createApiKey } from '../../src/auth/api-keys.ts'
import { latestCandle } from '../../src/market/prices.ts'
import { addDays, utcDay } from '../../src/shared/dates.ts'
import { prng } from '../../src/shared/prng.ts'
import { importHistory, seedBook } from './breaker-book.ts'
import { runAsScript, stopChild, startLoggedServer } from './script.ts'

const TARGET_RATIO = 1.15

function flag(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
const ROUNDS = Number(flag('rounds', '20'))
const PER_ROUND = Number(flag('per-round', '50'))
const OPEN = Number(flag('open', '20'))
const CLOSED = Number(flag('closed', '50'))
const PAIRS = Array.from({ length: Number(flag('pairs', '20')) }, (_, i) => `P${String(i).padStart(3, '0')}/USDT`)

/** Every limit and breaker of SPEC 9 on, none of them reachable by this bench. */
const ALL_ON = {
  max_daily_loss_usd: 1e9,
  max_drawdown_pct: 99,
  max_consecutive_losses: 1000,
  breaker_action: 'CANCEL_AND_PAUSE',
  max_order_notional_usd: 1e9,
  price_band_pct: 1000,
  max_trades_per_day: 100_000,
  max_orders_per_minute: 100_000,
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}
const p50 = (v: number[]) => percentile(v, 50)
const p99 = (v: number[]) => percentile(v, 99)

/** The server logs to a file, as in production. */
function startServer(dataDir: string, logFile: string): Promise<ChildProcess & { url: string }> {
  return startLoggedServer(['--data-dir', dataDir, '--rate-limit', '1000000000'], logFile, flag('bin'))
}

interface Side {
  name: 'on' | 'off'
  key: string
  tenantId: string
  /** Half the last close of each pair: a LIMIT BUY there stays pending. */
  limits: number[]
  client: number[]
  server: string[]
}

/** Candles, the two tenants and their books, by our own domain functions, before serve opens the file. */
async function seed(dataDir: string): Promise<Side[]> {
  const now = new Date()
  const app = await openApp(commandConfig(dataDir))
  try {
    return await app.store.write(async (tx) => {
      await importHistory(tx, PAIRS, addDays(utcDay(now), -1), 60, prng(11), now)
      // Every order of the books is dated before today: none counts towards today's limits.
      const until = new Date(Date.parse(`${utcDay(now)}T00:00:00.000Z`) - 3_600_000)
      const limits: number[] = []
      for (const pair of PAIRS) limits.push(Math.round((await latestCandle(tx, pair))!.close * 0.5 * 1e4) / 1e4)
      const sides: Side[] = []
      for (const name of ['on', 'off'] as const) {
        const tenant = await createTenant(tx, { slug: `orders-${name}`, plan: 'EXECUTE', maxOpenTrades: 10_000, maxExposureUsd: 1e9 })
        await seedBook(tx, tenant.id, PAIRS, { open: OPEN, closed: CLOSED }, prng(5), until) // the same book for both
        const key = (await createApiKey(tx, { tenantId: tenant.id, createdBy: null, name: 'bench', scopes: ['orders:write', 'risk:admin'], expiresAt: null }))
          .token
        sides.push({ name, key, tenantId: tenant.id, limits, client: [], server: [] })
      }
      return sides
    })
  } finally {
    await app.close()
  }
}

async function call(url: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; requestId: string }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: res.status, body: await res.json(), requestId: res.headers.get('x-request-id') ?? '' }
}

/** One timed order, then its untimed cancellation. */
async function placeAndCancel(url: string, side: Side, i: number, record: boolean): Promise<void> {
  const pair = i % PAIRS.length
  const order = { pair: PAIRS[pair], side: 'BUY', type: 'LIMIT', quantity: 0.01, limit_price: side.limits[pair] }
  const started = performance.now()
  const placed = await call(url, side.key, 'POST', '/api/v1/orders', order)
  const ms = performance.now() - started
  if (placed.status !== 200 || placed.body.status !== 'PENDING')
    throw new Error(`${side.name}: order answered ${placed.status}: ${JSON.stringify(placed.body)}`)
  if (record) {
    side.client.push(ms)
    side.server.push(placed.requestId)
  }
  const canceled = await call(url, side.key, 'DELETE', `/api/v1/orders/${placed.body.id}`)
  if (canceled.status !== 200) throw new Error(`${side.name}: cancel answered ${canceled.status}: ${JSON.stringify(canceled.body)}`)
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-breaker-orders-'))
  const dataDir = join(work, 'data')
  let server: (ChildProcess & { url: string }) | undefined
  try {
    const [on, off] = await seed(dataDir)
    server = await startServer(dataDir, join(work, 'serve.log'))
    const { url } = server
    const patched = await call(url, on.key, 'PATCH', '/api/v1/risk/profile', ALL_ON)
    if (patched.status !== 200) throw new Error(`PATCH answered ${patched.status}: ${JSON.stringify(patched.body)}`)
    const defaults = (await call(url, off.key, 'GET', '/api/v1/risk/profile')).body
    for (const [limit, value] of Object.entries(ALL_ON)) {
      if (patched.body[limit] !== value) throw new Error(`${limit} is ${patched.body[limit]} after the PATCH`)
      if (limit !== 'breaker_action' && defaults[limit] !== null) throw new Error(`${limit} of the tenant with the defaults is ${defaults[limit]}`)
    }

    for (let i = 0; i < 100; i++) await placeAndCancel(url, i % 2 ? on : off, i, false) // warm up
    const rounds: { on: number; off: number }[] = []
    for (let r = 0; r < ROUNDS; r++) {
      const before = { on: on.client.length, off: off.client.length }
      for (const side of r % 2 ? [off, on] : [on, off]) {
        for (let i = 0; i < PER_ROUND; i++) await placeAndCancel(url, side, i, true)
      }
      rounds.push({ on: p50(on.client.slice(before.on)), off: p50(off.client.slice(before.off)) })
    }

    const stopped = new Promise((done) => server!.on('exit', done))
    server.kill('SIGTERM')
    await stopped
    server = undefined
    // In-server time of the same requests, from the request log, by request id.
    const logged = new Map<string, number>()
    for (const line of readFileSync(join(work, 'serve.log'), 'utf8').split('\n')) {
      if (!line.includes('"route":"/api/v1/orders"')) continue
      const entry = JSON.parse(line)
      if (entry.method === 'POST') logged.set(entry.request_id, entry.duration_ms)
    }
    const inServer = (side: Side) => side.server.map((id) => logged.get(id)!).filter((ms) => ms !== undefined)

    // Nothing refused or tripped, and what the ON tenant's counting limits saw by the end.
    const db = new Database(join(dataDir, 'bulwark.db'), { readonly: true })
    const count = (sql: string, ...args: unknown[]) => (db.prepare(sql).get(...args) as { n: number }).n
    const incidents = count(
      "SELECT count(*) AS n FROM incidents WHERE tenant_id = ? AND action IN ('CIRCUIT_BREAKER_TRIPPED', 'RISK_LIMIT_BREACHED')",
      on.tenantId,
    )
    const warnings = count("SELECT count(*) AS n FROM events WHERE tenant_id = ? AND type = 'risk.limit.warning'", on.tenantId)
    const today = count('SELECT count(*) AS n FROM orders WHERE tenant_id = ? AND created_at >= ?', on.tenantId, `${utcDay(new Date())}T00:00:00.000Z`)
    db.close()
    if (incidents + warnings > 0)
      throw new Error(`the ON tenant saw ${incidents} trips or refusals and ${warnings} warnings: the limits were meant never to be reached`)

    const ratio = p50(on.client) / p50(off.client)
    const serverRatio = p50(inServer(on)) / p50(inServer(off))
    const f = (n: number) => `${n.toFixed(2)} ms`
    const n = on.client.length
    console.log(
      `POST /api/v1/orders over HTTP (Node ${process.versions.node}, ${flag('bin') ?? 'source via tsx'}), ${ROUNDS} alternating rounds of ${PER_ROUND} orders per tenant:`,
    )
    console.log(`  book of each tenant: ${OPEN} open trades, ${CLOSED} closed, ${PAIRS.length} pairs; orders placed today by the end: ${today} per tenant`)
    console.log(`  all limits and breakers ON   median ${f(p50(on.client))}, p99 ${f(p99(on.client))} over ${n} orders`)
    console.log(`  all OFF (defaults)           median ${f(p50(off.client))}, p99 ${f(p99(off.client))} over ${off.client.length} orders`)
    console.log(
      `  in the server (request log): ON median ${f(p50(inServer(on)))}, p99 ${f(p99(inServer(on)))}; OFF median ${f(p50(inServer(off)))}, p99 ${f(p99(inServer(off)))}; ratio ${serverRatio.toFixed(3)}`,
    )
    console.log(`  median ratio per round, first to last: ${rounds.map((r) => (r.on / r.off).toFixed(2)).join(' ')}`)
    console.log(`  ON median / OFF median = ${ratio.toFixed(3)} (p99 ratio ${(p99(on.client) / p99(off.client)).toFixed(3)})`)
    console.log(`  target <= ${TARGET_RATIO}x: ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'}`)
    console.log(
      `| ${f(p50(on.client))} | ${f(p99(on.client))} | ${f(p50(off.client))} | ${f(p99(off.client))} | ${ratio.toFixed(3)} | ${serverRatio.toFixed(3)} |`,
    )
    if (ratio > TARGET_RATIO) process.exitCode = 1
  } finally {
    if (server) await stopChild(server)
    rmSync(work, { recursive: true, force: true })
  }
}

runAsScript(import.meta.url, main)
