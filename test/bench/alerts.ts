// Alerts in (SPEC 16): from an alert's arrival to its answer, at 50 alerts a second spread over 100
// hooks (each hook then takes 30 a minute, half its limit), against POST /api/v1/orders placing the
// same orders at the same rate in the same run. Each side has a tenant of its own with generous
// limits, so neither books the other's orders; every order is a PAPER MARKET BUY that stays PENDING
// (no price arrives), as the receiver's own work is what is measured: the hook read and its secret
// opened, the message read, the duplicate check, the pre-trade checks, the order and the log row.
// The load is open: a request leaves every 20 ms whatever the answers, as senders do; the two sides
// take turns in blocks of 2 s (A B B A ...), so that the machine's other work falls on both alike. The time is
// measured by the sender, on one machine, from the request's first byte to the answer's last, and
// by the server (its request log's duration_ms: from the request's arrival to its answer).
// --postgres runs it on a throwaway PostgreSQL 15 (test/support/postgres.ts, fsync on as in production).
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/alerts.ts [--bin dist/bulwark] [--seconds 30] [--postgres]
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { type PostgresServer, startPostgres } from '../support/postgres.ts'
import { bulwarkCommand, ROOT, runAsScript, startLoggedServer, stopChild } from './script.ts'

const PAIRS: [string, number][] = [
  ['BTC/USDT', 60_000],
  ['ETH/USDT', 3000],
  ['SOL/USDT', 150],
  ['BNB/USDT', 550],
  ['XRP/USDT', 0.55],
]
const HOOKS = 100
const PER_SECOND = 50
/** The load alternates between the two sides in blocks this long. */
const BLOCK_SECONDS = 2

function flag(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}

/** The PostgreSQL database of this run with --postgres; SQLite in the data dir without. */
let database: string | undefined

function run(args: string[], input?: string): Promise<string> {
  const [file, argv] = bulwarkCommand([...args, ...(database ? ['--database', database] : [])], flag('bin'))
  return new Promise((resolve, reject) => {
    const child = execFile(file, argv, { cwd: ROOT, encoding: 'utf8' }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    )
    child.stdin!.end(input ?? '')
  })
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]
}

async function call(url: string, path: string, init: { body: string; type: string; token?: string }): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = { 'content-type': init.type }
  if (init.token) headers.authorization = `Bearer ${init.token}`
  try {
    const res = await fetch(url + path, { method: 'POST', headers, body: init.body })
    return { status: res.status, json: await res.json() }
  } catch (error) {
    throw new Error(`POST ${path}: ${(error as Error).message} (${String((error as Error).cause)})`)
  }
}

/** A tenant with generous limits and its owner; returns the owner's e-mail and password. */
async function tenant(slug: string, dataDir: string): Promise<{ email: string; password: string }> {
  await run(['tenant', 'create', slug, '--plan', 'EXECUTE', '--max-open-trades', '10000', '--max-exposure-usd', '1000000000', '--data-dir', dataDir])
  const email = `owner@${slug}.bench`
  const password = `bench-${slug}-correct-horse`
  await run(['user', 'create', email, '--tenant', slug, '--role', 'owner', '--password-stdin', '--data-dir', dataDir], password)
  return { email, password }
}

/** The n-th order of a run: the same for both sides (a small BUY on one of the pairs). */
function nth(n: number): { pair: string; quantity: string } {
  const [pair, price] = PAIRS[n % PAIRS.length]
  return { pair, quantity: (10 / price).toPrecision(4) }
}

/**
 * Sends `send(n)` every 1000/PER_SECOND ms for `seconds`, without waiting for answers; returns each
 * request's time to its answer, in ms.
 */
async function openLoad(seconds: number, first: number, send: (n: number) => Promise<{ status: number; json: any }>): Promise<number[]> {
  const total = seconds * PER_SECOND
  const times: Promise<number>[] = []
  const start = performance.now()
  for (let i = 0; i < total; i++) {
    const n = first + i
    const due = start + (i * 1000) / PER_SECOND
    const wait = due - performance.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    const sent = performance.now()
    times.push(
      send(n).then((answer) => {
        if (answer.status !== 200) throw new Error(`request ${n} answered ${answer.status}: ${JSON.stringify(answer.json)}`)
        return performance.now() - sent
      }),
    )
  }
  return Promise.all(times)
}

