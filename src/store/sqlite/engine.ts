// The Store on SQLite: the data dir's bulwark.db through better-sqlite3, as src/store/db.ts opens it
// (WAL, foreign keys, the same sql/NNN_*.sql migrations), with two connections. The writer runs one
// write at a time, from this engine's own queue (urgent writes first): BEGIN IMMEDIATE, then the
// work, which may await, then COMMIT. The reader answers Store.read: in WAL mode it sees only what
// has committed, so a write whose work still awaits is invisible to it. Each query text is prepared
// once per connection (./queries.ts).
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { migrate, openConnection } from '../db.ts'
import { openDataVersion } from './data-version.ts'
import { queriesOn, statements } from './queries.ts'
import { log } from '../../shared/log.ts'
import {
  commitHooks,
  nestedWrite,
  writeScope,
  type CheckpointReport,
  type DatabaseHealth,
  type Lease,
  type Store,
  type Tx,
  type WriteOptions,
  savepoints,
  transactionOver,
} from '../store.ts'
import { BUSY_DEADLINE_MS, DatabaseBusyError, isBusy, RETRY_EVERY_MS } from './busy.ts'

export interface SqliteStoreOptions {
  dataDir: string
  /** Apply sql/NNN_*.sql at open (default true). */
  migrate?: boolean
}

const reportHook = (error: unknown) =>
  log({ level: 'error', msg: 'after-commit wake-up failed', error: error instanceof Error ? error.message : String(error) })

interface Waiter {
  urgent: boolean
  since: number
  /** Runs the write in the transaction just begun; settles its caller's promise. */
  run: () => Promise<void>
  reject: (error: unknown) => void
}

export function openSqliteStore(options: SqliteStoreOptions): Store {
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 })
  const file = join(options.dataDir, 'bulwark.db')
  const writer = openConnection(file)
  if (options.migrate !== false) migrate(writer)
  // While this engine waits for the lock it does so asynchronously (turn), never inside SQLite.
  writer.pragma('busy_timeout = 0')
  const reader = openConnection(file, { readonly: true })
  const changes = openDataVersion(options.dataDir, writer)
  const writeStatement = statements(writer)
  let closed = false
  const line: Waiter[] = []
  let running: Promise<void> | undefined

  function pump(): void {
    if (running || line.length === 0) return
    running = turn().finally(() => {
      running = undefined
      pump()
    })
  }

  /** Since when a write (or a probe) has found the lock taken by another process, none getting it since. */
  let blockedSince: number | undefined

  /** Refuses the writes that have waited BUSY_DEADLINE_MS for the lock: nothing of them was written. */
  function refuseLate(now: number): void {
    for (let i = line.length - 1; i >= 0; i--) {
      const waited = now - line[i].since
      if (waited >= BUSY_DEADLINE_MS) line.splice(i, 1)[0].reject(new DatabaseBusyError(waited))
    }
  }

  /**
   * Takes the write lock (BEGIN IMMEDIATE), retried asynchronously while another process holds it,
   * then runs the write at the head of the line at that moment: an urgent write that arrived while
   * the lock was taken goes first.
   */
  async function turn(): Promise<void> {
    for (;;) {
      refuseLate(Date.now())
      if (line.length === 0) return
      try {
        writer.exec('BEGIN IMMEDIATE')
        blockedSince = undefined
        break
      } catch (error) {
        if (!isBusy(error)) {
          line.shift()!.reject(error)
          return
        }
        blockedSince ??= Date.now()
        await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS))
      }
    }
    await line.shift()!.run()
  }

  /** Takes and releases the write lock without waiting for it (a write of ours in progress holds it: ok). */
  function probe(): DatabaseHealth['state'] {
    if (writer.inTransaction) return 'ok'
    const previous = writer.pragma('busy_timeout', { simple: true }) as number
    try {
      writer.pragma('busy_timeout = 0')
      writer.exec('BEGIN IMMEDIATE')
      writer.exec('ROLLBACK')
      blockedSince = undefined
      return 'ok'
    } catch (error) {
      if (!isBusy(error)) return 'read_only'
      blockedSince ??= Date.now()
      return 'busy'
    } finally {
      writer.pragma(`busy_timeout = ${previous}`)
    }
  }

  /** The work of one write, in the transaction turn() has begun: COMMIT, or ROLLBACK when it throws. */
  async function transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    let live = true
    const mark = { running: true }
    const queries = queriesOn(writeStatement, () => live)
    const hooks = commitHooks(reportHook)
    const tx: Tx = {
      ...queries,
      savepoint: savepoints(async (sql) => {
        if (!live) throw transactionOver()
        writer.exec(sql)
      }),
      afterCommit: (wake) => {
        if (!live) throw transactionOver()
        hooks.add(wake)
      },
    }
    try {
      const result = await writeScope.run(mark, () => work(tx))
      writer.exec('COMMIT')
      live = false
      mark.running = false
      hooks.run()
      return result
    } catch (error) {
      if (writer.inTransaction) writer.exec('ROLLBACK')
      throw error
    } finally {
      live = false
      mark.running = false
    }
  }

  const leases = new Set<{ released: boolean }>()

  return {
    engine: 'sqlite',
    read: queriesOn(statements(reader), () => !closed),
    write<T>(work: (tx: Tx) => Promise<T>, writeOptions: WriteOptions = {}): Promise<T> {
      if (closed) return Promise.reject(new Error('the store is closed'))
      // Writes run one at a time: one that waited for another from inside it would wait forever.
      if (writeScope.nested()) return Promise.reject(nestedWrite())
      const urgent = writeOptions.urgent === true
      return new Promise<T>((resolve, reject) => {
        const waiter: Waiter = { urgent, since: Date.now(), run: () => transaction(work).then(resolve, reject), reject }
        // Urgent writes go ahead of every write that is not, behind the urgent ones already waiting.
        const at = urgent ? line.findIndex((w) => !w.urgent) : -1
        if (at === -1) line.push(waiter)
        else line.splice(at, 0, waiter)
        pump()
      })
    },
    // One process owns the data dir (serve's instance lock, src/store/instance-lock.ts), so every
    // background service of this process may run: the lease is always granted.
    async lease(name: string): Promise<Lease> {
      const state = { released: false }
      leases.add(state)
      return {
        name,
        held: () => !state.released && !closed,
        release: async () => {
          state.released = true
          leases.delete(state)
        },
      }
    },
    version: () => changes.read(),
    async checkpoint(busyMs: number): Promise<CheckpointReport> {
      // Between writes: a transaction open on the writer would keep the WAL from being truncated.
      while (running) await running
      if (closed) throw new Error('the store is closed')
      // The statistics first, so that the checkpoint folds what ANALYZE wrote too and leaves no WAL.
      writer.pragma('optimize')
      const previous = writer.pragma('busy_timeout', { simple: true }) as number
      let report: CheckpointReport
      try {
        writer.pragma(`busy_timeout = ${busyMs}`)
        report = (writer.pragma('wal_checkpoint(TRUNCATE)') as CheckpointReport[])[0]
      } finally {
        writer.pragma(`busy_timeout = ${previous}`)
      }
      return report
    },
    async health(): Promise<DatabaseHealth> {
      const state = probe()
      // Busy is degraded only once writes have waited as long as a write may wait for the lock.
      const degraded = state === 'read_only' || (state === 'busy' && blockedSince !== undefined && Date.now() - blockedSince >= BUSY_DEADLINE_MS)
      return { state, degraded }
    },
    async close() {
      if (closed) return
      closed = true
      while (running) await running
      for (const lease of leases) lease.released = true
      changes.close()
      reader.close()
      writer.close()
    },
  }
}
