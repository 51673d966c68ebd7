// `npm run build`: src/cli/main.ts -> dist/bulwark, one Linux x64 executable that needs no Node.js and no
// node_modules. Offline by design (see /work/shared/notes/packaging.md):
//   1. esbuild bundles everything, better-sqlite3's JS included, into dist/bulwark.cjs, with the
//      sql/, src/signals/public/ and src/console/public/ files and uPlot's two (src/sea/embedded.mjs) inlined as BULWARK_EMBEDDED
//      (read by src/store/assets.ts);
//   2. ccxt goes into a bundle of its own, minified (dist/.build/ccxt.cjs): the main bundle leaves it
//      out, and src/venues/ccxt-loader.ts compiles it at the first use of an exchange;
//   2b. the backtest worker thread's code goes into a third bundle (dist/.build/backtest-worker.cjs),
//      which src/backtests/thread.ts starts with new Worker(code, { eval: true });
//   2c. the main bundle's code cache, taken after a run of it to serve's first answer
//      (src/sea/warm-code-cache.cjs), which src/sea/sea-main.cjs, the executable's entry point, compiles it with;
//   3. @yao-pkg/pkg's SEA builder injects that entry point, the main bundle and its code cache,
//      better-sqlite3's prebuilt addon (the SEA asset loaded by src/store/native.ts), ccxt's bundle
//      and the worker's into a stripped copy of the pinned Node 24 runtime.
// Usage: node build.mjs [--entry FILE]   (--entry only for smoke-testing the packing itself)
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { delimiter, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'
import { embeddedLiteral } from './src/sea/embedded.mjs'
import { withoutPgNative } from './src/sea/without-pg-native.mjs'

const started = performance.now()
const root = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const MAX_BYTES = 115 * 1024 * 1024
const ADDON_ASSET = 'better_sqlite3.node' // the name src/store/native.ts asks node:sea for
const CCXT_ASSET = 'ccxt.cjs' // the name src/venues/ccxt-loader.ts asks node:sea for
const BACKTEST_WORKER_ASSET = 'backtest-worker.cjs' // the name src/backtests/thread.ts asks node:sea for
const MAIN_ASSET = 'bulwark.js' // the names src/sea/sea-main.cjs asks node:sea for
const MAIN_CACHE_ASSET = 'bulwark.cache'
// A small young generation keeps RSS low under a request flood (measured: 126 MB instead of 171 MB
// at 50 connections) at no cost in throughput: responses are short-lived. The code cache is made
// under the same flags, which it must match.
const EXEC_ARGV = ['--max-semi-space-size=4']

const entryFlag = process.argv.indexOf('--entry')
// src/cli/main.ts, not src/main.ts: the executable carries its own Node 24, so the version check
// has nothing to do there, and its dynamic import would make esbuild wrap every module in a lazy
// initialiser (a few milliseconds of every start).
const entry = resolve(root, entryFlag === -1 ? 'src/cli/main.ts' : process.argv[entryFlag + 1])
const dist = join(root, 'dist')
const bundle = join(dist, 'bulwark.cjs')
const output = join(dist, 'bulwark')
const work = join(dist, '.build')

// The SEA blob is produced by whichever `node` pkg finds on PATH and must match the runtime it is
// injected into; both are this very process's Node, so it must be the pinned one.
if (Number(process.versions.node.split('.')[0]) !== 24) {
  fail(`run the build with the pinned Node 24 (npm run build), not Node ${process.versions.node}`)
}
if (process.platform !== 'linux' || process.arch !== 'x64') fail('the executable is built on and for Linux x64')
if (!existsSync(entry)) fail(`entry ${relative(root, entry)} does not exist`)

const addon = join(dirname(require.resolve('better-sqlite3/package.json')), 'prebuilds', 'linux-x64.node')
if (!existsSync(addon)) fail(`better-sqlite3 prebuild missing: ${addon}`)

rmSync(output, { force: true })
rmSync(work, { recursive: true, force: true })
mkdirSync(work, { recursive: true })

let embedded
try {
  embedded = embeddedLiteral(root)
} catch (error) {
  fail(error.message)
}

await step('bundle', () =>
  esbuild.build({
    entryPoints: [entry],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    // Not minified: the bundle is under 1% of the executable, and readable stack traces are worth more.
    // No keepNames: its thousands of __name calls cost every start ~1.5 ms, and without them a
    // function or class keeps its own name all the same, but for the few esbuild renames to tell
    // two of one name apart (log2 beside log).
    keepNames: false,
    legalComments: 'eof', // the bundled packages' licence notices travel inside the executable
    logLevel: 'warning',
    define: {
      BULWARK_ADDON_SHA256: JSON.stringify(createHash('sha256').update(readFileSync(addon)).digest('hex')),
      // CJS output leaves import.meta empty, and node-cron's ESM build resolves a path from it at load.
      'import.meta.url': '__import_meta_url',
      'import.meta.filename': '__filename',
      'import.meta.dirname': '__dirname',
    },
    // BULWARK_EMBEDDED at the script's top level, not as a define: esbuild puts a define's object
    // in a lazy initialiser, a function V8 compiles at its first call because SEA's code cache holds
    // only what the script compiles up front, and scanning 150 kB of text cost every start ~1 ms.
    banner: {
      js: `"use strict";const __import_meta_url = require("node:url").pathToFileURL(__filename).href;\nvar BULWARK_EMBEDDED = ${embedded};`,
    },
    // better-sqlite3 falls back to require(<computed path>) only when no nativeBinding is given.
    logOverride: { 'unsupported-require-call': 'silent' },
    // Shipped as its own asset (below): most starts never reach an exchange.
    external: ['ccxt'],
    plugins: [withoutPgNative],
  }),
)

// ccxt, minified, for src/venues/ccxt-loader.ts to compile at the first use of an exchange. Its
// optional peer protobufjs is installed so that ccxt's static imports of it resolve.
const ccxtBundle = join(work, CCXT_ASSET)
await step('bundle ccxt', () =>
  esbuild.build({
    entryPoints: [require.resolve('ccxt').replace(/dist[\\/]ccxt\.cjs$/, join('js', 'ccxt.js'))],
    outfile: ccxtBundle,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    minify: true,
    legalComments: 'eof',
    logLevel: 'error',
    define: { 'import.meta.url': '__import_meta_url' },
    banner: { js: 'const __import_meta_url = "file:///bulwark/ccxt.cjs";' },
  }),
)

// The backtest worker thread's code (strategies, portfolio, metrics, and better-sqlite3's JS for its
// own read-only connection), which src/backtests/thread.ts evaluates as a script: a Worker inside
// the executable has no file to load. The addon is not in it: the worker dlopens the file the main
// thread extracted (src/store/native.ts).
const workerBundle = join(work, BACKTEST_WORKER_ASSET)
await step('bundle worker', () =>
  esbuild.build({
    entryPoints: [join(root, 'src/backtests/worker.ts')],
    outfile: workerBundle,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    keepNames: true,
    legalComments: 'eof',
    logLevel: 'warning',
    // As in the main bundle: better-sqlite3 requires a computed path only when given no nativeBinding.
    logOverride: { 'unsupported-require-call': 'silent' },
  }),
)

// The bundle as src/sea/sea-main.cjs compiles it, and its code cache from a run to the first answer.
const mainScript = join(work, MAIN_ASSET)
const mainCache = join(work, MAIN_CACHE_ASSET)
step('code cache', () => {
  const warm = join(root, 'src', 'sea', 'warm-code-cache.cjs')
  try {
    execFileSync(process.execPath, [...EXEC_ARGV, warm, bundle, mainScript, mainCache, addon], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 60_000 })
  } catch (error) {
    fail(`the code cache run (serve to its first answer) failed: ${error.message}`)
  }
})

