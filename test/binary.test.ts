// The built executable, driven as an operator would: copied alone into an empty folder, run with a
// PATH that has no node and no node_modules anywhere above it. CI builds before it tests; without
// dist/bulwark this file registers no test.
import Database from 'better-sqlite3'
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openTestDatabase } from './support/database.ts'
import { databaseUrlFor, ENGINE } from './support/harness.ts'
import { startVenueChild } from './support/venue/index.ts'

const built = fileURLToPath(new URL('../dist/bulwark', import.meta.url))
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }

if (!existsSync(built)) {
  console.log('binary.test.ts: dist/bulwark is not built (npm run build); its tests are not registered')
} else {
  defineSuite()
}

function defineSuite(): void {
  const binary = suite('dist/bulwark')
  const root = mkdtempSync(join(tmpdir(), 'bulwark-bin-'))
  const exe = join(root, 'bulwark')
  const dataDir = join(root, 'data')
  const emptyBin = join(root, 'no-bin')
  // Only what a bare service account has: nothing to find a node or a node_modules with (and on
  // PostgreSQL, the data dir's database: binary.before names it).
  const env: Record<string, string> = { PATH: emptyBin, HOME: root, LANG: 'C.UTF-8', TZ: 'UTC' }
  /** The database of a data dir as the environment names it: nothing on SQLite. */
  const databaseEnv = async (dir: string): Promise<Record<string, string>> => {
    const url = await databaseUrlFor(dir)
    return url ? { BULWARK_DATABASE_URL: url } : {}
  }
  let server: ChildProcess | undefined
  let base = ''
  let apiKey = ''

  const run = (args: string[], input?: string): SpawnSyncReturns<string> => spawnSync(exe, args, { cwd: root, env, input, encoding: 'utf8', timeout: 20_000 })

  const ok = (args: string[], input?: string): string => {
    const result = run(args, input)
    assert.is(result.status, 0, `bulwark ${args.join(' ')} exited ${result.status}: ${result.stderr}${result.stdout}`)
    return result.stdout
  }

  binary.before(async () => {
    Object.assign(env, await databaseEnv(dataDir))
    mkdirSync(emptyBin)
    copyFileSync(built, exe)
    // Nothing from this repository may be within reach of the copy.
    for (let dir = root; dir !== dirname(dir); dir = dirname(dir)) {
      assert.not.ok(existsSync(join(dir, 'node_modules')), `${dir}/node_modules is reachable`)
    }
  })

  binary.after(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGKILL')
      await exitOf(server)
    }
    rmSync(root, { recursive: true, force: true })
  })

  binary('--version prints the package version', () => {
    assert.is(ok(['--version']).trim(), version)
  })

  binary('serve starts and reports HEALTHY', async () => {
    server = spawn(exe, ['serve', '--port', '0', '--data-dir', dataDir], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    base = await banner(server)
    const response = await fetch(`${base}/api/v1/health`)
    assert.is(response.status, 200)
    const health = (await response.json()) as { status: string; version: string }
    assert.is(health.status, 'HEALTHY')
    assert.is(health.version, version)
  })

  binary('the console and the uPlot it vendors are served from inside the executable', async () => {
    const shell = await fetch(`${base}/console`)
    assert.is(shell.status, 200)
    assert.match(shell.headers.get('content-security-policy') ?? '', /^default-src 'self'; script-src 'self'; style-src 'self';/)
    assert.match(await shell.text(), /<script type="module" src="\/console\/assets\/app\.js">/)
    for (const [name, type] of [
      ['app.js', 'text/javascript'],
      ['uPlot.iife.min.js', 'text/javascript'],
      ['uPlot.min.css', 'text/css'],
    ]) {
      const asset = await fetch(`${base}/console/assets/${name}`)
      assert.is(asset.status, 200, name)
      assert.ok(asset.headers.get('content-type')?.startsWith(type), name)
      assert.ok((await asset.text()).length > 1000, name)
    }
  })

  binary('tenant, user and token are created by the CLI while serve runs', () => {
    ok(['tenant', 'create', 'acme', '--plan', 'EXECUTE', '--data-dir', dataDir])
    ok(['user', 'create', 'a@acme.test', '--tenant', 'acme', '--role', 'owner', '--password-stdin', '--data-dir', dataDir], 'correct-horse-battery-staple\n')
    const out = ok(['token', 'create', '--tenant', 'acme', '--name', 'bot', '--scopes', 'signals:read', '--data-dir', dataDir])
    const key = /sk_live_[A-Za-z0-9_-]+/.exec(out)
    assert.ok(key, `no sk_live_ key in: ${out}`)
    apiKey = key![0]
  })

  binary('the new key reads signals from the running server', async () => {
    const response = await fetch(`${base}/api/v1/signals`, { headers: { authorization: `Bearer ${apiKey}` } })
    assert.is(response.status, 200)
    assert.ok(Array.isArray(await response.json()))
  })

  binary('a backtest SUCCEEDS: its worker thread runs from the bundle carried inside', async () => {
    const lines = ['pair,date,open,high,low,close,volume']
    for (const [p, pair] of ['BTC/USDT', 'ETH/USDT', 'SOL/USDT', 'BNB/USDT', 'XRP/USDT'].entries()) {
      for (let i = 0; i < 400; i++) {
        const close = (100 + 20 * Math.sin((i + 17 * p) / 15) + 0.05 * i).toFixed(4)
        lines.push(`${pair},${new Date(Date.UTC(2024, 5, 1) + i * 86_400_000).toISOString().slice(0, 10)},${close},${close},${close},${close},1000`)
      }
    }
    const file = join(root, 'candles.csv')
    writeFileSync(file, `${lines.join('\n')}\n`)
    ok(['prices', 'import', file, '--data-dir', dataDir])
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
    const body = JSON.stringify({ model_id: 'trend-follower', from: '2025-03-01', to: '2025-07-05' })
    const posted = await fetch(`${base}/api/v1/backtests`, { method: 'POST', headers, body })
    assert.is(posted.status, 200, await posted.clone().text())
    const { id } = (await posted.json()) as { id: string }
    let backtest: { status: string; error: string | null; result_hash?: string; equity?: unknown[]; trades?: unknown[] } = { status: 'QUEUED', error: null }
    for (let i = 0; i < 300 && (backtest.status === 'QUEUED' || backtest.status === 'RUNNING'); i++) {
      await delay(100)
      backtest = (await (await fetch(`${base}/api/v1/backtests/${id}`, { headers })).json()) as typeof backtest
    }
    assert.is(backtest.status, 'SUCCEEDED', backtest.error ?? backtest.status)
    assert.match(backtest.result_hash!, /^[0-9a-f]{64}$/)
    assert.is(backtest.equity!.length, 127)
    assert.ok(backtest.trades!.length > 0)
  })

  binary('backup while serving gives a copy that holds the tenant', () => {
    const copy = join(root, 'copy.db')
    if (ENGINE === 'postgres') {
      // backup copies the embedded SQLite file; on PostgreSQL it refuses and names the tools that do.
      const refused = run(['backup', copy, '--data-dir', dataDir])
      assert.is(refused.status, 1, refused.stderr)
      assert.match(refused.stderr, /pg_dump/)
      assert.not.ok(existsSync(copy))
      return
    }
    ok(['backup', copy, '--data-dir', dataDir])
    const db = new Database(copy, { readonly: true })
    try {
      assert.is(db.pragma('quick_check', { simple: true }), 'ok')
      assert.ok(db.prepare('SELECT 1 FROM tenants WHERE slug = ?').get('acme'))
    } finally {
      db.close()
    }
  })

  binary('a second serve on the same data dir fails, naming the running pid', () => {
    const second = spawnSync(exe, ['serve', '--port', '0', '--data-dir', dataDir], { cwd: root, env, encoding: 'utf8', timeout: 10_000 })
    assert.is(second.signal, null, 'the second serve was still running after 10 s: it did not refuse to start')
    assert.is.not(second.status, 0)
    const said = second.stderr + second.stdout
    assert.match(said, /already running/)
    assert.match(said, String(server!.pid))
  })

  binary('SIGTERM stops serve with exit 0 within 10 s', async () => {
    const started = Date.now()
    server!.kill('SIGTERM')
    const code = await Promise.race([exitOf(server!), delay(10_000).then(() => 'timeout')])
    assert.is(code, 0, `exit after SIGTERM: ${code}`)
    assert.ok(Date.now() - started < 10_000)
  })

  binary('prices fetch reaches an exchange through the ccxt bundled inside (the test venue, in its own process)', async () => {
    const venue = await startVenueChild()
    try {
      const dir = join(root, 'market-data')
      const fetched = spawnSync(exe, ['prices', 'fetch', '--exchange', 'binance', '--venue-url', venue.url, '--ca-file', venue.caFile, '--data-dir', dir], {
        cwd: root,
        env: { ...env, ...(await databaseEnv(dir)) },
        encoding: 'utf8',
        timeout: 60_000,
      })
      assert.is(fetched.status, 0, fetched.stderr)
      const [, candles, pairs] = /^fetched (\d+) candles for (\d+) pairs from binance\n$/.exec(fetched.stdout) ?? []
      assert.is(Number(candles), 300 * Number(pairs), fetched.stdout)
      assert.ok(Number(pairs) >= 10)
      const db = await openTestDatabase(dir, { readonly: true })
      try {
        assert.is((await db.get<{ n: number }>('SELECT count(*) AS n FROM prices'))!.n, Number(candles))
      } finally {
        await db.close()
      }
    } finally {
      await venue.close()
    }
  })

  binary.run()
}

/** The base URL from serve's banner line, the first http://127.0.0.1:PORT it prints. */
function banner(server: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    const timer = setTimeout(() => reject(new Error(`no banner within 15 s; stdout: ${out} stderr: ${err}`)), 15_000)
    server.stderr!.on('data', (chunk: Buffer) => {
      err += chunk
    })
    server.stdout!.on('data', (chunk: Buffer) => {
      out += chunk
      const url = /http:\/\/127\.0\.0\.1:\d+/.exec(out)
      if (url) {
        clearTimeout(timer)
        resolve(url[0])
      }
    })
    server.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`serve exited with ${code}; stdout: ${out} stderr: ${err}`))
    })
  })
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)))
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
