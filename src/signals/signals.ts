// Published signals. Table signals (id, model_id, pair, action, direction, entry_price, as_of,
// created_at, and the chain columns that ./chain.ts owns: model_version, model_hash, chain_seq,
// prev_hash, hash), one per (model_id, as_of, pair); read through the caller's active models only.
import { query, type Queries } from '../store/store.ts'
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'

export type Signal = FromSchema<typeof signalSchema>

export interface SignalFilter {
  tenantId: string
  before: string
  limit: number
  modelId?: string
  pair?: string
  since?: string
}

// CROSS JOIN keeps signals the outer loop: a walk down the id index that stops after LIMIT rows,
// instead of reading and sorting every signal the active models ever had.
const workspaceSignalsWhere = `
  WHERE s.id < @before
    AND (CAST(@model AS TEXT) IS NULL OR s.model_id = @model)
    AND (CAST(@pair AS TEXT) IS NULL OR s.pair = @pair)
    AND (CAST(@since AS TEXT) IS NULL OR s.created_at >= @since)
  ORDER BY s.id DESC LIMIT @limit`
const workspaceSignals = query<Record<string, unknown>, Signal>({
  sqlite: `SELECT s.id, s.model_id, s.pair, s.action, s.direction, s.entry_price, s.as_of, s.created_at, s.prev_hash, s.hash
  FROM signals s CROSS JOIN workspace_models w ON w.model_id = s.model_id AND w.tenant_id = @tenant ${workspaceSignalsWhere}`,
  // PostgreSQL's planner picks the order itself; its CROSS JOIN takes no ON.
  postgres: `SELECT s.id, s.model_id, s.pair, s.action, s.direction, s.entry_price, s.as_of, s.created_at, s.prev_hash, s.hash
  FROM signals s JOIN workspace_models w ON w.model_id = s.model_id AND w.tenant_id = @tenant ${workspaceSignalsWhere}`,
})

export function signalsFor(db: Queries, f: SignalFilter): Promise<Signal[]> {
  return db.all(workspaceSignals, {
    tenant: f.tenantId,
    before: f.before,
    model: f.modelId ?? null,
    pair: f.pair ?? null,
    since: f.since ?? null,
    limit: f.limit,
  })
}

export const signalSchema = {
  type: 'object',
  required: ['id', 'model_id', 'pair', 'action', 'direction', 'entry_price', 'as_of', 'created_at', 'prev_hash', 'hash'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^sig_' },
    model_id: { type: 'string' },
    pair: { type: 'string', pattern: '^[A-Z0-9]+/[A-Z0-9]+$' },
    action: { type: 'string', enum: ['ENTER_LONG', 'HOLD', 'EXIT_LONG'] },
    direction: { type: 'string', enum: ['LONG', 'HOLD', 'DE-RISK'] },
    entry_price: { type: 'number' },
    as_of: { type: 'string', format: 'date' },
    created_at: { type: 'string', format: 'date-time' },
    prev_hash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: "the hash of the signal before it in its model's chain (64 zeros for the first)" },
    hash: {
      type: 'string',
      pattern: '^[0-9a-f]{64}$',
      description:
        'sha256_hex(prev_hash + "\\n" + canonical_json({id, model_id, model_version, model_hash, pair, action, entry_price, as_of, created_at})); GET /api/v1/signals/export has every field it covers',
    },
  },
} as const satisfies Schema
