// The instance lock and the nightly maintenance, from source (no executable needed).
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { mock } from 'node:test'
import { fileURLToPath } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { acquireInstanceLock } from '../src/store/instance-lock.ts'
import { nextMaintenanceAt, runMaintenance, startMaintenance } from '../src/store/maintenance.ts'
import { openStore } from '../src/store/open-store.ts'
import { query, type Store } from '../src/store/store.ts'
import { databaseUrlFor, ENGINE } from './support/harness.ts'

const lockModule = fileURLToPath(new URL('../src/store/instance-lock.ts', import.meta.url))

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'bulwark-ops-'))
}

/** The store of `dir` on this pass's engine: SQLite in it, or on PostgreSQL its own database. */
async function storeOf(dir: string): Promise<Store> {
  return openStore({ dataDir: dir, databaseUrl: await databaseUrlFor(dir) })
}

/** A separate process holding the lock on `dir` until killed; resolves once it holds it. */
function lockHolder(dir: string): Promise<ReturnType<typeof spawn>> {
  const code = `import { acquireInstanceLock } from ${JSON.stringify(lockModule)}
acquireInstanceLock(${JSON.stringify(dir)}); console.log('locked'); setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('locked')) resolve(child)
    })
    child.on('exit', (code) => reject(new Error(`lock holder exited with ${code}`)))
    setTimeout(() => reject(new Error('lock holder did not start')), 10_000).unref()
  })
}

function exited(child: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.on('exit', () => resolve())))
}

test('instance lock: a second holder in this process is refused, naming the pid', () => {
  const dir = tempDir()
  try {
    const release = acquireInstanceLock(dir)
    assert.is(readFileSync(join(dir, 'serve.pid'), 'utf8').trim(), String(process.pid))
    assert.throws(
      () => acquireInstanceLock(dir),
      (e: Error) => e.message.includes(`pid ${process.pid}`) && e.message.includes('already running'),
    )
    release()
    assert.not.ok(existsSync(join(dir, 'serve.pid')))
    acquireInstanceLock(dir)() // free again after release
    release() // releasing twice is harmless
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('instance lock: held by another process, taken over once that process is SIGKILLed', async () => {
  const dir = tempDir()
  const holder = await lockHolder(dir)
  try {
    assert.throws(
      () => acquireInstanceLock(dir),
      (e: Error) => e.message.includes(`pid ${holder.pid}`),
    )
    holder.kill('SIGKILL')
    await exited(holder)
    // Its pid file is left behind, stale: the lock must not care.
    assert.is(readFileSync(join(dir, 'serve.pid'), 'utf8').trim(), String(holder.pid))
    const release = acquireInstanceLock(dir)
    assert.is(readFileSync(join(dir, 'serve.pid'), 'utf8').trim(), String(process.pid))
    release()
  } finally {
    holder.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
})

test('maintenance: next run is the first 03:30 UTC strictly after now', () => {
  const at = (iso: string) => nextMaintenanceAt(new Date(iso)).toISOString()
  assert.is(at('2026-03-10T01:00:00Z'), '2026-03-10T03:30:00.000Z')
  assert.is(at('2026-03-10T03:30:00Z'), '2026-03-11T03:30:00.000Z')
  assert.is(at('2026-03-10T03:29:59.999Z'), '2026-03-10T03:30:00.000Z')
  assert.is(at('2026-03-10T23:59:00Z'), '2026-03-11T03:30:00.000Z')
  assert.is(at('2026-02-28T12:00:00Z'), '2026-03-01T03:30:00.000Z')
  assert.is(at('2026-12-31T04:00:00Z'), '2027-01-01T03:30:00.000Z')
})

/** Lets the round a timer started finish its awaits (setImmediate is not mocked). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
}

test('maintenance: runMaintenance folds and truncates the WAL, and the store writes on after it', async () => {
  const dir = tempDir()
  const store = await storeOf(dir)
  try {
    if (store.engine === 'postgres') {
      // No WAL of ours to fold: PostgreSQL's checkpointer and autovacuum do it, runMaintenance does nothing.
      await store.write((tx) => tx.run(query('CREATE TABLE t (x TEXT)')))
      assert.is(await runMaintenance(store), undefined)
      await store.write((tx) => tx.run(query('INSERT INTO t VALUES (?)'), ['after']))
      assert.is((await store.read.get(query<[], { n: number }>('SELECT count(*) AS n FROM t')))!.n, 1)
      return
    }
    await store.write(async (tx) => {
      await tx.run(query('PRAGMA wal_autocheckpoint = 0')) // let the WAL grow, as it does under a long reader
      await tx.run(query('CREATE TABLE t (x TEXT)'))
    })
    await store.write(async (tx) => {
      for (let i = 0; i < 500; i++) await tx.run(query('INSERT INTO t VALUES (?)'), ['x'.repeat(200)])
    })
    assert.ok(statSync(join(dir, 'bulwark.db-wal')).size > 0)

    const report = await runMaintenance(store)
    assert.is(report!.checkpoint.busy, 0)
    assert.is(statSync(join(dir, 'bulwark.db-wal')).size, 0)
    await store.write((tx) => tx.run(query('INSERT INTO t VALUES (?)'), ['after']))
    assert.is((await store.read.get(query<[], { n: number }>('SELECT count(*) AS n FROM t')))!.n, 501)
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('maintenance: the schedule fires at 03:30 UTC each night and stops when told', async () => {
  const dir = tempDir()
  const store = await storeOf(dir)
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.parse('2026-03-10T03:00:00Z') })
  const lines: Record<string, unknown>[] = []
  try {
    const stop = startMaintenance(store, (line) => lines.push(line))
    mock.timers.tick(29 * 60_000)
    await settle()
    assert.is(lines.length, 0)
    mock.timers.tick(60_000) // 03:30
    await settle()
    assert.is(lines.length, 1)
    assert.is(lines[0].msg, 'maintenance')
    mock.timers.tick(24 * 3600_000) // the next night
    await settle()
    assert.is(lines.length, 2)
    await stop()
    mock.timers.tick(48 * 3600_000)
    await settle()
    assert.is(lines.length, 2)
  } finally {
    mock.timers.reset()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('maintenance: a failing round is logged and the schedule goes on', async () => {
  // What fails here is the nightly checkpoint on a closed store: SQLite's only (on PostgreSQL the
  // round has no checkpoint, and runMaintenance does not touch the store).
  if (ENGINE === 'postgres') return
  const dir = tempDir()
  const store = await storeOf(dir)
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.parse('2026-03-10T03:29:00Z') })
  const lines: Record<string, unknown>[] = []
  try {
    const stop = startMaintenance(store, (line) => lines.push(line))
    await store.close() // every checkpoint now throws
    mock.timers.tick(60_000)
    await settle()
    mock.timers.tick(24 * 3600_000)
    await settle()
    assert.equal(
      lines.map((l) => l.level),
      ['error', 'error'],
    )
    await stop()
  } finally {
    mock.timers.reset()
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
