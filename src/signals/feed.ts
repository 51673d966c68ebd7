// The public feed: the current signal (newest as_of) of every pair of every catalogue model, with
// only what a visitor may see (no ids, no prices). Reads tables signals, models, synthetic_prices.
import { query, type Queries } from '../store/store.ts'
import { modeOf, type Model } from '../models/catalogue.ts'
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'

export type FeedRow = FromSchema<typeof feedRowSchema>

// One index probe per universe pair (signals_current: model_id, pair, as_of), so the cost follows
// the size of the catalogue, not the length of the history.
const currentRows = query<[], Omit<FeedRow, 'mode'> & { status: Model['status'] }>({
  sqlite: `
  SELECT u.value || '/' || m.quote_asset AS pair, s.direction, m.name AS model, m.version AS model_version, m.schedule_utc, m.status, s.as_of
  FROM models m
  JOIN json_each(m.universe) u
  JOIN signals s ON s.rowid = (
    SELECT rowid FROM signals WHERE model_id = m.id AND pair = u.value || '/' || m.quote_asset ORDER BY as_of DESC LIMIT 1)
  WHERE m.status != 'RETIRED'
  ORDER BY m.schedule_utc, m.name, u.key`,
  // The same probe as a LATERAL join (no rowid); the universe's order by its position.
  postgres: `
  SELECT u.value || '/' || m.quote_asset AS pair, s.direction, m.name AS model, m.version AS model_version, m.schedule_utc, m.status, s.as_of
  FROM models m
  CROSS JOIN LATERAL json_array_elements_text(m.universe::json) WITH ORDINALITY u(value, key)
  JOIN LATERAL (
    SELECT direction, as_of FROM signals WHERE model_id = m.id AND pair = u.value || '/' || m.quote_asset ORDER BY as_of DESC LIMIT 1) s ON true
  WHERE m.status != 'RETIRED'
  ORDER BY m.schedule_utc, m.name, u.key`,
})

const syntheticPairs = query<[], { pairs: number; seed: number | null }>('SELECT count(*) AS pairs, min(seed) AS seed FROM synthetic_prices')

export async function currentFeed(db: Queries): Promise<FeedRow[]> {
  return (await db.all(currentRows)).map(({ status, ...row }) => ({ ...row, mode: modeOf(status) }))
}

/** How many pairs carry synthetic demo prices (and the seed), so the page can say so. */
export async function syntheticPrices(db: Queries): Promise<{ pairs: number; seed: number | null }> {
  return (await db.get(syntheticPairs)) ?? { pairs: 0, seed: null }
}

export const feedRowSchema = {
  type: 'object',
  required: ['pair', 'direction', 'model', 'model_version', 'schedule_utc', 'mode', 'as_of'],
  additionalProperties: false,
  properties: {
    pair: { type: 'string', pattern: '^[A-Z0-9]+/[A-Z0-9]+$' },
    direction: { type: 'string', enum: ['LONG', 'HOLD', 'DE-RISK'] },
    model: { type: 'string', description: 'model display name' },
    model_version: { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$' },
    schedule_utc: { type: 'string', pattern: '^\\d{2}:\\d{2}$', description: 'daily publish time, HH:MM UTC' },
    mode: { type: 'string', enum: ['PAPER', 'FORWARD'] },
    as_of: { type: 'string', format: 'date', description: 'date of the daily candle the signal was computed from' },
  },
} as const satisfies Schema
