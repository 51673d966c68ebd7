// The Store on SQLite: the data dir's bulwark.db through better-sqlite3, as src/store/db.ts opens it
// (WAL, foreign keys, the same sql/NNN_*.sql migrations), with two connections. The writer runs one
// write at a time, from this engine's own queue (urgent writes first): BEGIN IMMEDIATE, then the
// work, which may await, then COMMIT. The reader answers Store.read: in WAL mode it sees only what
// has committed, so a write whose work still awaits is invisible to it. Each query text is prepared
// once per connection.
import type Database from 'better-sqlite3'
import type { Statement } from 'better-sqlite3'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { migrate, openConnection } from '../db.ts'
import { type Lease, type Queries, type Query, type RunResult, type Store, type Tx, type WriteOptions, savepoints, transactionOver } from '../store.ts'
import { BUSY_DEADLINE_MS, DatabaseBusyError, isBusy, RETRY_EVERY_MS } from '../write-queue.ts'

export interface SqliteStoreOptions {
  dataDir: string
  /** Apply sql/NNN_*.sql at open (default true). */
  migrate?: boolean
}

type Connection = Database.Database

/** Prepared statements of one connection, by query text. */
function statements(connection: Connection): (sql: string) => Statement {
  const cache = new Map<string, Statement>()
  return (sql) => {
    let prepared = cache.get(sql)
    if (!prepared) {
      prepared = connection.prepare(sql)
      cache.set(sql, prepared)
    }
    return prepared
  }
}

/** Parameters as better-sqlite3 binds them: none for an empty object, booleans as 1 and 0 (as PostgreSQL reads them). */
function bind(params: object | undefined): [] | [object] {
  if (!params) return []
  let out: Record<string, unknown> | undefined
  let any = false
  for (const [key, value] of Object.entries(params)) {
    any = true
    if (typeof value === 'boolean') {
      out ??= { ...params }
      out[key] = value ? 1 : 0
    }
  }
  return any ? [out ?? params] : []
}

function queriesOn(prepare: (sql: string) => Statement, live: () => boolean): Queries {
  const statement = (q: Query<object, unknown>) => {
    if (!live()) throw transactionOver()
    return prepare(q.sqlite)
  }
  return {
    async get<P extends object, R>(q: Query<P, R>, params?: P) {
      return statement(q).get(...bind(params)) as R | undefined
    },
    async all<P extends object, R>(q: Query<P, R>, params?: P) {
      return statement(q).all(...bind(params)) as R[]
    },
    async run<P extends object>(q: Query<P, unknown>, params?: P): Promise<RunResult> {
      return { changes: statement(q).run(...bind(params)).changes }
    },
  }
}

interface Waiter {
  urgent: boolean
  start: () => Promise<void>
}

export function openSqliteStore(options: SqliteStoreOptions): Store {
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 })
  const file = join(options.dataDir, 'bulwark.db')
  const writer = openConnection(file)
  if (options.migrate !== false) migrate(writer)
  // While this engine waits for the lock it does so asynchronously (beginImmediate), never inside SQLite.
  writer.pragma('busy_timeout = 0')
  const reader = openConnection(file, { readonly: true })
  const writeStatement = statements(writer)
  let closed = false
  const line: Waiter[] = []
  let running: Promise<void> | undefined

  function pump(): void {
    if (running || line.length === 0) return
    const next = line.shift()!
    running = next.start().finally(() => {
      running = undefined
      pump()
    })
  }

  /** BEGIN IMMEDIATE, retried asynchronously while another process holds the write lock. */
  async function beginImmediate(): Promise<void> {
    const since = Date.now()
    for (;;) {
      try {
        writer.exec('BEGIN IMMEDIATE')
        return
      } catch (error) {
        if (!isBusy(error)) throw error
        if (Date.now() - since >= BUSY_DEADLINE_MS) throw new DatabaseBusyError(Date.now() - since)
        await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS))
      }
    }
  }

  async function transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    await beginImmediate()
    let live = true
    const queries = queriesOn(writeStatement, () => live)
    const tx: Tx = {
      ...queries,
      savepoint: savepoints(async (sql) => {
        if (!live) throw transactionOver()
        writer.exec(sql)
      }),
    }
    try {
      const result = await work(tx)
      writer.exec('COMMIT')
      return result
    } catch (error) {
      if (writer.inTransaction) writer.exec('ROLLBACK')
      throw error
    } finally {
      live = false
    }
  }

  const leases = new Set<{ released: boolean }>()

  return {
    engine: 'sqlite',
    read: queriesOn(statements(reader), () => !closed),
    write<T>(work: (tx: Tx) => Promise<T>, writeOptions: WriteOptions = {}): Promise<T> {
      if (closed) return Promise.reject(new Error('the store is closed'))
      const urgent = writeOptions.urgent === true
      return new Promise<T>((resolve, reject) => {
        const waiter: Waiter = { urgent, start: () => transaction(work).then(resolve, reject) }
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
    async close() {
      if (closed) return
      closed = true
      while (running) await running
      for (const lease of leases) lease.released = true
      reader.close()
      writer.close()
    },
  }
}
