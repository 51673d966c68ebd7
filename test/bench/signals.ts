// Throughput of the hot read path: an authenticated `GET /api/v1/signals` answering 100 rows, under
// autocannon on 127.0.0.1, against a bare node:http server answering the very same bytes (status,
// headers and body captured from Bulwark), both as their own processes, measured in the same run and
// interleaved (A B B A) so that load drift on a shared machine hits both. Bulwark runs with request
// logging on, its stdout going to a file; `--quiet` is measured too, for reference.
// Targets: >= 60% of the bare server's requests per second, p99 < 10 ms at 50 connections, RSS < 150 MB.
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/signals.ts [--seconds 10] [--warmup 3] [--connections 50] [--pin] [--bin dist/bulwark] [--cpu-prof DIR]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TARGET_RATIO = 0.6
const TARGET_P99_MS = 10
const TARGET_RSS_MB = 150

interface AutocannonResult {
  requests: { average: number; total: number }
  latency: { p50: number; p90: number; p97_5: number; p99: number; average: number; max: number }
  throughput: { average: number }
  errors: number
  timeouts: number
  non2xx: number
  '2xx': number
}
const autocannon = createRequire(import.meta.url)('autocannon') as (options: Record<string, unknown>) => Promise<AutocannonResult>

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : Number(process.argv[at + 1])
}
const SECONDS = flag('seconds', 10)
const WARMUP = flag('warmup', 3)
const CONNECTIONS = flag('connections', 50)
// --pin: autocannon (this process) on CPU 0, each server on CPU 1, so neither steals the other's core.
const PIN = process.argv.includes('--pin')
// --bin FILE: run the built executable (npm run build) instead of the sources through tsx.
const binIndex = process.argv.indexOf('--bin')
const BIN = binIndex === -1 ? undefined : process.argv[binIndex + 1]
const profIndex = process.argv.indexOf('--cpu-prof')
const CPU_PROF_DIR = profIndex === -1 ? undefined : process.argv[profIndex + 1]

/** Starts a process and resolves with its base URL once it prints one (stdout goes to a file). */
async function startProcess(args: string[], logFile: string, command = process.execPath): Promise<{ child: ChildProcess; url: string }> {
  const out = openSync(logFile, 'w')
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', out, 'inherit'] })
  if (PIN) spawnSync('taskset', ['-cp', '1', String(child.pid)], { stdio: 'ignore' })
  const started = Date.now()
  while (Date.now() - started < 30_000) {
    const match = /http:\/\/127\.0\.0\.1:\d+/.exec(readFileSync(logFile, 'utf8'))
    if (match) return { child, url: match[0] }
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited ${child.exitCode}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`no banner from ${args.join(' ')}`)
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await exited
}

function run(command: string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, command, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command.join(' ')}: ${err}`))))
    child.stdin.end(input)
  })
}

async function json(url: string, init: RequestInit = {}): Promise<any> {
  const res = await fetch(url, init)
  if (res.status !== 200) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`)
  return res.json()
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
}

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in USER_HZ (100)
}

interface Run extends AutocannonResult {
  rssMaxMb: number
  cpuPct: number
}

/** autocannon against url; samples the server's RSS every 100 ms and its CPU use while the load runs. */
async function load(url: string, pid: number, headers: Record<string, string>, seconds: number): Promise<Run> {
  let rssMaxMb = rssMb(pid)
  const sampler = setInterval(() => {
    rssMaxMb = Math.max(rssMaxMb, rssMb(pid))
  }, 100)
  const cpuBefore = cpuSeconds(pid)
  const started = performance.now()
  try {
    const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers, pipelining: 1 })
    const cpuPct = ((cpuSeconds(pid) - cpuBefore) / ((performance.now() - started) / 1000)) * 100
    return { ...result, rssMaxMb: Math.max(rssMaxMb, rssMb(pid)), cpuPct }
  } finally {
    clearInterval(sampler)
  }
}

// The bare baseline: node:http answering the captured status, headers and body, nothing else.
const BARE = `const http = require('node:http')
const { status, headers, body } = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8'))
const server = http.createServer((req, res) => { res.writeHead(status, headers); res.end(body) })
server.listen(0, '127.0.0.1', () => console.log('bare serving http://127.0.0.1:' + server.address().port))
process.on('SIGTERM', () => { server.close(); server.closeAllConnections(); process.exit(0) })`

