// PostgreSQL's migrations: sql/postgres/NNN_*.sql, numbered like SQLite's sql/NNN_*.sql, each applied
// once in its own transaction and recorded in schema_migrations. Nodes that start together take a
// session advisory lock first, so one migrates and the others find the work done.
import pg from 'pg'
import { assetList, assetText } from '../assets.ts'
import { DatabaseUnavailableError } from '../store.ts'

/** The advisory-lock spaces (the first key of the two-key form): migrations and leases never meet. */
export const MIGRATION_LOCK_SPACE = 1112886359
export const LEASE_LOCK_SPACE = 1112886360

/** Applies the files of sql/postgres above what schema_migrations records; returns the versions applied. */
export async function migratePostgres(connection: pg.ClientConfig): Promise<number[]> {
  // Another node may migrate for a while: this session waits for its lock without a statement limit.
  const client = new pg.Client({ ...connection, query_timeout: 600_000 })
  client.on('error', () => {})
  try {
    await client.connect()
  } catch (error) {
    await client.end().catch(() => {})
    throw new DatabaseUnavailableError(`the database is unavailable: ${(error as Error).message}`, { cause: error })
  }
  const applied: number[] = []
  try {
    // SET rather than a startup parameter, which PgBouncer refuses.
    await client.query('SET statement_timeout = 0')
    await client.query('SELECT pg_advisory_lock($1, 0)', [MIGRATION_LOCK_SPACE])
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    )
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version))
    for (const file of assetList('sql/postgres').filter((f) => /^\d{3}_[^/]*\.sql$/.test(f))) {
      const version = Number(file.slice(0, 3))
      if (done.has(version)) continue
      await client.query('BEGIN')
      try {
        await client.query(assetText(`sql/postgres/${file}`))
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, file])
        await client.query('COMMIT')
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw new Error(`migration sql/postgres/${file} failed: ${(error as Error).message}`, { cause: error })
      }
      applied.push(version)
    }
    await client.query('SELECT pg_advisory_unlock($1, 0)', [MIGRATION_LOCK_SPACE])
  } finally {
    await client.end().catch(() => {})
  }
  return applied
}
