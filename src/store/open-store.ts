// Opens the Store the configuration names (SPEC 15): a postgres:// or postgresql:// URL selects
// PostgreSQL; without a URL, SQLite in the data dir.
import { openPostgresStore } from './postgres/engine.ts'
import { refuseTransactionPooling } from './postgres/session-probe.ts'
import { openSqliteStore } from './sqlite/engine.ts'
import type { Store } from './store.ts'

export interface StoreConfig {
  dataDir: string
  /** --database / BULWARK_DATABASE_URL. */
  databaseUrl?: string
  /** PostgreSQL's pool size (default 10). */
  poolSize?: number
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url)
}

/** The engine's Store, migrated. */
export async function openStore(config: StoreConfig): Promise<Store> {
  if (config.databaseUrl === undefined || config.databaseUrl === '') return openSqliteStore({ dataDir: config.dataDir })
  if (!isPostgresUrl(config.databaseUrl)) throw new Error('--database takes a postgres:// or postgresql:// URL')
  // Before the migrations' lock and the leases, which a transaction pooler would break (SPEC 15).
  await refuseTransactionPooling(config.databaseUrl)
  return openPostgresStore({ url: config.databaseUrl, poolSize: config.poolSize })
}
