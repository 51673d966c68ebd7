// Before a command migrates or a node takes a lease (SPEC 15): is a connection to this database one
// PostgreSQL session for as long as it is open? The leases and the migrations' lock are session
// advisory locks, and a pooler that hands the server connection to another client after each
// transaction (PgBouncer's pool_mode = transaction or statement) leaves such a lock on a connection
// someone else is using: a lease held by nobody, or by two nodes. Such a pooler is refused here.
import pg from 'pg'
import { unavailable } from './unavailable.ts'

const PID = 'SELECT pg_backend_pid() AS pid'

/**
 * Throws, in one line, unless two connections to `url` are two sessions that keep their server
 * process. A opens a session and asks its process; B opens a transaction, which pins whatever
 * server connection it got, and asks its own; A asks again. A transaction pooler hands B the
 * connection A just gave back (with a pool of one, the only one there is), or hands A another one.
 * Costs two connections opened at once and three round trips.
 */
export async function refuseTransactionPooling(url: string): Promise<void> {
  const config: pg.ClientConfig = { connectionString: url, connectionTimeoutMillis: 3000, query_timeout: 4500 }
  const a = new pg.Client(config)
  const b = new pg.Client(config)
  for (const client of [a, b]) client.on('error', () => {})
  const pidOf = async (client: pg.Client, text = PID) => {
    const results = [(await client.query(text)) as pg.QueryResult | pg.QueryResult[]].flat()
    return results.at(-1)?.rows[0]?.pid as number
  }
  let shared: boolean
  try {
    await Promise.all([a.connect(), b.connect()])
    const first = await pidOf(a)
    const pinned = await pidOf(b, `BEGIN; ${PID}`)
    shared = pinned === first || (await pidOf(a)) !== first
  } catch (error) {
    // PgBouncer in statement mode ends a client that opens a transaction: "transaction blocks not
    // allowed in statement pooling mode".
    if (!/pooling mode/i.test((error as Error)?.message ?? '')) throw unavailable(error)
    shared = true
  } finally {
    // Nothing waits for the goodbyes.
    for (const client of [a, b]) client.end().catch(() => {})
  }
  if (shared) {
    throw new Error(
      `${where(url)} hands one session to several connections (a pooler in transaction or statement mode, such as PgBouncer's pool_mode = transaction): Bulwark's leases are session locks; pool by session (pool_mode = session) or connect to PostgreSQL directly`,
    )
  }
}

/** Host, port and database of the URL: never its user or password. */
function where(url: string): string {
  try {
    const { hostname, port, pathname } = new URL(url)
    return `the database ${decodeURIComponent(pathname.slice(1)) || '(default)'} at ${hostname}${port ? `:${port}` : ''}`
  } catch {
    return 'the database'
  }
}