const node = join(work, 'node')
// Debug symbols are a fifth of Node's file and no use to operators; they would break the size budget.
step('strip runtime', () => {
  try {
    execFileSync('strip', ['--strip-all', '-o', node, process.execPath], { stdio: ['ignore', 'inherit', 'inherit'] })
  } catch (error) {
    fail(`strip (GNU binutils) failed on ${process.execPath}: ${error.message}`)
  }
})

await step('pack', async () => {
  // pkg runs `node --experimental-sea-config` and `npx postject` with a temp folder as cwd, where npx
  // cannot see this project's postject and would fetch one from the registry. Shadow both on PATH:
  // this very Node, and an npx that only runs the local postject.
  const bin = join(work, 'bin')
  mkdirSync(bin)
  const postject = join(dirname(require.resolve('postject/package.json')), 'dist', 'cli.js')
  writeFileSync(
    join(bin, 'npx'),
    [
      '#!/bin/sh',
      '[ "$1" = postject ] || { echo "build.mjs: npx $1 is not available offline" >&2; exit 1; }',
      'shift',
      `exec "${process.execPath}" "${postject}" "$@"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  )
  process.env.PATH = [bin, dirname(process.execPath), process.env.PATH].join(delimiter)
  const sea = require('@yao-pkg/pkg/lib-es5/sea.js').default
  await sea(join(root, 'src', 'sea', 'sea-main.cjs'), {
    targets: [{ nodeRange: 'node24', platform: 'linux', arch: 'x64', output }],
    nodePath: node,
    seaConfig: {
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      useSnapshot: false,
      execArgv: EXEC_ARGV,
      assets: {
        [MAIN_ASSET]: mainScript,
        [MAIN_CACHE_ASSET]: mainCache,
        [ADDON_ASSET]: addon,
        [CCXT_ASSET]: ccxtBundle,
        [BACKTEST_WORKER_ASSET]: workerBundle,
      },
    },
  })
})

// pkg reports failures of the injection step only as a missing or unchanged file, so check here.
if (!existsSync(output) || statSync(output).size <= statSync(node).size) discard('pkg did not produce dist/bulwark')
chmodSync(output, 0o755)
rmSync(work, { recursive: true, force: true })

// From an empty folder with nothing on PATH: no node, no node_modules within reach.
const empty = mkdtempSync(join(tmpdir(), 'bulwark-smoke-'))
const version = step('smoke test', () => {
  try {
    // BULWARK_CODE_CACHE_CHECK: src/sea/sea-main.cjs fails if the executable's Node rejects the code cache.
    const env = { PATH: empty, HOME: empty, BULWARK_CODE_CACHE_CHECK: '1' }
    return execFileSync(output, ['--version'], { cwd: empty, env, encoding: 'utf8', timeout: 10_000 }).trim()
  } catch (error) {
    rmSync(empty, { recursive: true, force: true })
    return discard(`dist/bulwark --version failed in an empty folder: ${error.stderr || error.message}`)
  }
})
rmSync(empty, { recursive: true, force: true })

const bytes = statSync(output).size
const seconds = (performance.now() - started) / 1000
console.log(`dist/bulwark ${version}: ${(bytes / 1024 / 1024).toFixed(1)} MiB, built in ${seconds.toFixed(1)} s`)
if (bytes > MAX_BYTES) discard(`executable is ${bytes} bytes, over the ${MAX_BYTES} byte budget`)

function step(name, fn) {
  const t = performance.now()
  const done = (value) => {
    console.log(`  ${name.padEnd(14)} ${((performance.now() - t) / 1000).toFixed(1)} s`)
    return value
  }
  const value = fn()
  return value instanceof Promise ? value.then(done) : done(value)
}

function fail(message) {
  console.error(`build failed: ${message}`)
  process.exit(1)
}

/** Fails after packing, leaving no dist/bulwark behind that a later step could mistake for a good one. */
function discard(message) {
  rmSync(output, { force: true })
  fail(message)
}