async function setup(dataDir: string): Promise<void> {
  const cli = (args: string[], input = '') => run(['--import', 'tsx', 'src/main.ts', ...args, '--data-dir', dataDir], input)
  await cli(['tenant', 'create', 'bench', '--plan', 'EXECUTE'])
  await cli(['user', 'create', 'owner@bench.test', '--tenant', 'bench', '--role', 'owner', '--password-stdin'], 'bench-password-123')
  // Signals straight into the database file, as the publisher writes them: 150 rows over 2 models.
  const db = new Database(join(dataDir, 'bulwark.db'))
  // Placeholder links: new signals must carry them (sql/013).
  const insert = db.prepare(
    `INSERT INTO signals (id, model_id, pair, action, direction, entry_price, as_of, created_at, model_version, model_hash, chain_seq, prev_hash, hash)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, '1.0.0', printf('%064d', 0), ?, printf('%064d', 0), printf('%064d', 0))`,
  )
  const pairs = ['BTC/USDT', 'ETH/USDT', 'SOL/USDT', 'BNB/USDT', 'XRP/USDT']
  db.transaction(() => {
    for (let i = 0; i < 150; i++) {
      const day = new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 10) * 86_400_000).toISOString().slice(0, 10)
      const model = i % 2 ? 'trend-follower' : 'mean-reversion'
      insert.run(
        `sig_01M7${String(i).padStart(3, '0')}0000000000000000000`,
        model,
        pairs[i % 5],
        'ENTER_LONG',
        'LONG',
        100 + i * 1.25,
        day,
        `${day}T00:05:00.000Z`,
        i + 1,
      )
    }
  })()
  db.close()
}

