// Kill switch latency, measured by a client over HTTP against a real `bulwark serve`:
//  (a) CANCEL_AND_PAUSE on a tenant with 10,000 pending orders, against the same call with none
//      pending (target: median under 50 ms);
//  (b) the kill switch while 50 connections hammer GET /api/v1/signals (autocannon, a separate
//      process), against the same calls on the idle server in the same run (targets: p99 under
//      100 ms, median within 3 times the idle median).
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/kill-switch.ts [--bin dist/bulwark] [--reps N] [--calls N]
// Without --bin the server runs from source (node --import tsx src/main.ts), as the tests do.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { bulwarkCommand, ROOT, runAsScript, stopChild, startLoggedServer } from './script.ts'

const PENDING = 10_000
const TARGET_BULK_MS = 50
const TARGET_P99_MS = 100
const TARGET_RATIO = 3

// 50 connections on GET /api/v1/signals until SIGTERM, then one JSON line: requests/s and statuses.
const HAMMER = `const autocannon = require('autocannon')
const [url, key] = process.argv.slice(1)
const run = autocannon({ url, connections: 50, duration: 3600, headers: { authorization: 'Bearer ' + key } })
run.on('done', (r) => { console.log(JSON.stringify({ rps: r.requests.average, ok: r['2xx'], other: r.non2xx + r.errors + r.timeouts })); process.exit(0) })
process.on('SIGTERM', () => run.stop())`

function flag(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}

function command(args: string[]): [string, string[]] {
  return bulwarkCommand(args, flag('bin'))
}

function run(args: string[]): string {
  const [file, argv] = command(args)
  return execFileSync(file, argv, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

/** The server logs to a file, as in production: a pipe this busy process drains late would block it. */
async function startServer(dataDir: string, logFile: string): Promise<{ url: string; child: ChildProcess }> {
  const child = await startLoggedServer(['--data-dir', dataDir, '--rate-limit', '1000000000'], logFile, flag('bin'))
  return { url: child.url, child }
}

function tenantWithKey(slug: string, scopes: string, dataDir: string): string {
  run(['tenant', 'create', slug, '--plan', 'EXECUTE', '--max-open-trades', '10000', '--max-exposure-usd', '1000000000', '--data-dir', dataDir])
  return run(['token', 'create', '--tenant', slug, '--name', 'bench', '--scopes', scopes, '--data-dir', dataDir]).trim()
}

/** PENDING orders, with the order.created events the API would have written, straight into the file. */
function seedPendingOrders(db: Database.Database, slug: string, count: number): void {
  const tenant = (db.prepare('SELECT id FROM tenants WHERE slug = ?').get(slug) as { id: string }).id
  const prefix = `ord_01JZ${slug.replace(/[^0-9]/g, '').padStart(4, '0')}`
  db.transaction(() => {
    db.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
      INSERT INTO orders (id, tenant_id, pair, side, type, quantity, reference_price, reference_date, status, created_at)
      SELECT printf('${prefix}%018d', i), ?, CASE i % 3 WHEN 0 THEN 'BTC/USDT' WHEN 1 THEN 'ETH/USDT' ELSE 'SOL/USDT' END,
        'BUY', 'MARKET', 1, 100, '2025-05-01', 'PENDING', '2025-05-01T12:00:00.000Z' FROM n`).run(count, tenant)
    db.prepare(`INSERT INTO events (id, tenant_id, type, data, created_at)
      SELECT 'evt_' || substr(id, 5), tenant_id, 'order.created', json_object('id', id), created_at FROM orders WHERE tenant_id = ?`).run(tenant)
  })()
}

/** Milliseconds until the server has marked every canceled row and written its event. */
async function settledAfter(dataDir: string): Promise<number> {
  const started = performance.now()
  const db = new Database(join(dataDir, 'bulwark.db'), { readonly: true })
  try {
    const open = db.prepare('SELECT count(*) AS n FROM order_cancellations WHERE settled_at IS NULL')
    while ((open.get() as { n: number }).n > 0) await new Promise((r) => setTimeout(r, 5))
  } finally {
    db.close()
  }
  return performance.now() - started
}

async function killSwitch(url: string, key: string, action: string): Promise<{ ms: number; body: any }> {
  const started = performance.now()
  const res = await fetch(`${url}/api/v1/risk/kill-switch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ action, pause: ['CANCEL_AND_PAUSE', 'PAUSE', 'FLATTEN'].includes(action) }),
  })
  const body = await res.json()
  const ms = performance.now() - started
  if (res.status !== 200) throw new Error(`kill switch answered ${res.status}: ${JSON.stringify(body)}`)
  return { ms, body }
}

