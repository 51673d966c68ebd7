// The Store: one interface over two engines, SQLite (src/store/sqlite/engine.ts) and PostgreSQL
// (src/store/postgres/engine.ts), chosen by src/store/open-store.ts (SPEC 15). This file knows no
// engine: domain code imports the interface and query() from here, and the engine it runs on is
// handed to it.
//
// A query is written once per module, with SQLite-style parameters, named (`@name`, bound from an
// object) or positional (`?`, bound from an array): each engine turns it into its own form once
// (SQLite prepares it once per connection; PostgreSQL rewrites them to $1.. once per text). Where
// the dialects differ, give both texts.
//
// @example
// const byId = query<{ id: string }, { id: string; slug: string }>('SELECT id, slug FROM tenants WHERE id = @id')
// const tenant = await store.read.get(byId, { id })
// const keyOf = query<[string], { id: string }>('SELECT id FROM api_keys WHERE key_hash = ?')
// const key = await db.get(keyOf, [hash])
// await store.write(async (tx) => { await tx.run(rename, { id, slug }) })

import { AsyncLocalStorage } from 'node:async_hooks'

export type Engine = 'sqlite' | 'postgres'

/** A query's parameters: by name without the '@', or in the order of its `?`s. */
export type Params = Record<string, unknown> | unknown[]

/** A query's text in each dialect; P and R type its parameters and rows. Made by query(). */
export interface Query<P extends Params | object = Params, R = unknown> {
  readonly sqlite: string
  readonly postgres: string
  /** Types only: never set. */
  readonly types?: { params: P; row: R }
}

/** A query for both engines: one text, or one per dialect where they differ. */
export function query<P extends Params | object = Params, R = unknown>(text: string | { sqlite: string; postgres: string }): Query<P, R> {
  return Object.freeze(typeof text === 'string' ? { sqlite: text, postgres: text } : { sqlite: text.sqlite, postgres: text.postgres })
}

/** What a query changed: the rows an INSERT, UPDATE or DELETE touched. */
export interface RunResult {
  changes: number
}

/**
 * Statements on one view of the database. Rows come back as the engine gives them: integers as
 * numbers on both (PostgreSQL's bigint is read as a number), other types as each driver reads them.
 */
export interface Queries {
  /** The engine these queries run on: for the rare text that differs beyond query()'s two dialects. */
  readonly engine: Engine
  /** The first row, or undefined when there is none. */
  get<P extends object, R>(q: Query<P, R>, params?: P): Promise<R | undefined>
  all<P extends object, R>(q: Query<P, R>, params?: P): Promise<R[]>
  run<P extends object>(q: Query<P, unknown>, params?: P): Promise<RunResult>
}

/** The queries of one write transaction. Valid only while its write() runs: afterwards every call throws. */
export interface Tx extends Queries {
  /**
   * Runs work in a savepoint: when it throws, its writes are undone and the error rethrown, the
   * transaction's other writes stay. Nests. Savepoints of one transaction run one at a time:
   * await one before starting the next (never two at once through Promise.all).
   */
  savepoint<T>(work: () => Promise<T>): Promise<T>
  /**
   * Runs `wake` once the transaction has committed (never when it rolls back): the wake-up of a
   * service that acts on the committed rows (the executor, the webhook sender). A savepoint undone
   * does not take it back, so `wake` must only look, never assume.
   */
  afterCommit(wake: () => void): void
}

/**
 * The wake-ups of one transaction, run after its commit; a throw is reported, never rethrown (the
 * change is committed whatever a wake-up does). Shared by both engines.
 */
export function commitHooks(report: (error: unknown) => void): { add(wake: () => void): void; run(): void } {
  const wakes: (() => void)[] = []
  return {
    add: (wake) => {
      wakes.push(wake)
    },
    run: () => {
      for (const wake of wakes) {
        try {
          wake()
        } catch (error) {
          report(error)
        }
      }
    },
  }
}

/** A named lease (a background service's right to run on this node): see Store.lease. */
export interface Lease {
  readonly name: string
  /** False once released, or once the connection that holds it has died: stop acting as holder. */
  held(): boolean
  release(): Promise<void>
}

export interface WriteOptions {
  /** The kill switch and its kin: queued ahead of the writes that are not urgent (SQLite). */
  urgent?: boolean
}

/** What /health says of the database. */
export interface DatabaseHealth {
  /** busy: another process holds SQLite's write lock; unavailable: PostgreSQL does not answer. */
  state: 'ok' | 'busy' | 'read_only' | 'unavailable'
  /** Writes cannot go on: read-only, unreachable, or the lock held as long as a write may wait. */
  degraded: boolean
}

