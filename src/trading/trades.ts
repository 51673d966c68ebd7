// The trade ledger, paper and live. Table trades (sql/001_init.sql): one row per position, with
// friction attributed (fees_usd, slippage_usd) and pnl_pct net of it.
import { statement } from '../store/db.ts'
import type { Schema } from '../http/schema.ts'

export interface Trade {
  id: string
  model: string | null
  model_id: string | null
  pair: string
  direction: 'LONG'
  mode: 'PAPER' | 'LIVE'
  quantity: number
  entry_price: number
  exit_price: number | null
  pnl_pct: number | null
  gross_pnl_pct: number | null
  fees_usd: number
  slippage_usd: number
  status: 'OPEN' | 'CLOSED'
  opened_at: string
  closed_at: string | null
}

export interface TradeFilter { tenantId: string; before: string; limit: number; modelId?: string; pair?: string; status?: string; since?: string }

const tenantTrades = statement<Record<string, unknown>, Trade>(`
  SELECT t.id, m.name AS model, t.model_id, t.pair, t.direction, t.mode, t.quantity, t.entry_price, t.exit_price,
         t.pnl_pct, t.gross_pnl_pct, t.fees_usd, t.slippage_usd, t.status, t.opened_at, t.closed_at
  FROM trades t LEFT JOIN models m ON m.id = t.model_id
  WHERE t.tenant_id = @tenant AND t.id < @before
    AND (@model IS NULL OR t.model_id = @model)
    AND (@pair IS NULL OR t.pair = @pair)
    AND (@status IS NULL OR t.status = @status)
    AND (@since IS NULL OR t.opened_at >= @since)
  ORDER BY t.id DESC LIMIT @limit`)

export function tradesFor(f: TradeFilter): Trade[] {
  return tenantTrades().all({ tenant: f.tenantId, before: f.before, model: f.modelId ?? null, pair: f.pair ?? null, status: f.status ?? null, since: f.since ?? null, limit: f.limit })
}

const tradeById = statement<[string, string], Trade>(`
  SELECT t.id, m.name AS model, t.model_id, t.pair, t.direction, t.mode, t.quantity, t.entry_price, t.exit_price,
         t.pnl_pct, t.gross_pnl_pct, t.fees_usd, t.slippage_usd, t.status, t.opened_at, t.closed_at
  FROM trades t LEFT JOIN models m ON m.id = t.model_id WHERE t.id = ? AND t.tenant_id = ?`)

/** One trade of the tenant, as the API shows it (events carry this too). */
export function tradeOf(tenantId: string, id: string): Trade | undefined {
  return tradeById().get(id, tenantId)
}

const num = { type: 'number' } as const
const nullableNum = { type: 'number', nullable: true } as const
export const tradeSchema: Schema = {
  type: 'object',
  required: ['id', 'model', 'pair', 'direction', 'entry_price', 'exit_price', 'pnl_pct', 'status'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^trd_' },
    model: { type: 'string', nullable: true, description: 'model display name' },
    model_id: { type: 'string', nullable: true },
    pair: { type: 'string' },
    direction: { type: 'string', enum: ['LONG'] },
    mode: { type: 'string', enum: ['PAPER', 'LIVE'] },
    quantity: num,
    entry_price: num,
    exit_price: nullableNum,
    pnl_pct: nullableNum,
    gross_pnl_pct: nullableNum,
    fees_usd: num,
    slippage_usd: num,
    status: { type: 'string', enum: ['OPEN', 'CLOSED'] },
    opened_at: { type: 'string', format: 'date-time' },
    closed_at: { type: 'string', format: 'date-time', nullable: true },
  },
}