/** Sequential calls alternating CANCEL_AND_PAUSE and RESUME, a short pause between them. */
async function series(url: string, key: string, calls: number): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < calls; i++) {
    out.push((await killSwitch(url, key, i % 2 ? 'RESUME' : 'CANCEL_AND_PAUSE')).ms)
    await new Promise((r) => setTimeout(r, 5))
  }
  return out
}

async function main(): Promise<void> {
  const reps = Number(flag('reps', '9'))
  const calls = Number(flag('calls', '200'))
  const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-ks-'))
  const dataDir = join(work, 'data')
  let server: { url: string; child: ChildProcess } | undefined
  let hammer: ChildProcess | undefined
  try {
    run(['tenant', 'create', 'warmup', '--plan', 'SIGNAL', '--data-dir', dataDir]) // migrations
    const idleKey = tenantWithKey('bench-idle', 'risk:admin', dataDir)
    const readerKey = run(['token', 'create', '--tenant', 'bench-idle', '--name', 'reader', '--scopes', 'signals:read', '--data-dir', dataDir]).trim()
    const bulkKeys = Array.from({ length: reps }, (_, i) => tenantWithKey(`bulk-${i + 1}`, 'risk:admin', dataDir))
    const db = new Database(join(dataDir, 'bulwark.db'))
    for (let i = 0; i < reps; i++) seedPendingOrders(db, `bulk-${i + 1}`, PENDING)
    // The hammered endpoint answers a full page: 100 signals of two active models (placeholder links: sql/013 wants them).
    const idle = (db.prepare("SELECT id FROM tenants WHERE slug = 'bench-idle'").get() as { id: string }).id
    db.prepare("INSERT INTO workspace_models (tenant_id, model_id) VALUES (?, 'trend-follower'), (?, 'mean-reversion')").run(idle, idle)
    db.prepare(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 399)
      INSERT INTO signals (id, model_id, pair, action, direction, entry_price, as_of, created_at, model_version, model_hash, chain_seq, prev_hash, hash)
      SELECT printf('sig_01JZ%022d', i), CASE i % 2 WHEN 0 THEN 'trend-follower' ELSE 'mean-reversion' END,
        printf('P%d/USDT', i % 5), 'ENTER_LONG', 'LONG', 100 + i, date('2024-01-01', printf('+%d days', i / 5)),
        date('2024-01-01', printf('+%d days', i / 5)) || 'T00:05:00.000Z',
        '1.0.0', printf('%064d', 0), i + 1, printf('%064d', 0), printf('%064d', 0) FROM n`).run()
    db.close()

    server = await startServer(dataDir, join(work, 'serve.log'))
    const { url } = server
    await series(url, idleKey, 20) // warm up: JIT, statement cache, page cache

    // (a) 10,000 pending orders, against none.
    const empty = await series(url, idleKey, Math.max(reps * 2, 20))
    const bulk: number[] = []
    const settling: number[] = []
    for (const key of bulkKeys) {
      const { ms, body } = await killSwitch(url, key, 'CANCEL_AND_PAUSE')
      if (body.canceled_orders !== PENDING) throw new Error(`canceled ${body.canceled_orders}, expected ${PENDING}`)
      bulk.push(ms)
      settling.push(await settledAfter(dataDir))
    }

    // (b) idle, then under load, the same series.
    const idleMs = await series(url, idleKey, calls)
    hammer = spawn(process.execPath, ['-e', HAMMER, `${url}/api/v1/signals`, readerKey], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
    let report = ''
    hammer.stdout!.on('data', (d) => (report += d))
    const hammerDone = new Promise((done) => hammer!.on('exit', done))
    await new Promise((r) => setTimeout(r, 2000))
    const started = performance.now()
    const loadedMs = await series(url, idleKey, calls)
    const loadSeconds = (performance.now() - started) / 1000
    hammer.kill('SIGTERM')
    await hammerDone
    hammer = undefined
    const load = JSON.parse(report) as { rps: number; ok: number; other: number }
    if (load.other > 0 || load.ok === 0) throw new Error(`the signal requests did not all succeed: ${report}`)
    const rps = load.rps

    // In-server time of the same calls, from the request log (flushed when the server stops).
    const stopped = new Promise((done) => server!.child.on('exit', done))
    server.child.kill('SIGTERM')
    await stopped
    server = undefined
    const inServer = readFileSync(join(work, 'serve.log'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"route":"/api/v1/risk/kill-switch"'))
      .map((l) => JSON.parse(l).duration_ms as number)
    const serverIdle = inServer.slice(-2 * calls, -calls)
    const serverLoaded = inServer.slice(-calls)

    const p50 = (v: number[]) => percentile(v, 50)
    const p99 = (v: number[]) => percentile(v, 99)
    const ratio = p50(loadedMs) / p50(idleMs)
    const verdict = (met: boolean) => (met ? 'target met' : 'TARGET MISSED')
    console.log(`kill switch over HTTP (Node ${process.versions.node}, ${flag('bin') ? flag('bin') : 'source via tsx'}):`)
    console.log(`  (a) CANCEL_AND_PAUSE, nothing pending      median ${p50(empty).toFixed(1)} ms over ${empty.length} calls`)
    console.log(
      `      CANCEL_AND_PAUSE, ${PENDING} pending    median ${p50(bulk).toFixed(1)} ms, max ${Math.max(...bulk).toFixed(1)} ms over ${bulk.length} tenants (${verdict(p50(bulk) < TARGET_BULK_MS)}: < ${TARGET_BULK_MS} ms)`,
    )
    console.log(`      then settled into the rows and events within a median ${p50(settling).toFixed(0)} ms more (in the background)`)
    console.log(`  (b) idle server                            median ${p50(idleMs).toFixed(2)} ms, p99 ${p99(idleMs).toFixed(2)} ms over ${calls} calls`)
    console.log(
      `      50 connections on GET /api/v1/signals  median ${p50(loadedMs).toFixed(2)} ms, p99 ${p99(loadedMs).toFixed(2)} ms over ${calls} calls in ${loadSeconds.toFixed(1)} s; ${rps.toFixed(0)} signal requests/s`,
    )
    console.log(
      `      in the server (request log): idle median ${p50(serverIdle).toFixed(2)} ms, p99 ${p99(serverIdle).toFixed(2)} ms; loaded median ${p50(serverLoaded).toFixed(2)} ms, p99 ${p99(serverLoaded).toFixed(2)} ms`,
    )
    console.log(
      `      loaded/idle median ratio ${ratio.toFixed(2)} (${verdict(ratio <= TARGET_RATIO)}: <= ${TARGET_RATIO}); p99 ${verdict(p99(loadedMs) < TARGET_P99_MS)}: < ${TARGET_P99_MS} ms`,
    )
    console.log(
      `| ${p50(empty).toFixed(1)} ms | ${p50(bulk).toFixed(1)} ms | ${p50(idleMs).toFixed(2)} ms | ${p50(loadedMs).toFixed(2)} ms | ${p99(loadedMs).toFixed(2)} ms | ${ratio.toFixed(2)} | ${rps.toFixed(0)} req/s |`,
    )
    if (!(p50(bulk) < TARGET_BULK_MS && p99(loadedMs) < TARGET_P99_MS && ratio <= TARGET_RATIO)) process.exitCode = 1
  } finally {
    hammer?.kill('SIGKILL')
    if (server) await stopChild(server.child)
    rmSync(work, { recursive: true, force: true })
  }
}

runAsScript(import.meta.url, main)
