// Running from source on the machine's own Node (not the pinned 24) stops at once with one line that
// names Node 24 and the npm scripts, exit 1, before anything loads the SQLite addon (which would
// take that Node down with a segmentation fault and no message). A real foreign Node is required:
// the machine's `node` outside node_modules (CI has the one npm runs on).
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn, spawnSync } from 'node:child_process'
import { accessSync, constants, existsSync, readdirSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { ROOT, tempDir } from '../support/harness.ts'

const test = suite('cli: the Node version check')

interface Run {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** The first `node` on PATH (then in the usual system folders) that is not under node_modules and not 24. */
function foreignNode(): { path: string; version: string } {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/bin', '/usr/bin', '/bin'].filter(
    (dir) => dir && !dir.split(/[\\/]/).includes('node_modules'),
  )
  const seen: string[] = []
  for (const dir of dirs) {
    const path = join(dir, 'node')
    if (!existsSync(path) || !executable(path)) continue
    const version = spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout?.trim() ?? ''
    seen.push(`${path} (${version || 'no answer'})`)
    if (/^\d+\./.test(version) && !version.startsWith('24.')) return { path, version }
  }
  throw new Error(
    `node-version.test.ts needs a Node other than 24 outside node_modules (the machine's own, as a plain shell finds it); found ${seen.join(', ') || 'none'} in ${dirs.join(delimiter)}`,
  )
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

function assertRefused(res: Run, version: string, what: string): void {
  assert.is(res.signal, null, `${what} died of ${res.signal}: ${res.stderr}`)
  assert.is(res.code, 1, `${what}: exit ${res.code}: ${res.stderr}`)
  assert.is(res.stdout, '', what)
  const lines = res.stderr.split('\n')
  assert.equal(lines.slice(1), [''], `${what}: exactly one line on stderr: ${JSON.stringify(res.stderr)}`)
  assert.match(lines[0], /Node\.js 24/)
  assert.ok(lines[0].includes(`this is ${version}`), lines[0])
  assert.match(lines[0], /npm run serve -- ARGS/)
}

// A plain shell: the foreign Node's folder and the system's, nothing from node_modules.
function plainEnv(node: string): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _o, npm_node_execpath: _n, npm_execpath: _e, ...rest } = process.env
  return { ...rest, PATH: [dirname(node), '/usr/local/bin', '/usr/bin', '/bin'].join(delimiter) }
}

test('node --import tsx src/main.ts --version on a foreign Node: one line, exit 1, no crash', async () => {
  const node = foreignNode()
  const res = await run(node.path, ['--import', 'tsx', 'src/main.ts', '--version'], plainEnv(node.path))
  assertRefused(res, node.version, `${node.path} --import tsx src/main.ts --version`)
})

test("tsx's own bin with serve from a plain shell: refused before the database is touched", async () => {
  const node = foreignNode()
  const dataDir = tempDir('node-version')
  const tsx = join(ROOT, 'node_modules', '.bin', 'tsx') // #!/usr/bin/env node: finds the foreign Node
  const res = await run(tsx, ['src/main.ts', 'serve', '--port', '0', '--data-dir', dataDir], plainEnv(node.path))
  assertRefused(res, node.version, 'tsx src/main.ts serve')
  assert.equal(readdirSync(dataDir), [], 'nothing was written to the data dir')
})

test('the pinned Node 24 runs it', async () => {
  const res = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', '--version'], process.env)
  assert.is(res.code, 0, res.stderr)
  assert.match(res.stdout, /^\d+\.\d+\.\d+\n$/)
})

test.run()
