// The built-in model catalogue, seeded by sql/001_init.sql. Table models (id, name, strategy,
// version, status, universe JSON of asset symbols, quote_asset, parameters JSON, hash, schedule_utc).
import { query, type Queries } from '../store/store.ts'
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'

/**
 * A catalogue model as the API shows it: universe holds asset symbols ("BTC"), each traded against
 * quote_asset; pairs the same as trading pairs ("BTC/USDT"), which signals, prices and orders name.
 * Every field is always there (the schema leaves strategy optional).
 */
export type Model = Required<FromSchema<typeof modelSchema>>

interface Row {
  id: string
  name: string
  strategy: string
  version: string
  status: Model['status']
  universe: string
  quote_asset: string
  parameters: string
  hash: string
  schedule_utc: string
}

const activeModels = query<[], Row>("SELECT * FROM models WHERE status != 'RETIRED' ORDER BY id")

export function modeOf(status: Model['status']): Model['mode'] {
  return status === 'FORWARD_LIVE' ? 'FORWARD' : 'PAPER'
}

function toModel(row: Row): Model {
  const universe: string[] = JSON.parse(row.universe)
  return {
    id: row.id,
    name: row.name,
    universe,
    quote_asset: row.quote_asset,
    pairs: universe.map((asset) => `${asset}/${row.quote_asset}`),
    version: row.version,
    status: row.status,
    parameters: JSON.parse(row.parameters),
    hash: row.hash,
    schedule_utc: row.schedule_utc,
    mode: modeOf(row.status),
    strategy: row.strategy,
  }
}

let cache: Model[] | undefined
/** The catalogue changes only through migrations, so it is read once per process. */
export async function catalogue(db: Queries): Promise<Model[]> {
  cache ??= (await db.all(activeModels)).map(toModel)
  return cache
}

export async function findModel(db: Queries, id: string): Promise<Model | undefined> {
  return (await catalogue(db)).find((m) => m.id === id)
}

export const MODEL_ID_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$'

export const modelSchema = {
  type: 'object',
  required: ['id', 'name', 'universe', 'quote_asset', 'pairs', 'version', 'status', 'parameters', 'hash', 'schedule_utc', 'mode'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: MODEL_ID_PATTERN },
    name: { type: 'string' },
    universe: { type: 'array', items: { type: 'string', pattern: '^[A-Z0-9]+$' }, description: 'asset symbols traded by the model' },
    quote_asset: { type: 'string', pattern: '^[A-Z0-9]+$', description: 'what the universe is quoted in' },
    pairs: {
      type: 'array',
      items: { type: 'string', pattern: '^[A-Z0-9]+/[A-Z0-9]+$' },
      description: 'the universe as BASE/QUOTE pairs, as signals name them',
    },
    version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' },
    status: { type: 'string', enum: ['FORWARD_PAPER', 'FORWARD_LIVE', 'RETIRED'] },
    parameters: { type: 'object', properties: {}, additionalProperties: { type: 'number' } },
    hash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'sha256_hex(canonical_json({id, version, parameters}))' },
    schedule_utc: { type: 'string', pattern: '^\\d{2}:\\d{2}$' },
    mode: { type: 'string', enum: ['PAPER', 'FORWARD'] },
    strategy: { type: 'string' },
  },
} as const satisfies Schema
