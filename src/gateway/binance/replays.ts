// A change's signature recorded with the change (sql/022): the same bytes replayed after a restart
// or to another node of a cluster are refused, not only those a node's memory has seen.
import type { Purge } from '../../store/retention.ts'
import { query, type Tx } from '../../store/store.ts'
import type { Signed } from './signed.ts'
import { replayed } from './signed.ts'

const record = query<[string, string, number]>(
  'INSERT INTO gateway_signatures (key_id, signature, expires_at) VALUES (?, ?, ?) ON CONFLICT (key_id, signature) DO NOTHING',
)
const purgeExpired = query<[number, number]>(`DELETE FROM gateway_signatures WHERE (key_id, signature) IN (
  SELECT key_id, signature FROM gateway_signatures WHERE expires_at < ? ORDER BY expires_at LIMIT ?)`)

/**
 * Records the signature of the change `tx` makes; throws -1022 when it was recorded before.
 *
 * @example
 * await store.write(async (tx) => { await recordSignature(tx, signed); ... the change ... })
 */
export async function recordSignature(tx: Tx, signed: Signed): Promise<void> {
  const { changes } = await tx.run(record, [signed.key.id, signed.signature, Math.ceil(signed.until)])
  if (changes === 0) throw replayed()
}

/** The nightly upkeep's deletion of the signatures whose requests can no longer be accepted anyway. */
export const signaturePurges: Purge[] = [
  {
    name: 'gateway_signatures',
    begin:
      ({ nowMs }) =>
      async (tx: Tx, limit: number) => {
        const deleted = (await tx.run(purgeExpired, [nowMs, limit])).changes
        return { deleted, more: deleted === limit }
      },
  },
]
