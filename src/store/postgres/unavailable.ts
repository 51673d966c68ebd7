// Which of PostgreSQL's errors mean the database, not the statement, is the problem: a 503
// database_unavailable (SPEC 15), for the engine and its leases alike.
import pg from 'pg'
import { DatabaseUnavailableError } from '../store.ts'

/** Server errors that say the database, not the statement, is the problem: a 503. */
const UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '53300', '25006', '57014'])

/** An error of the database's reach (any error but a server's answer about the statement) as DatabaseUnavailableError. */
export function unavailable(error: unknown): unknown {
  if (error instanceof DatabaseUnavailableError) return error
  if (error instanceof pg.DatabaseError) {
    const code = error.code ?? ''
    if (!code.startsWith('08') && !UNAVAILABLE.has(code)) return error
  }
  return new DatabaseUnavailableError(`the database is unavailable: ${(error as Error)?.message ?? String(error)}`, { cause: error })
}
