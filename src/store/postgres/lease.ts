// A lease on PostgreSQL (SPEC 15): a session advisory lock on a connection of its own, checked
// every heartbeat, lost when that connection dies or stops answering.
import pg from 'pg'
import type { Lease } from '../store.ts'
import { LEASE_LOCK_SPACE } from './migrate.ts'
import { unavailable } from './unavailable.ts'

/** The lease `name` on a connection of its own, or undefined when another session holds it. */
export async function takeLease(connection: pg.ClientConfig, name: string, heartbeatMs: number, forget: (lease: Lease) => void): Promise<Lease | undefined> {
  const client = new pg.Client(connection)
  let held = false
  let timer: NodeJS.Timeout | undefined
  const lost = () => {
    if (!held) return
    held = false
    clearInterval(timer)
    forget(lease)
    client.end().catch(() => {})
  }
  client.on('error', lost)
  client.on('end', lost)
  const lease: Lease = {
    name,
    held: () => held,
    async release() {
      if (!held) return
      held = false
      clearInterval(timer)
      forget(lease)
      try {
        await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LEASE_LOCK_SPACE, name])
      } catch {
        // The lock dies with the session anyway.
      }
      await client.end().catch(() => {})
    },
  }
  try {
    await client.connect()
    const { rows } = await client.query('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [LEASE_LOCK_SPACE, name])
    if (rows[0]?.ok !== true) {
      await client.end()
      return undefined
    }
  } catch (error) {
    await client.end().catch(() => {})
    throw unavailable(error)
  }
  held = true
  // A connection that stops answering without closing (a frozen primary) loses the lease too.
  timer = setInterval(() => {
    client.query('SELECT 1').catch(lost)
  }, heartbeatMs)
  timer.unref()
  return lease
}