async function configure(base: string): Promise<string> {
  const session = await json(`${base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'owner@bench.test', password: 'bench-password-123' }),
  })
  const auth = { authorization: `Bearer ${session.access_token}`, 'content-type': 'application/json' }
  await json(`${base}/api/v1/workspace/models`, { method: 'PUT', headers: auth, body: JSON.stringify({ model_ids: ['trend-follower', 'mean-reversion'] }) })
  const token = await json(`${base}/api/v1/auth/api-tokens`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'bench', scopes: ['signals:read'] }),
  })
  return token.token
}

function row(name: string, r: Run): string {
  return `| ${name} | ${Math.round(r.requests.average)} | ${r.latency.p50} | ${r.latency.p97_5} | ${r.latency.p99} | ${r.latency.max} | ${r.non2xx + r.errors + r.timeouts} | ${r.rssMaxMb.toFixed(0)} | ${r.cpuPct.toFixed(0)} |`
}

async function main(): Promise<void> {
  if (PIN) spawnSync('taskset', ['-cp', '0', String(process.pid)], { stdio: 'ignore' })
  const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-signals-'))
  const dataDir = join(work, 'data')
  const loadBefore = loadavg()
  const children: ChildProcess[] = []
  try {
    await setup(dataDir)
    const serveArgs = (extra: string[]) => [
      ...(BIN ? [] : [...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : []), '--import', 'tsx', 'src/main.ts']),
      'serve',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--rate-limit',
      '100000000',
      ...extra,
    ]
    const serveCommand = BIN ?? process.execPath
    // Setup through the real API, then capture the exact answer to replay from the bare server.
    let bulwark = await startProcess(serveArgs([]), join(work, 'bulwark.log'), serveCommand)
    children.push(bulwark.child)
    const key = await configure(bulwark.url)
    const rssAfterSetup = rssMb(bulwark.child.pid!)
    const target = `${bulwark.url}/api/v1/signals`
    const sample = await fetch(target, { headers: { authorization: `Bearer ${key}` } })
    const body = await sample.text()
    const rows = JSON.parse(body).length
    if (sample.status !== 200 || rows !== 100) throw new Error(`expected 100 signals, got ${sample.status} ${rows}`)
    const headers: Record<string, string> = {}
    sample.headers.forEach((value, name) => {
      if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) headers[name] = value
    })
    writeFileSync(join(work, 'answer.json'), JSON.stringify({ status: 200, headers, body }))
    const bare = await startProcess(
      [...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`, '--cpu-prof-name=bare.cpuprofile'] : []), '-e', BARE, join(work, 'answer.json')],
      join(work, 'bare.log'),
    )
    children.push(bare.child)
    const check = await fetch(`${bare.url}/api/v1/signals`)
    if ((await check.text()) !== body) throw new Error('bare server answers other bytes')

    const auth = { authorization: `Bearer ${key}` }
    const bareUrl = `${bare.url}/api/v1/signals`
    const runs: Record<string, Run[]> = { bare: [], bulwark: [], quiet: [] }
    await load(bareUrl, bare.child.pid!, auth, WARMUP)
    await load(target, bulwark.child.pid!, auth, WARMUP)
    // A B B A: drift in the machine's load falls on both sides alike.
    runs.bare.push(await load(bareUrl, bare.child.pid!, auth, SECONDS))
    runs.bulwark.push(await load(target, bulwark.child.pid!, auth, SECONDS))
    runs.bulwark.push(await load(target, bulwark.child.pid!, auth, SECONDS))
    runs.bare.push(await load(bareUrl, bare.child.pid!, auth, SECONDS))
    const logLines = readFileSync(join(work, 'bulwark.log'), 'utf8').split('\n').length

    // The same server with request logging off, for reference.
    await stop(bulwark.child)
    bulwark = await startProcess(serveArgs(['--quiet']), join(work, 'quiet.log'), serveCommand)
    children.push(bulwark.child)
    const quietRssAtStart = rssMb(bulwark.child.pid!)
    await load(`${bulwark.url}/api/v1/signals`, bulwark.child.pid!, auth, WARMUP)
    runs.quiet.push(await load(`${bulwark.url}/api/v1/signals`, bulwark.child.pid!, auth, SECONDS))

    const mean = (rs: AutocannonResult[]) => rs.reduce((s, r) => s + r.requests.average, 0) / rs.length
    const worst = (rs: AutocannonResult[], f: (r: AutocannonResult) => number) => Math.max(...rs.map(f))
    const ratio = mean(runs.bulwark) / mean(runs.bare)
    const p99 = worst(runs.bulwark, (r) => r.latency.p99)
    const rss = Math.max(...runs.bulwark.map((r) => r.rssMaxMb), ...runs.quiet.map((r) => r.rssMaxMb))
    const failures = [...runs.bulwark, ...runs.quiet].reduce((s, r) => s + r.non2xx + r.errors + r.timeouts, 0)
    const loadAfter = loadavg()
    const lines = [
      `GET /api/v1/signals (100 rows, ${Buffer.byteLength(body)} bytes, API key with signals:read), ${CONNECTIONS} connections, ${SECONDS} s per run after a ${WARMUP} s warmup, Node ${process.version}, Bulwark ${BIN ? `from ${BIN}` : 'from source through tsx'}${PIN ? ', client pinned to CPU 0 and servers to CPU 1' : ''}`,
      '',
      '| server | req/s | p50 ms | p97.5 ms | p99 ms | max ms | errors+non-2xx | max RSS MB | server CPU % |',
      '|---|---|---|---|---|---|---|---|---|',
      ...runs.bare.map((r, i) => row(`bare node:http #${i + 1}`, r)),
      ...runs.bulwark.map((r, i) => row(`Bulwark, logging to a file #${i + 1}`, r)),
      ...runs.quiet.map((r) => row('Bulwark --quiet', r)),
      '',
      `Bulwark / bare: ${(ratio * 100).toFixed(1)}% of the bare server's requests per second (target >= ${TARGET_RATIO * 100}%): ${ratio >= TARGET_RATIO ? 'met' : 'MISSED'}`,
      `Bulwark --quiet / bare: ${((mean(runs.quiet) / mean(runs.bare)) * 100).toFixed(1)}%`,
      `p99 (worst logging run): ${p99} ms (target < ${TARGET_P99_MS} ms): ${p99 < TARGET_P99_MS ? 'met' : 'MISSED'}`,
      `max RSS of the Bulwark process under load: ${rss.toFixed(0)} MB (target < ${TARGET_RSS_MB} MB): ${rss < TARGET_RSS_MB ? 'met' : 'MISSED'}`,
      `Bulwark answers that were not 200: ${failures}; log lines written: ${logLines}; RSS of the logging server after setup (login, key, models): ${rssAfterSetup.toFixed(0)} MB, of the --quiet server before its load: ${quietRssAtStart.toFixed(0)} MB`,
      `load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after: ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`,
    ]
    console.log(lines.join('\n'))
    process.exitCode = ratio >= TARGET_RATIO && p99 < TARGET_P99_MS && rss < TARGET_RSS_MB && failures === 0 ? 0 : 1
  } finally {
    for (const child of children) await stop(child)
    rmSync(work, { recursive: true, force: true })
  }
}

await main()
