// The Store on PostgreSQL (SPEC 15): a pg.Pool. A write takes a client, BEGIN, the work on that
// client, COMMIT; writes run at once, PostgreSQL's locks order them, and a serialization failure or
// deadlock runs the work again (a few times). Everything is bounded so that a database that is gone,
// or that stops answering without closing its sockets, fails within 5 s with DatabaseUnavailableError:
// the connection (connectionTimeoutMillis), each statement (statement_timeout, server side) and each
// answer (query_timeout, client side, for a server that no longer answers at all, and for a COMMIT
// stuck waiting for a synchronous standby: its outcome is then unknown, a 503 too). A COMMIT that
// PostgreSQL answers with a WARNING that the synchronous-replication wait was cancelled committed
// only locally: it throws DatabaseUnavailableError, never resolves. Leases are session advisory
// locks, each on a connection of its own.
import { numberTypes } from './types.ts'
import pg from 'pg'
import { log } from '../../shared/log.ts'
import {
  commitHooks,
  nestedWrite,
  writeScope,
  type DatabaseHealth,
  type Lease,
  type Queries,
  type Query,
  type Store,
  type Tx,
  DatabaseUnavailableError,
  savepoints,
  transactionOver,
} from '../store.ts'
import { type Positional, toPositional, valuesOf } from './named-params.ts'
import { takeLease } from './lease.ts'
import { migratePostgres } from './migrate.ts'
import { unavailable } from './unavailable.ts'

export interface PostgresStoreOptions {
  url: string
  /** Connections in the pool (default 10); each lease takes one more of its own. */
  poolSize?: number
  /** Apply sql/postgres/NNN_*.sql at open (default true). */
  migrate?: boolean
  /** Waiting for a connection, new or from the pool (default 3000 ms). */
  connectTimeoutMs?: number
  /** A statement's limit on the server (default 4000 ms). It does not reach a COMMIT's wait for a synchronous standby (PostgreSQL disables it before committing): queryTimeoutMs does. */
  statementTimeoutMs?: number
  /** How long the client waits for any answer before it gives the connection up (default 4500 ms). */
  queryTimeoutMs?: number
  /** How often a lease checks that its connection still answers (default 2000 ms). */
  leaseHeartbeatMs?: number
}

const reportHook = (error: unknown) =>
  log({ level: 'error', msg: 'after-commit wake-up failed', error: error instanceof Error ? error.message : String(error) })

/** Attempts of a write that meets serialization failures or deadlocks. */
const ATTEMPTS = 4
const RETRYABLE = new Set(['40001', '40P01'])
const isServerError = (error: unknown) => error instanceof pg.DatabaseError && !(unavailable(error) instanceof DatabaseUnavailableError)

