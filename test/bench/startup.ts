// Startup cost of the one executable: time from exec to the first healthy response of
// `dist/bulwark serve`, against a bare Node hello-world HTTP server on the same pinned Node, both
// measured the same way in the same run (interleaved, median of several). Also the executable size,
// and what each step of a restart costs (serve's BULWARK_START_TRACE log line: ms since the process
// began at each step, medians over the runs).
// Run: npm run build && PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/startup.ts [--reps N] [--baseline OTHER_BULWARK]
// (--baseline: another build, an earlier commit's, timed the same way in turn with these).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runAsScript } from './script.ts'

const TARGET_RATIO = 1.5
const TARGET_MIB = 115 // [venue]: ccxt ships inside (SPEC 10); 110 before
const exe = fileURLToPath(new URL('../../dist/bulwark', import.meta.url))

// The same banner and health route as serve, with nothing else: the floor any Node server pays.
const HELLO = `const http = require('node:http')
const server = http.createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end('{"status":"HEALTHY"}') })
server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port))
process.on('SIGTERM', () => server.close(() => process.exit(0)))`

/** serve's start trace lines seen, one object of step -> ms per run. */
const traces: Record<string, number>[] = []

/** Milliseconds from spawn to the end of the first 200 from /api/v1/health. */
async function timeToHealthy(command: string, args: string[], cwd: string, trace = false): Promise<number> {
  const started = performance.now()
  const env = { PATH: '/usr/bin:/bin', HOME: cwd, ...(trace && { BULWARK_START_TRACE: '1' }) }
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk
  })
  try {
    const base = await new Promise<string>((done, fail) => {
      let out = ''
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk
        const url = /http:\/\/127\.0\.0\.1:\d+/.exec(out)
        if (url) done(url[0])
      })
      child.stderr!.resume()
      child.on('exit', (code) => fail(new Error(`${command} exited with ${code} before its banner: ${out}`)))
    })
    const response = await fetch(`${base}/api/v1/health`)
    if (response.status !== 200) throw new Error(`health answered ${response.status}`)
    await response.arrayBuffer()
    return performance.now() - started
  } finally {
    const exited = new Promise((done) => child.on('exit', done))
    child.kill('SIGTERM')
    await exited
    const line = output.split('\n').find((l) => l.includes('"start trace"'))
    if (trace && line) {
      const { level: _l, msg: _m, ts: _s, ...steps } = JSON.parse(line)
      traces.push(steps)
    }
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

async function main(): Promise<void> {
  const repsFlag = process.argv.indexOf('--reps')
  const reps = repsFlag === -1 ? 15 : Number(process.argv[repsFlag + 1])
  const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-'))
  const dataDir = join(work, 'data')
  const node = process.execPath
  const results = { node: [] as number[], restart: [] as number[], first: [] as number[], baseline: [] as number[] }
  const baselineFlag = process.argv.indexOf('--baseline')
  const baseline = baselineFlag === -1 ? undefined : process.argv[baselineFlag + 1]
  const baseDir = join(work, 'baseline-data')
  try {
    // Warm the page cache and the addon cache once, so the first sample is not an outlier.
    await timeToHealthy(exe, ['serve', '--port', '0', '--data-dir', dataDir], work)
    await timeToHealthy(node, ['-e', HELLO], work)
    for (let i = 0; i < reps; i++) {
      results.node.push(await timeToHealthy(node, ['-e', HELLO], work))
      results.restart.push(await timeToHealthy(exe, ['serve', '--port', '0', '--data-dir', dataDir], work))
      // The baseline on its own data dir (an older build may not open a newer schema), started once before.
      if (baseline && i === 0) await timeToHealthy(baseline, ['serve', '--port', '0', '--data-dir', baseDir], work)
      if (baseline) results.baseline.push(await timeToHealthy(baseline, ['serve', '--port', '0', '--data-dir', baseDir], work))
      await timeToHealthy(exe, ['serve', '--port', '0', '--data-dir', dataDir], work, true)
      const fresh = join(work, `fresh-${i}`)
      results.first.push(await timeToHealthy(exe, ['serve', '--port', '0', '--data-dir', fresh], work))
      rmSync(fresh, { recursive: true, force: true })
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }

  const nodeMs = median(results.node)
  const restartMs = median(results.restart)
  const firstMs = median(results.first)
  const ratio = restartMs / nodeMs
  const mib = statSync(exe).size / 1024 / 1024
  const verdict = (met: boolean) => (met ? 'target met' : 'TARGET MISSED')

  console.log(`startup, exec -> first healthy response, median of ${reps} (Node ${process.versions.node}):`)
  console.log(`  node hello-world          ${nodeMs.toFixed(1)} ms`)
  console.log(`  bulwark serve (restart)   ${restartMs.toFixed(1)} ms  ratio ${ratio.toFixed(2)}  (${verdict(ratio <= TARGET_RATIO)}: <= ${TARGET_RATIO})`)
  if (baseline) {
    const baseMs = median(results.baseline)
    console.log(
      `  baseline serve (restart)  ${baseMs.toFixed(1)} ms  ratio ${(baseMs / nodeMs).toFixed(2)}  (${baseline}); this build / baseline ${(restartMs / baseMs).toFixed(2)}`,
    )
  }
  console.log(`  bulwark serve (first run) ${firstMs.toFixed(1)} ms  ratio ${(firstMs / nodeMs).toFixed(2)}  (empty data dir: migrations, seed)`)
  const steps = Object.keys(traces[0] ?? {}).filter((k) => typeof traces[0][k] === 'number')
  console.log(`a restart's steps, ms since the process began (median of ${traces.length} traced runs):`)
  for (const step of steps) console.log(`  ${step.padEnd(20)} ${median(traces.map((t) => t[step])).toFixed(1)}`)
  console.log(`executable ${mib.toFixed(1)} MiB (${verdict(mib <= TARGET_MIB)}: <= ${TARGET_MIB} MiB)`)
  console.log(`| ${nodeMs.toFixed(0)} ms | ${restartMs.toFixed(0)} ms | ${ratio.toFixed(2)} | ${firstMs.toFixed(0)} ms | ${mib.toFixed(1)} MiB |`)
  if (ratio > TARGET_RATIO || mib > TARGET_MIB) process.exitCode = 1
}

runAsScript(import.meta.url, main)
