// The signal chain (SPEC 11). This module owns the chain columns of table signals (sql/013):
// model_version, model_hash (the model's, when the signal was written), chain_seq (1, 2, ... per
// model), prev_hash and hash = sha256_hex(prev_hash + "\n" + canonical_json({id, model_id,
// model_version, model_hash, pair, action, entry_price, as_of, created_at})), the first prev_hash
// 64 zeros. Triggers refuse an un-chained insert, any update of a chained row and every delete
// (checked at serve start by ./chain-integrity.ts). What the triggers cannot stop, a rewrite by
// someone who drops them, only a head held outside the data dir reveals: signal.published events
// and GET /api/v1/public/models publish it, verifyChain checks an export against it.
import { nodeCrypto } from '../shared/crypto.ts'
import { query, type Queries, type Tx } from '../store/store.ts'
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { signalSchema } from './signals.ts'

export const GENESIS_HASH = '0'.repeat(64)
const HASH_PATTERN = '^[0-9a-f]{64}$'

/** A signal as the export shows it: every field its hash covers, and its place in the chain. */
export type ChainedSignal = FromSchema<typeof chainedSignalSchema>
/** A model's chain as it stands (chainHeadSchema). */
export interface ChainHead {
  count: number
  head_hash: string
  as_of: string | null
}
/** What the hash covers. */
export type ChainContent = Pick<ChainedSignal, 'id' | 'model_id' | 'model_version' | 'model_hash' | 'pair' | 'action' | 'entry_price' | 'as_of' | 'created_at'>

const COLUMNS = 'id, model_id, model_version, model_hash, chain_seq, pair, action, direction, entry_price, as_of, created_at, prev_hash, hash'
const headOf = query<[string], { chain_seq: number; hash: string; as_of: string }>(
  'SELECT chain_seq, hash, as_of FROM signals WHERE model_id = ? AND chain_seq IS NOT NULL ORDER BY chain_seq DESC LIMIT 1',
)
const chainOf = query<[string], ChainedSignal>(`SELECT ${COLUMNS} FROM signals WHERE model_id = ? AND chain_seq IS NOT NULL ORDER BY chain_seq`)
// Rows still without a link (NULL chain_seq sorts first) are shown to verifyChain, which names them.
const rowsOf = query<[string], ChainedSignal>(`SELECT ${COLUMNS} FROM signals WHERE model_id = ? ORDER BY chain_seq`)

/**
 * The link's hash. The covered object is written out by hand, keys in canonical (JCS) order, because
 * it is hashed for every signal published: the same text canonicalJson gives (test/signals/chain.test.ts
 * recomputes it with a generic canonical JSON), at a fraction of the cost.
 *
 * @example
 * signalHash(GENESIS_HASH, { id: 'sig_...', model_id: 'trend-follower', model_version: '1.0.0', model_hash, pair: 'BTC/USDT',
 *   action: 'HOLD', entry_price: 61234.5, as_of: '2026-11-22', created_at: '2026-11-23T00:05:00.000Z' })
 */
export function signalHash(prevHash: string, s: ChainContent): string {
  if (!Number.isFinite(s.entry_price)) throw new Error('canonical JSON has no NaN or Infinity')
  const q = JSON.stringify
  const covered =
    `{"action":${q(s.action)},"as_of":${q(s.as_of)},"created_at":${q(s.created_at)},"entry_price":${q(s.entry_price)},"id":${q(s.id)},` +
    `"model_hash":${q(s.model_hash)},"model_id":${q(s.model_id)},"model_version":${q(s.model_version)},"pair":${q(s.pair)}}`
  return nodeCrypto().createHash('sha256').update(`${prevHash}\n${covered}`).digest('hex')
}

/** The model's chain as it stands: one index step. An empty chain: count 0, 64 zeros, as_of null. */
export async function chainHead(db: Queries, modelId: string): Promise<ChainHead> {
  const head = await db.get(headOf, [modelId])
  return head ? { count: head.chain_seq, head_hash: head.hash, as_of: head.as_of } : { count: 0, head_hash: GENESIS_HASH, as_of: null }
}

/** The head after the last of `rows` (in chain order), or the empty chain's. */
export function headAfter(rows: readonly Pick<ChainedSignal, 'hash' | 'as_of'>[]): ChainHead {
  const last = rows.at(-1)
  return last ? { count: rows.length, head_hash: last.hash, as_of: last.as_of } : { count: 0, head_hash: GENESIS_HASH, as_of: null }
}

export interface Link {
  chain_seq: number
  prev_hash: string
  hash: string
}

/**
 * Links new signals of one model onto its chain, in the order given. Takes the write transaction
 * that inserts them (one total order per model: the head is read in the change that appends to
 * it), reads the head once, then carries it along.
 */
export async function chainLinker(tx: Tx, modelId: string): Promise<{ link(signal: ChainContent): Link; head(): ChainHead }> {
  await lockChain(tx, modelId)
  let { count, head_hash: prev, as_of: asOf } = await chainHead(tx, modelId)
  return {
    link(signal) {
      const link = { chain_seq: ++count, prev_hash: prev, hash: signalHash(prev, signal) }
      prev = link.hash
      asOf = signal.as_of
      return link
    },
    head: () => ({ count, head_hash: prev, as_of: asOf }),
  }
}