/** What SQLite's wal_checkpoint reports: WAL frames busy (readers held them), in the WAL, checkpointed. */
export interface CheckpointReport {
  busy: number
  log: number
  checkpointed: number
}

export interface Store {
  readonly engine: Engine
  /** Reads outside any transaction: only what has committed, never a write whose work still runs. */
  readonly read: Queries
  /**
   * Runs work in one transaction: every write of it, or none. When work throws, the transaction
   * is rolled back and the error rethrown. On SQLite writes run one at a time (urgent first); on
   * PostgreSQL they run at once, so a change that reads then writes locks what it reads (SELECT
   * ... FOR UPDATE), and work may run again after a serialization failure or deadlock: it must
   * have no effect outside tx. A commit whose outcome is unknown or not replicated throws
   * DatabaseUnavailableError.
   */
  write<T>(work: (tx: Tx) => Promise<T>, options?: WriteOptions): Promise<T>
  /**
   * Takes the lease `name` if no other holder has it; undefined when another has. On PostgreSQL a
   * session advisory lock on a connection of its own; on SQLite always granted (one process owns
   * the data dir).
   */
  lease(name: string): Promise<Lease | undefined>
  /**
   * Differs whenever the database may have changed since the last call, whoever committed: lets a
   * pure read be memoised without ever serving a stale answer. Undefined where the engine cannot
   * tell cheaply (PostgreSQL, where another node commits): do not memoise there.
   */
  version(): string | undefined
  /**
   * The nightly upkeep of the database file, between two writes: on SQLite the WAL folded back into
   * the file and truncated (waiting at most busyMs for readers), then the planner's statistics
   * refreshed. Undefined on PostgreSQL, whose own checkpointer and autovacuum do this.
   */
  checkpoint(busyMs: number): Promise<CheckpointReport | undefined>
  /** The database's state now, for /health. */
  health(): Promise<DatabaseHealth>
  /** Waits for the write in progress, releases the leases and closes the connections. */
  close(): Promise<void>
}

/**
 * The database cannot be reached, or did not confirm a commit (a 503 with Retry-After, never a
 * 500, never a 200): nothing of the change may be assumed written, nor assumed absent.
 */
export class DatabaseUnavailableError extends Error {
  readonly code = 'database_unavailable'
  readonly status = 503
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'DatabaseUnavailableError'
  }
}

/** Thrown by a Tx used after its write() ended (an await that outlived the transaction). */
export function transactionOver(): Error {
  return new Error('this transaction has ended: a query ran after its write() returned (a missing await?)')
}

/**
 * Savepoints of one transaction, shared by both engines: `exec` runs a statement of the
 * transaction's own connection. Names are sp1, sp2, ... by depth.
 */
export function savepoints(exec: (sql: string) => Promise<void>): <T>(work: () => Promise<T>) => Promise<T> {
  let depth = 0
  return async (work) => {
    const mine = ++depth
    const name = `sp${mine}`
    await exec(`SAVEPOINT ${name}`)
    let result: Awaited<ReturnType<typeof work>>
    try {
      result = await work()
    } catch (error) {
      if (depth !== mine) throw new Error('savepoints of one transaction overlapped (run them one at a time)', { cause: error })
      depth--
      await exec(`ROLLBACK TO SAVEPOINT ${name}`)
      await exec(`RELEASE SAVEPOINT ${name}`)
      throw error
    }
    if (depth !== mine) throw new Error('savepoints of one transaction overlapped (run them one at a time)')
    depth--
    await exec(`RELEASE SAVEPOINT ${name}`)
    return result
  }
}

const insideWrite = new AsyncLocalStorage<{ running: boolean }>()

/**
 * The write whose work the current async context belongs to, for both engines: a write() from
 * inside it while it still runs is refused (on SQLite it would wait for itself forever; on
 * PostgreSQL it would split one change over two transactions). Work it scheduled (a timer,
 * setImmediate) inherits the context but runs after the commit, when `running` is false: that may write.
 */
export const writeScope = {
  run<T>(mark: { running: boolean }, work: () => Promise<T>): Promise<T> {
    return insideWrite.run(mark, work)
  },
  nested(): boolean {
    return insideWrite.getStore()?.running === true
  },
}

export function nestedWrite(): Error {
  return new Error('store.write() inside a write: pass its tx down instead')
}
