// The SQLite path after the Store conversion against the tree before it, in the same run (issue
// target: every figure within 10% of the old one). Two trees: this one ("new") and an older
// checkout ("old", e.g. a worktree of the commit before the conversion), each built (npm run build,
// dist/bulwark). For --rounds rounds, each figure is measured on old and on new back to back (old
// first in even rounds, new first in odd ones, so that drift in the machine's load hits both), by
// running the existing benches as child processes and reading the figure they print:
//   - GET /api/v1/signals req/s (signals.ts, mean of its two logging runs; --seconds 5 --warmup 2);
//   - POST /api/v1/orders median latency, limits on and off (breaker-orders.ts --rounds 10);
//   - the kill switch: CANCEL_AND_PAUSE over 10,000 pending orders, the answer and the settling
//     that follows it in the background (kill-switch.ts --reps 9 --calls 50);
// these three are the new tree's scripts for both, against old and new dist/bulwark through --bin;
//   - publish of 5 models over 250 pairs for 100 tenants (each tree's own publish.ts, which runs
//     that tree's sources in process; --sizes 100,250 --reps 5).
// Prints the median of each side over the rounds and new/old; rates are better higher, times lower:
// "slowdown" is new/old for times and old/new for rates, and the target is a slowdown <= 1.10.
// Setup: git worktree add --detach ../wt-old <commit> && ln -s $PWD/node_modules ../wt-old/node_modules
//        && (cd ../wt-old && npm run build) && npm run build
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/store-sqlite.ts --old-tree ../wt-old [--new-tree DIR] [--rounds 3] [--only signals,orders,kill-switch,publish]
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TARGET = 1.1