export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const connection: pg.ClientConfig = {
    connectionString: options.url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 3000,
    query_timeout: options.queryTimeoutMs ?? 4500,
    keepAlive: true,
    types: numberTypes,
  }
  if (options.migrate !== false) await migratePostgres(connection)
  // The server-side limit is SET on each new connection (awaited before the pool hands it out) rather
  // than sent as a startup parameter, which PgBouncer refuses ("unsupported startup parameter").
  const statementTimeoutMs = Math.max(0, Math.trunc(options.statementTimeoutMs ?? 4000))
  const onConnect = async (client: pg.ClientBase) => {
    await client.query(`SET statement_timeout = ${statementTimeoutMs}`)
  }
  const pool = new pg.Pool({ ...connection, max: options.poolSize ?? 10, onConnect })
  // An idle client whose connection died: the pool drops it; the next query takes a new one.
  pool.on('error', () => {})
  // Each text is a named statement: every connection parses and plans it once, at its first use,
  // instead of at every call (the driver keeps which connection has prepared which name).
  const translated = new Map<string, Positional & { name: string }>()
  const positional = (q: Query<object, unknown>): Positional & { name: string } => {
    let found = translated.get(q.postgres)
    if (!found) {
      found = { ...toPositional(q.postgres), name: `bulwark_${translated.size + 1}` }
      translated.set(q.postgres, found)
    }
    return found
  }
  const config = (q: Query<object, unknown>, params: object | undefined): pg.QueryConfig => {
    const { text, names, name } = positional(q)
    return { name, text, values: valuesOf(names, params) }
  }

  async function call(on: pg.Pool | pg.PoolClient, query: pg.QueryConfig | string): Promise<pg.QueryResult> {
    try {
      return await on.query(query as pg.QueryConfig)
    } catch (error) {
      throw unavailable(error)
    }
  }

  function queriesOn(on: () => pg.Pool | pg.PoolClient): Queries {
    return {
      engine: 'postgres',
      async get<P extends object, R>(q: Query<P, R>, params?: P) {
        return (await call(on(), config(q, params))).rows[0] as R | undefined
      },
      async all<P extends object, R>(q: Query<P, R>, params?: P) {
        return (await call(on(), config(q, params))).rows as R[]
      },
      async run<P extends object>(q: Query<P, unknown>, params?: P) {
        return { changes: (await call(on(), config(q, params))).rowCount ?? 0 }
      },
    }
  }

  async function acquire(): Promise<pg.PoolClient> {
    try {
      return await pool.connect()
    } catch (error) {
      throw unavailable(error)
    }
  }

  /** COMMIT, refused when PostgreSQL says it committed locally only (a cancelled synchronous-replication wait). */
  async function commit(client: pg.PoolClient): Promise<void> {
    const warnings: string[] = []
    const onNotice = (notice: { message?: string; detail?: string }) => {
      const text = `${notice.message ?? ''} ${notice.detail ?? ''}`
      if (/synchronous replication|committed locally/i.test(text)) warnings.push(text.trim())
    }
    client.on('notice', onNotice)
    try {
      await call(client, 'COMMIT')
    } finally {
      client.off('notice', onNotice)
    }
    if (warnings.length) throw new DatabaseUnavailableError(`the commit was not confirmed by a synchronous standby: ${warnings[0]}`)
  }

  async function attempt<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const client = await acquire()
    let healthy = true
    // The pool listens for a connection's errors only while it is idle: one that dies while this
    // write holds it (a primary killed or cut off) would be an unhandled 'error' that ends the process.
    const died = () => {
      healthy = false
    }
    client.on('error', died)
    let live = true
    const on = () => {
      if (!live) throw transactionOver()
      return client
    }
    const hooks = commitHooks(reportHook)
    const tx: Tx = {
      ...queriesOn(on),
      savepoint: savepoints(async (sql) => {
        await call(on(), sql)
      }),
      afterCommit: (wake) => {
        on()
        hooks.add(wake)
      },
    }
    const mark = { running: true }
    try {
      await call(client, 'BEGIN')
      const result = await writeScope.run(mark, () => work(tx))
      live = false
      mark.running = false
      await commit(client)
      hooks.run()
      return result
    } catch (error) {
      live = false
      // A connection that failed, or a commit whose outcome is unknown, is not given back to the pool.
      healthy = isServerError(error) || !(error instanceof DatabaseUnavailableError)
      if (healthy) {
        try {
          await client.query('ROLLBACK')
        } catch {
          healthy = false
        }
      }
      throw error
    } finally {
      live = false
      mark.running = false
      client.off('error', died)
      client.release(!healthy)
    }
  }

  const leases = new Set<Lease>()
  let closed = false

  return {
    engine: 'postgres',
    read: queriesOn(() => {
      if (closed) throw new Error('the store is closed')
      return pool
    }),
    async write<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
      if (closed) throw new Error('the store is closed')
      if (writeScope.nested()) throw nestedWrite()
      for (let n = 1; ; n++) {
        try {
          return await attempt(work)
        } catch (error) {
          if (n >= ATTEMPTS || !(error instanceof pg.DatabaseError && RETRYABLE.has(error.code ?? ''))) throw error
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * n))
        }
      }
    },
    async lease(name: string) {
      const lease = await takeLease(connection, name, options.leaseHeartbeatMs ?? 2000, (l) => leases.delete(l))
      if (lease) leases.add(lease)
      return lease
    },
    // Another node may commit at any moment, and nothing tells this one cheaply.
    version: () => undefined,
    // PostgreSQL's own checkpointer and autovacuum keep its files: nothing to do.
    checkpoint: async () => undefined,
    async health(): Promise<DatabaseHealth> {
      try {
        // A standby answers reads but takes no write (a failover under way, a proxy that points at it).
        const { rows } = await call(pool, { text: 'SELECT pg_is_in_recovery() AS standby' })
        return rows[0].standby ? { state: 'read_only', degraded: true } : { state: 'ok', degraded: false }
      } catch {
        return { state: 'unavailable', degraded: true }
      }
    },
    async close() {
      if (closed) return
      closed = true
      await Promise.all([...leases].map((l) => l.release()))
      await pool.end()
    },
  }
}
