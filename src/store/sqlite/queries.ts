// The Store's Queries on one better-sqlite3 connection: each text prepared once per connection,
// parameters bound as SQLite takes them, rows as it gives them.
import type Database from 'better-sqlite3'
import type { Statement } from 'better-sqlite3'
import { rewriteParameters } from '../sql-parameters.ts'
import { type Queries, type Query, type RunResult, transactionOver } from '../store.ts'

type Connection = Database.Database

/**
 * Prepared statements of one connection: by the query object (a module's constant, found without
 * hashing its text), else by its text (a query made at run time).
 */
export function statements(connection: Connection): (q: Query<object, unknown>) => Statement {
  const byQuery = new WeakMap<Query<object, unknown>, Statement>()
  const byText = new Map<string, Statement>()
  return (q) => {
    let prepared = byQuery.get(q)
    if (!prepared) {
      prepared = byText.get(q.sqlite)
      if (!prepared) {
        prepared = connection.prepare(unplannedParameters(q.sqlite))
        byText.set(q.sqlite, prepared)
      }
      byQuery.set(q, prepared)
    }
    return prepared
  }
}

/**
 * The text with every parameter written `(+@name)`, so that SQLite never plans by a parameter's
 * value. Where it would (an equality on a column no index serves, in a join or beside an index; a
 * LIMIT; a LIKE; a partial index; sqlite_stat4's samples once `PRAGMA optimize` wrote them), it marks
 * the statement "re-prepare on a new binding", and better-sqlite3 clears the bindings after every
 * call, which re-prepares such a statement on every call: 30-80 us for a read of orders_now (measured:
 * 87 us against 6.4 us, the same plan). A unary plus is a no-op on a value (a parameter has no
 * affinity to lose) and an index still serves `column = (+@name)`.
 *
 * @example
 * unplannedParameters('SELECT * FROM orders WHERE id = @id LIMIT ?') // 'SELECT * FROM orders WHERE id = (+@id) LIMIT (+?)'
 */
export function unplannedParameters(sql: string): string {
  return rewriteParameters(sql, (parameter) => `(+${parameter.text})`)
}

/** Booleans as 1 and 0, as PostgreSQL reads them; anything else as given (a copy only when a boolean is there). */
function bound(params: object): object {
  if (Array.isArray(params)) {
    for (const value of params) if (typeof value === 'boolean') return params.map((v) => (typeof v === 'boolean' ? Number(v) : v))
    return params
  }
  for (const key in params) {
    if (typeof (params as Record<string, unknown>)[key] === 'boolean') {
      const copy: Record<string, unknown> = { ...params }
      for (const k in copy) if (typeof copy[k] === 'boolean') copy[k] = copy[k] ? 1 : 0
      return copy
    }
  }
  return params
}

/** Runs `method` of a statement with params as better-sqlite3 binds them: an array spread, an object whole, none for nothing. */
function call<T>(statement: Statement, method: 'get' | 'all' | 'run', params: object | undefined): T {
  if (params === undefined) return statement[method]() as T
  const given = bound(params)
  if (Array.isArray(given)) return statement[method](...given) as T
  // An empty object binds nothing (better-sqlite3 refuses one for a statement without parameters).
  for (const _ in given) return statement[method](given) as T
  return statement[method]() as T
}

export function queriesOn(prepare: (q: Query<object, unknown>) => Statement, live: () => boolean): Queries {
  const statement = (q: Query<object, unknown>) => {
    if (!live()) throw transactionOver()
    return prepare(q)
  }
  return {
    engine: 'sqlite',
    async get<P extends object, R>(q: Query<P, R>, params?: P) {
      return call<R | undefined>(statement(q), 'get', params)
    },
    async all<P extends object, R>(q: Query<P, R>, params?: P) {
      return call<R[]>(statement(q), 'all', params)
    },
    async run<P extends object>(q: Query<P, unknown>, params?: P): Promise<RunResult> {
      return { changes: call<Database.RunResult>(statement(q), 'run', params).changes }
    },
  }
}