function flag(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
const OLD_TREE = resolve(flag('old-tree') ?? '')
const ROUNDS = Number(flag('rounds', '3'))
const ONLY = flag('only', 'signals,orders,kill-switch,publish')!.split(',')
// --new-tree: a checkout of its own instead of this one (whose dist/bulwark a build may replace mid-run).
const TREES = { old: OLD_TREE, new: resolve(flag('new-tree') ?? ROOT) }
type Side = keyof typeof TREES

interface Bench {
  name: string
  /** The script's tree: this one for the server benches, each side's own for publish. */
  tree: (side: Side) => string
  args: (side: Side) => string[]
  /** Figure name -> the number read from the script's stdout. */
  figures: Record<string, { unit: 'req/s' | 'ms'; read: (out: string) => number }>
}

const bin = (side: Side) => ['--bin', join(TREES[side], 'dist/bulwark')]
/** The first capture of `re` in `out`, as a number; throws when the output does not have it. */
function num(out: string, re: RegExp): number {
  const match = re.exec(out)
  if (!match) throw new Error(`no ${re} in:\n${out}`)
  return Number(match[1])
}

const BENCHES: Bench[] = [
  {
    name: 'signals',
    tree: () => TREES.new,
    args: (side) => ['test/bench/signals.ts', '--seconds', '5', '--warmup', '2', ...bin(side)],
    figures: {
      'GET /signals req/s': {
        unit: 'req/s',
        read: (out) => {
          const runs = [...out.matchAll(/^\| Bulwark, logging to a file #\d+ \| (\d+) \|/gm)].map((m) => Number(m[1]))
          if (runs.length === 0) throw new Error(`no Bulwark runs in:\n${out}`)
          return runs.reduce((a, b) => a + b, 0) / runs.length
        },
      },
    },
  },
  {
    name: 'orders',
    tree: () => TREES.new,
    args: (side) => ['test/bench/breaker-orders.ts', '--rounds', '10', ...bin(side)],
    figures: {
      'POST /orders median, limits on': { unit: 'ms', read: (out) => num(out, /all limits and breakers ON\s+median ([\d.]+) ms/) },
      'POST /orders median, limits off': { unit: 'ms', read: (out) => num(out, /all OFF \(defaults\)\s+median ([\d.]+) ms/) },
    },
  },
  {
    name: 'kill-switch',
    tree: () => TREES.new,
    args: (side) => ['test/bench/kill-switch.ts', '--reps', '9', '--calls', '50', ...bin(side)],
    figures: {
      'kill switch, 10,000 pending: answer': { unit: 'ms', read: (out) => num(out, /CANCEL_AND_PAUSE, 10000 pending\s+median ([\d.]+) ms/) },
      'kill switch, 10,000 pending: settled': { unit: 'ms', read: (out) => num(out, /settled into the rows and events within a median ([\d.]+) ms/) },
    },
  },
  {
    name: 'publish',
    tree: (side) => TREES[side],
    args: () => ['test/bench/publish.ts', '--sizes', '100,250', '--reps', '5'],
    figures: {
      'publish 250 pairs, 100 tenants': { unit: 'ms', read: (out) => num(out, /^\s*250 pairs \|.*\| 100 tenants\s+([\d.]+) ms/m) },
    },
  },
]

/** Runs the bench script in `cwd` through tsx; resolves with its stdout and stderr whatever its exit code (a missed target exits 1). */
function runScript(cwd: string, args: string[]): Promise<{ out: string; err: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('error', fail)
    child.on('close', () => done({ out, err }))
  })
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const fmt = (n: number, unit: string) => (unit === 'req/s' ? `${n.toFixed(0)} req/s` : `${n.toFixed(unit === 'ms' && n >= 100 ? 0 : 2)} ms`)

async function main(): Promise<void> {
  for (const side of ['old', 'new'] as const) {
    if (!existsSync(join(TREES[side], 'dist/bulwark'))) throw new Error(`no ${side} build at ${join(TREES[side], 'dist/bulwark')} (--old-tree; npm run build)`)
  }
  const loadBefore = loadavg()
  const samples = new Map<string, { unit: string; old: number[]; new: number[] }>()
  const started = performance.now()
  for (let round = 0; round < ROUNDS; round++) {
    for (const bench of BENCHES.filter((b) => ONLY.includes(b.name))) {
      for (const side of round % 2 ? (['new', 'old'] as const) : (['old', 'new'] as const)) {
        const t0 = performance.now()
        // A run that prints no figure (a failure under a busy machine's load) is run once more.
        let values: number[] | undefined
        for (let attempt = 1; !values; attempt++) {
          const { out, err } = await runScript(bench.tree(side), bench.args(side))
          try {
            values = Object.values(bench.figures).map((figure) => figure.read(out))
          } catch (error) {
            console.error(`round ${round + 1} ${bench.name} ${side}: no figure (attempt ${attempt}):\n${err.slice(-2000)}`)
            if (attempt === 2) throw error
          }
        }
        const read = Object.entries(bench.figures).map(([name, figure], i) => {
          const value = values[i]
          if (!samples.has(name)) samples.set(name, { unit: figure.unit, old: [], new: [] })
          samples.get(name)![side].push(value)
          return `${name} ${fmt(value, figure.unit)}`
        })
        const seconds = ((performance.now() - t0) / 1000).toFixed(0)
        console.error(`round ${round + 1}/${ROUNDS} ${bench.name} ${side} (${seconds} s): ${read.join('; ')}`)
      }
    }
  }
  const loadAfter = loadavg()
  console.log(
    `SQLite path, old tree ${OLD_TREE} against new ${TREES.new}, Node ${process.versions.node}, medians of ${ROUNDS} rounds (old and new alternating) in ${((performance.now() - started) / 60_000).toFixed(1)} min`,
  )
  console.log('')
  console.log('| figure | old median | new median | new/old | slowdown | target <= 1.10 | old runs | new runs |')
  console.log('|---|---|---|---|---|---|---|---|')
  let missed = 0
  for (const [name, s] of samples) {
    const ratio = median(s.new) / median(s.old)
    const slowdown = s.unit === 'req/s' ? 1 / ratio : ratio
    if (slowdown > TARGET) missed++
    const runs = (xs: number[]) => xs.map((x) => fmt(x, s.unit).split(' ')[0]).join(', ')
    console.log(
      `| ${name} | ${fmt(median(s.old), s.unit)} | ${fmt(median(s.new), s.unit)} | ${ratio.toFixed(3)} | ${slowdown.toFixed(3)} | ${slowdown <= TARGET ? 'met' : 'MISSED'} | ${runs(s.old)} | ${runs(s.new)} |`,
    )
  }
  console.log('')
  console.log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after: ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`)
  if (missed > 0) process.exitCode = 1
}

await main()