async function main(): Promise<void> {
  const seconds = Math.max(BLOCK_SECONDS, Math.round(Number(flag('seconds', '30')) / BLOCK_SECONDS) * BLOCK_SECONDS)
  const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-alerts-'))
  const dataDir = join(work, 'data')
  let server: Awaited<ReturnType<typeof startLoggedServer>> | undefined
  let postgres: PostgresServer | undefined
  try {
    if (process.argv.includes('--postgres')) {
      postgres = await startPostgres({ settings: { fsync: 'on', full_page_writes: 'on', max_connections: '200' } })
      database = await postgres.createDatabase('bench_alerts')
    }
    const csv = ['pair,date,open,high,low,close,volume', ...PAIRS.map(([p, c]) => `${p},2025-05-01,${c},${c},${c},${c},1000`)].join('\n')
    writeFileSync(join(work, 'prices.csv'), `${csv}\n`)
    await run(['prices', 'import', join(work, 'prices.csv'), '--data-dir', dataDir])
    const senders = await tenant('bench-alerts', dataDir)
    await tenant('bench-api', dataDir)
    const apiToken = (await run(['token', 'create', '--tenant', 'bench-api', '--name', 'bench', '--scopes', 'orders:write', '--data-dir', dataDir])).trim()
    const args = ['--data-dir', dataDir, '--rate-limit', '1000000000', ...(database ? ['--database', database] : [])]
    server = await startLoggedServer(args, join(work, 'serve.log'), flag('bin'))
    const { url } = server

    const login = await call(url, '/api/v1/auth/login', { body: JSON.stringify(senders), type: 'application/json' })
    const session = login.json.access_token as string
    const hooks: { path: string; secret: string }[] = []
    for (let i = 0; i < HOOKS; i++) {
      const made = await call(url, '/api/v1/alert-hooks', {
        body: JSON.stringify({ name: `strategy ${i}`, mode: 'PAPER' }),
        type: 'application/json',
        token: session,
      })
      if (made.status !== 200) throw new Error(`hook ${i}: ${JSON.stringify(made.json)}`)
      hooks.push({ path: new URL(made.json.url).pathname, secret: made.json.secret })
    }

    // What TradingView posts: its placeholders substituted into the text, sent as text/plain.
    const alert = (n: number) => {
      const hook = hooks[n % HOOKS]
      const { pair, quantity } = nth(n)
      const body = JSON.stringify({
        secret: hook.secret,
        id: `bench-${n}`,
        pair: pair.replace('/', ''),
        side: 'buy',
        quantity,
        timestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      })
      return call(url, hook.path, { body, type: 'text/plain; charset=utf-8' })
    }
    const order = (n: number) => {
      const { pair, quantity } = nth(n)
      return call(url, '/api/v1/orders', {
        body: JSON.stringify({ pair, side: 'BUY', type: 'MARKET', quantity: Number(quantity) }),
        type: 'application/json',
        token: apiToken,
      })
    }
    // Warm-up: the first requests of each kind pay for code not yet compiled; not measured.
    for (let n = 0; n < 50; n++) {
      await alert(1_000_000 + n)
      await order(1_000_000 + n)
    }

    // Alternating blocks (A B B A A B ...), so that whatever else the machine does falls on both alike.
    const alerts: number[] = []
    const orders: number[] = []
    for (let b = 0; b < seconds / BLOCK_SECONDS; b++) {
      const first = b * BLOCK_SECONDS * PER_SECOND
      const sides: [number[], (n: number) => ReturnType<typeof alert>][] = [
        [alerts, alert],
        [orders, order],
      ]
      if (b % 2 === 1) sides.reverse()
      for (const [into, send] of sides) into.push(...(await openLoad(BLOCK_SECONDS, first, send)))
    }
    await stopChild(server)
    // The server's own measure, from the request's arrival to its answer (its request log lines),
    // without the sender's side: the last ones of each route, after the warm-up.
    const logged = (route: string, n: number) =>
      readFileSync(join(work, 'serve.log'), 'utf8')
        .split('\n')
        .filter((line) => line.includes(`"route":"${route}"`) && line.includes('"status":200'))
        .map((line) => JSON.parse(line).duration_ms as number)
        .slice(-n)
    const row = (name: string, times: number[]) =>
      `${name.padEnd(26)} n=${times.length}  median ${quantile(times, 0.5).toFixed(2)} ms  p99 ${quantile(times, 0.99).toFixed(2)} ms  max ${Math.max(...times).toFixed(2)} ms`
    const ratios = (a: number[], b: number[]) =>
      `median ${(quantile(a, 0.5) / quantile(b, 0.5)).toFixed(2)}, p99 ${(quantile(a, 0.99) / quantile(b, 0.99)).toFixed(2)}`
    const served = { alerts: logged('/hooks/alerts/:id', alerts.length), orders: logged('/api/v1/orders', orders.length) }
    console.log(
      `engine: ${database ? 'postgres' : 'sqlite'}, ${PER_SECOND}/s for ${seconds} s each, alerts over ${HOOKS} hooks; load average ${loadavg()[0].toFixed(1)}`,
    )
    console.log('as the sender sees it (request sent to answer read):')
    console.log(row('  POST /hooks/alerts/:id', alerts))
    console.log(row('  POST /api/v1/orders', orders))
    console.log(`  ratio alert/order: ${ratios(alerts, orders)}`)
    console.log("as the server logs it (arrival to answer, the request line's duration_ms):")
    console.log(row('  POST /hooks/alerts/:id', served.alerts))
    console.log(row('  POST /api/v1/orders', served.orders))
    console.log(`  ratio alert/order: ${ratios(served.alerts, served.orders)} (SPEC 16: an answer within 1 s)`)
    server = undefined
  } finally {
    if (server) await stopChild(server)
    await postgres?.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

runAsScript(import.meta.url, main)