// PostgreSQL runs other nodes' writes at once: the model's row, locked until the change commits, is
// the lock of its chain's head, so two appenders never read the same head (SPEC 15). SQLite runs one
// write at a time: nothing to lock there.
const lockModel = query<[string]>('SELECT 1 FROM models WHERE id = ? FOR UPDATE')

/** Holds the model's chain for this transaction: whoever appends after reads the head this one leaves. */
export async function lockChain(tx: Tx, modelId: string): Promise<void> {
  if (tx.engine === 'postgres') await tx.get(lockModel, [modelId])
}

/** The model's whole chain, oldest first. */
export function exportChain(db: Queries, modelId: string): Promise<ChainedSignal[]> {
  return db.all(chainOf, [modelId])
}

/** Every row of the model, chained or not, in chain order (un-chained first): what verify reads from the file. */
export function chainRows(db: Queries, modelId: string): Promise<ChainedSignal[]> {
  return db.all(rowsOf, [modelId])
}

export type ChainProblem = 'edited' | 'deleted' | 'inserted' | 'unchained' | 'misnumbered' | 'head_mismatch'

export type ChainVerification =
  | { valid: true; count: number; head_hash: string; as_of: string | null; head_found_at?: string }
  | { valid: false; count: number; problem: ChainProblem; signal_id: string | null; detail: string }

/**
 * Recomputes a chain (rows of one model, in chain order) from genesis and returns its head or the
 * first problem, naming the signal. With `head` (a head_hash kept outside the data dir, from a
 * signal.published event or the public models list), the chain is valid only if one of its signals
 * has that hash: a chain truncated or rewritten behind the triggers recomputes cleanly, but not to
 * it. Signals after the head cannot be judged by it; the next head covers them.
 */
export function verifyChain(rows: readonly ChainedSignal[], head?: string): ChainVerification {
  const at = new Map<string, number>([[GENESIS_HASH, -1]]) // hash -> index of the row that has it
  const name = (i: number) => (i < 0 ? 'the genesis' : rows[i].id)
  let headFoundAt: string | undefined
  let headFound = head === GENESIS_HASH // the head of an empty chain: every chain grew from it
  let prev = GENESIS_HASH
  const broken = (i: number, problem: ChainProblem, signalId: string | null, detail: string): ChainVerification => ({
    valid: false,
    count: i,
    problem,
    signal_id: signalId,
    detail,
  })
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]
    if (row.hash == null || row.prev_hash == null || row.chain_seq == null) {
      return broken(i, 'unchained', row.id, `${row.id} has no link: it was written without one (not by the publisher)`)
    }
    if (row.model_id !== rows[0].model_id) {
      return broken(i, 'inserted', row.id, `${row.id} is a signal of ${row.model_id}, in the chain of ${rows[0].model_id}`)
    }
    if (row.prev_hash !== prev) {
      const skipped = at.get(row.prev_hash)
      if (skipped !== undefined && skipped < i - 1) {
        const extra = rows[skipped + 1].id
        return broken(skipped + 1, 'inserted', extra, `${extra} is an extra link: ${row.id} follows ${name(skipped)}, not it`)
      }
      const missing = row.chain_seq > i + 1 ? ` (chain_seq ${i + 1}${row.chain_seq > i + 2 ? `..${row.chain_seq - 1}` : ''} missing)` : ''
      return broken(i, 'deleted', row.id, `the signal before ${row.id} is gone${missing}: its prev_hash is not the hash of ${name(i - 1)}`)
    }
    if (signalHash(row.prev_hash, row) !== row.hash) {
      return broken(i, 'edited', row.id, `${row.id} was edited: its content does not match its hash`)
    }
    if (row.chain_seq !== i + 1) {
      return broken(i, 'misnumbered', row.id, `${row.id} has chain_seq ${row.chain_seq}, but is link ${i + 1}`)
    }
    if (row.hash === head) {
      headFoundAt = row.id
      headFound = true
    }
    at.set(row.hash, i)
    prev = row.hash
  }
  if (head !== undefined && !headFound) {
    return broken(
      rows.length,
      'head_mismatch',
      null,
      `no signal has hash ${head}: the chain was truncated or rewritten after that head was taken (or the head is of another model)`,
    )
  }
  const { head_hash, as_of } = headAfter(rows)
  return { valid: true, count: rows.length, head_hash, as_of, ...(headFoundAt ? { head_found_at: headFoundAt } : {}) }
}

export const chainHeadSchema = {
  type: 'object',
  required: ['count', 'head_hash', 'as_of'],
  additionalProperties: false,
  description: "the model's signal chain: its length, the hash of its last signal (64 zeros when empty) and that signal's as_of",
  properties: {
    count: { type: 'integer', minimum: 0 },
    head_hash: { type: 'string', pattern: HASH_PATTERN },
    as_of: { type: 'string', format: 'date', nullable: true },
  },
} as const satisfies Schema

/** A signal of the API plus its place in the chain and the model it came from, as the export shows it. */
export const chainedSignalSchema = {
  type: 'object',
  required: [...signalSchema.required, 'model_version', 'model_hash', 'chain_seq'],
  additionalProperties: false,
  properties: {
    ...signalSchema.properties,
    model_version: { type: 'string' },
    model_hash: { type: 'string', pattern: HASH_PATTERN },
    chain_seq: { type: 'integer', minimum: 1 },
  },
} as const satisfies Schema
