// SPEC 6's incident hash, written again from the text alone for the tests (never the code under
// test): RFC 8785 for flat records of strings and nulls is "keys sorted, JSON.stringify for each
// value, no spaces"; hash = sha256_hex(prev_hash + "\n" + canonical_json(record)).
import { createHash } from 'node:crypto'

export const GENESIS = '0'.repeat(64)

/** RFC 8785 canonical JSON of a flat record of strings and nulls. */
export function canonical(record: Record<string, unknown>): string {
  return `{${Object.keys(record)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(record[k])}`)
    .join(',')}}`
}

/** The hash of an incident (any object with the eight covered fields) after `prev`. */
export function incidentHash(prev: string, i: Record<string, unknown>): string {
  const record = {
    id: i.id,
    tenant_id: i.tenant_id,
    action: i.action,
    actor: i.actor,
    status: i.status,
    timestamp: i.timestamp,
    model_id: i.model_id,
    reason: i.reason,
  }
  return createHash('sha256')
    .update(`${prev}\n${canonical(record)}`)
    .digest('hex')
}
