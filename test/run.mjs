// The README's test command: every test file under test/ in its own uvu process (TypeScript
// through tsx), as many at a time as the machine has cores, longest first; each file's output is
// printed whole when it ends, then one line "N passed, N failed" that CI reads. Exit code is
// non-zero when anything failed. Every test starts its servers on port 0 in a temporary data dir,
// so files never share a port, a database or a venue.
//
// The servers and CLI commands the tests start are the real executable, dist/bulwark (the
// harness's BULWARK_BIN), built first when any source is newer than it: it starts in a fifth of the
// time the same program takes from source under tsx, which halves the suite, and it is what ships.
// The few tests that need a preload (a shifted clock) run their server from source themselves.
//
// Every file runs twice: on the embedded SQLite, then on PostgreSQL (SPEC 15), where each data dir
// gets a fresh database of one throwaway server (test/support/suite-postgres.ts, Debian's
// postgresql-15). A file that tests what only SQLite has says so on a line of its own:
// `// engines: sqlite`; one that starts the PostgreSQL it needs itself (a cluster, a copy) says
// `// engines: own`: both run once. Without PostgreSQL's binaries the second pass is skipped.
//
//   node test/run.mjs                   every *.test.ts, on both engines
//   node test/run.mjs 'venue/live'      the files whose path (under test/) matches the pattern
//   TEST_ENGINES=sqlite node test/run.mjs   one engine (sqlite or postgres)
//   TEST_JOBS=1 node test/run.mjs       one file at a time
//   BULWARK_BIN= node test/run.mjs      servers and commands from source (no build)
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const testDir = join(root, 'test')
const pattern = new RegExp(process.argv[2] ?? '\\.test\\.ts$')
const jobs = Math.max(1, Number(process.env.TEST_JOBS) || availableParallelism())
// A file still running after this is stopped and counted as failed: a hang never holds CI.
const fileTimeoutMs = Number(process.env.TEST_FILE_TIMEOUT_MS) || 600_000
// How long each file took last time, so the longest start first (a file not seen yet: by size).
const timesFile = join(root, 'node_modules', '.cache', 'bulwark-test-times.json')

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path)
    return entry.name.endsWith('.test.ts') ? [relative(testDir, path)] : []
  })
}

function readTimes() {
  try {
    return JSON.parse(readFileSync(timesFile, 'utf8'))
  } catch {
    return {}
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI colour codes (ESC [ ... m)
const plain = (text) => text.replace(/\x1b\[[0-9;]*m/g, '')

/** Runs one file on one engine; resolves with its counts and output. */
function runFile(file, engine) {
  const started = Date.now()
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const child = spawn(process.execPath, ['--import', 'tsx', 'node_modules/uvu/bin.js', 'test', `^${escaped}$`, '--no-color'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0', ...(engine.url ? { BULWARK_TEST_POSTGRES: engine.url } : {}) },
    detached: true,
  })
  let out = ''
  const timer = setTimeout(() => {
    out += `\n${file}: still running after ${fileTimeoutMs / 1000} s: stopped\n`
    // The file's own group: its servers, venues and browsers go with it.
    process.kill(-child.pid, 'SIGKILL')
  }, fileTimeoutMs)
  child.stdout.on('data', (chunk) => {
    out += chunk
  })
  child.stderr.on('data', (chunk) => {
    out += chunk
  })
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer)
      const text = plain(out)
      const total = Number(/Total:\s+(\d+)/.exec(text)?.[1] ?? 0)
      const passed = Number(/Passed:\s+(\d+)/.exec(text)?.[1] ?? 0)
      const skipped = Number(/Skipped:\s+(\d+)/.exec(text)?.[1] ?? 0)
      let failed = total - passed - skipped
      if (code !== 0 && failed === 0) failed = 1 // a crash before the summary still fails the run
      // The per-file summary is replaced by the run's own; the rest is the file's report.
      const report = text.replace(/\n\s*Total:[\s\S]*$/, '').trimEnd()
      resolve({ file, engine: engine.name, passed, failed, skipped, ms: Date.now() - started, report })
    })
  })
}

/** The newest modification time of a file under `path` (a file or a folder). */
function newest(path) {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))))
}

/** dist/bulwark, built now when a source it is made from is newer; undefined when the tests run from source. */
function executable() {
  if (process.env.BULWARK_BIN !== undefined) return process.env.BULWARK_BIN || undefined
  const bin = join(root, 'dist', 'bulwark')
  const sources = ['src', 'sql', 'build.mjs', 'package-lock.json'].map((p) => newest(join(root, p)))
  if (!existsSync(bin) || statSync(bin).mtimeMs < Math.max(...sources)) {
    console.log('dist/bulwark is older than the sources: building it (npm run build) ...')
    const built = spawnSync(process.execPath, ['build.mjs'], { cwd: root, stdio: 'inherit' })
    if (built.status !== 0) {
      console.log('0 passed, 1 failed')
      process.exit(1)
    }
  }
  return bin
}

async function main() {
  const bin = executable()
  if (bin) process.env.BULWARK_BIN = bin
  else delete process.env.BULWARK_BIN
  const times = readTimes()
  const files = testFiles(testDir).filter((file) => pattern.test(file))
  const engines = await startEngines()
  // Each (engine, file) is one run; the longest start first, both engines in one queue.
  const key = (run) => `${run.engine.name} ${run.file}`
  const weight = (run) => times[key(run)] ?? times[run.file] ?? statSync(join(testDir, run.file)).size
  const runs = engines
    .flatMap((engine) => files.filter((file) => engine.name === 'sqlite' || !sqliteOnly(file)).map((file) => ({ file, engine })))
    .sort((a, b) => weight(b) - weight(a))
  const started = Date.now()
  const results = []
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(jobs, runs.length) }, async () => {
      while (next < runs.length) {
        const run = runs[next++]
        const result = await runFile(run.file, run.engine)
        results.push(result)
        process.stdout.write(`${result.report}\n  (${result.file} on ${result.engine}: ${(result.ms / 1000).toFixed(1)} s)\n\n`)
      }
    }),
  )
  for (const engine of engines) engine.stop?.()
  for (const r of results) times[`${r.engine} ${r.file}`] = r.ms
  try {
    mkdirSync(dirname(timesFile), { recursive: true })
    writeFileSync(timesFile, `${JSON.stringify(times, null, 1)}\n`)
  } catch {
    // The order is only a speed-up: a read-only tree runs in size order next time.
  }
  const sum = (key) => results.reduce((n, r) => n + r[key], 0)
  const failedRuns = results.filter((r) => r.failed > 0).map((r) => `${r.file} (${r.engine})`)
  const seconds = ((Date.now() - started) / 1000).toFixed(0)
  const against = bin ? relative(root, bin) : 'source'
  const names = engines.map((e) => e.name).join(' and ')
  console.log(
    `${files.length} files on ${names}, ${runs.length} runs in ${seconds} s on ${jobs} workers against ${against}${failedRuns.length ? `; failed: ${failedRuns.join(', ')}` : ''}`,
  )
  console.log(`${sum('passed')} passed, ${sum('failed')} failed${sum('skipped') ? `, ${sum('skipped')} skipped` : ''}`)
  process.exit(sum('failed') === 0 && runs.length > 0 ? 0 : 1)
}

/** A file that tests what only SQLite has (its lock, its file, its backup), or brings its own PostgreSQL, says so on a line of its own. */
function sqliteOnly(file) {
  return /^\/\/ engines: (sqlite|own)$/m.test(readFileSync(join(testDir, file), 'utf8'))
}

/** The engines of this run: SQLite always, PostgreSQL when its binaries are installed (its server started here). */
async function startEngines() {
  const wanted = (process.env.TEST_ENGINES ?? 'sqlite,postgres').split(',')
  const engines = wanted.includes('sqlite') ? [{ name: 'sqlite' }] : []
  if (!wanted.includes('postgres')) return engines
  const initdb = join(process.env.BULWARK_PG_BIN || '/usr/lib/postgresql/15/bin', 'initdb')
  if (!existsSync(initdb)) {
    console.log(`no ${initdb}: the PostgreSQL pass is skipped (install postgresql-15, as .ci/run does)`)
    return engines
  }
  const child = spawn(process.execPath, ['--import', 'tsx', join(testDir, 'support', 'suite-postgres.ts')], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] })
  const url = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      const line = /^(postgres:\/\/\S+)\n/m.exec(out)
      if (line) resolve(line[1])
    })
    child.on('exit', (code) => reject(new Error(`the suite's PostgreSQL did not start (exit ${code})`)))
  })
  child.removeAllListeners('exit')
  engines.push({ name: 'postgres', url, stop: () => child.stdin.end() })
  return engines
}

main()
