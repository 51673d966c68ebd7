// The trade ledger, paper and live. Table trades (sql/001_init.sql, sql/015): one row per position,
// with friction attributed (fees_usd, slippage_usd) and pnl_pct net of what PnL pays (./fills.ts). A
// CLOSED trade shows what was realized; an OPEN one is marked (mark_price): a PAPER one to the pair's
// last close, a LIVE one to the venue's last price (venue_marks, sql/012) with its age,
// mark_age_seconds (the last close when no mark was read yet); its pnl is unrealized, net of the
// friction paid so far. A trade without a model was opened by hand: its model is "Manual".
import { query, type Queries } from '../store/store.ts'
import type { FromSchema } from 'json-schema-to-ts'
import type { Schema } from '../http/schema.ts'
import { protectionView } from './protection/store.ts'
import { ORDER_SOURCES } from './order-schema.ts'

/** A trade as the API shows it and events carry it: every field is always there (the schema requires fewer). */
export type Trade = Required<FromSchema<typeof tradeSchema>>

export interface TradeFilter {
  tenantId: string
  before: string
  limit: number
  modelId?: string
  pair?: string
  status?: Trade['status']
  since?: string
  /** What mark_age_seconds counts to (default: now). */
  now?: Date
}

const MANUAL_MODEL = 'Manual'

const TRADE_COLUMNS = `
  SELECT t.id, coalesce(m.name, '${MANUAL_MODEL}') AS model, t.model_id, t.pair, t.direction, t.mode, t.quantity, t.entry_price, t.exit_price,
    coalesce(t.exit_price, vm.price, p.close, t.entry_price) AS mark_price,
    CASE WHEN t.status = 'OPEN' THEN (t.quantity * (coalesce(vm.price, p.close, t.entry_price) - t.entry_price) - t.pnl_costs_usd) / (t.quantity * t.entry_price) * 100
      ELSE t.pnl_pct END AS pnl_pct,
    CASE WHEN t.status = 'OPEN' THEN (coalesce(vm.price, p.close, t.entry_price) / t.entry_price - 1) * 100 ELSE t.gross_pnl_pct END AS gross_pnl_pct,
    MARK_AGE AS mark_age_seconds,
    t.fees_usd, t.slippage_usd, t.status, t.opened_at, t.closed_at,
    coalesce(t.entry_reference_price, t.entry_price) AS entry_reference_price, t.exit_reference_price, t.dust_quantity, t.exit_reason,
    t.source, t.gateway_key_id, t.alert_hook_id,
    CASE WHEN t.mode = 'LIVE' AND t.status = 'OPEN' THEN JSON_OBJECT('status', coalesce(vp.status, 'NONE'), 'phase', vp.phase, 'kind', vp.kind,
      'stop_price', vp.stop_price, 'take_profit_price', vp.take_profit_price, 'venue_order_ids', vp.venue_order_ids) END AS protection
  FROM trades t LEFT JOIN models m ON m.id = t.model_id
  LEFT JOIN venue_protections vp ON t.mode = 'LIVE' AND t.status = 'OPEN' AND vp.tenant_id = t.tenant_id AND vp.pair = t.pair
  -- An OPEN LIVE trade's venue mark (null otherwise, and then so is mark_age_seconds).
  LEFT JOIN venue_marks vm ON t.status = 'OPEN' AND t.mode = 'LIVE' AND vm.tenant_id = t.tenant_id AND vm.pair = t.pair
  -- The newest close of an OPEN trade's pair (a filled trade always has one; entry_price stands in otherwise).
  LEFT JOIN prices p ON t.status = 'OPEN' AND p.pair = t.pair AND p.date = (SELECT max(date) FROM prices WHERE pair = t.pair)`

/** The trade columns followed by `rest`, in each dialect: the mark's age in whole seconds, and the JSON object. */
function tradeQuery<P extends object>(rest: string) {
  const text = `${TRADE_COLUMNS} ${rest}`
  return query<P, TradeRow>({
    sqlite: text.replace('MARK_AGE', 'max(0, CAST((julianday(@now) - julianday(vm.marked_at)) * 86400 AS INTEGER))').replace('JSON_OBJECT', 'json_object'),
    postgres: text
      // greatest() skips a NULL where SQLite's max() returns it: no mark, no age.
      .replace(
        'MARK_AGE',
        'CASE WHEN vm.marked_at IS NULL THEN NULL ELSE greatest(0, CAST(floor(extract(epoch FROM CAST(@now AS timestamptz) - CAST(vm.marked_at AS timestamptz))) AS INTEGER)) END',
      )
      .replace('JSON_OBJECT', 'json_build_object'),
  })
}

const tenantTrades = tradeQuery<Record<string, unknown>>(`
  WHERE t.tenant_id = @tenant AND t.id < @before
    AND (CAST(@model AS TEXT) IS NULL OR t.model_id = @model)
    AND (CAST(@pair AS TEXT) IS NULL OR t.pair = @pair)
    AND (CAST(@status AS TEXT) IS NULL OR t.status = @status)
    AND (CAST(@since AS TEXT) IS NULL OR t.opened_at >= @since)
  ORDER BY t.id DESC LIMIT @limit`)

type TradeRow = Omit<Trade, 'protection'> & { protection: string | Record<string, unknown> | null }

/** A row as the API shows it: an open LIVE trade's protection as SPEC 13 says (./protection/store.ts). */
function toTrade(row: TradeRow): Trade {
  // SQLite gives the JSON object as text, PostgreSQL (json_build_object) as the object itself.
  const protection = typeof row.protection === 'string' ? JSON.parse(row.protection) : row.protection
  return { ...row, protection: protection === null ? null : protectionView(protection) }
}

export async function tradesFor(db: Queries, f: TradeFilter): Promise<Trade[]> {
  const rows = await db.all(tenantTrades, {
    tenant: f.tenantId,
    before: f.before,
    model: f.modelId ?? null,
    pair: f.pair ?? null,
    status: f.status ?? null,
    since: f.since ?? null,
    limit: f.limit,
    now: (f.now ?? new Date()).toISOString(),
  })
  return rows.map(toTrade)
}

const tradeById = tradeQuery<{ id: string; tenant: string; now: string }>('WHERE t.id = @id AND t.tenant_id = @tenant')

/** One trade of the tenant, as the API shows it (events carry this too). */
export async function tradeOf(db: Queries, tenantId: string, id: string, now = new Date()): Promise<Trade | undefined> {
  const row = await db.get(tradeById, { id, tenant: tenantId, now: now.toISOString() })
  return row && toTrade(row)
}

const num = { type: 'number' } as const
const nullableNum = { type: 'number', nullable: true } as const
export const tradeSchema = {
  type: 'object',
  required: ['id', 'model', 'pair', 'direction', 'entry_price', 'exit_price', 'pnl_pct', 'status'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^trd_' },
    model: { type: 'string', description: 'model display name; Manual for a trade opened by an order without model_id' },
    model_id: { type: 'string', nullable: true },
    pair: { type: 'string' },
    direction: { type: 'string', enum: ['LONG'] },
    mode: { type: 'string', enum: ['PAPER', 'LIVE'] },
    quantity: num,
    entry_price: { ...num, description: "PAPER: the market price it was bought at; LIVE: the venue's quantity-weighted average fill" },
    exit_price: { ...nullableNum, description: "null while OPEN; PAPER: the market price; LIVE: the venue's average fill of the sale" },
    entry_reference_price: { ...num, description: 'the price the opening order was checked at (LIVE: the venue price when it was placed)' },
    exit_reference_price: { ...nullableNum, description: 'the price the closing order was checked at; null while OPEN' },
    dust_quantity: {
      ...num,
      description: 'LIVE: what the closing sale left below what the market lets anyone sell (step, minimum quantity or cost); written off in pnl_pct',
    },
    mark_price: {
      ...num,
      description:
        "exit_price once CLOSED; while OPEN the price pnl_pct is computed at: for PAPER the pair's last close, for LIVE the venue's last price (read every minute; the last close until one is read)",
    },
    mark_age_seconds: {
      type: 'integer',
      nullable: true,
      description: 'seconds since the venue mark of an OPEN LIVE trade was read; older than 180 it is stale. null for PAPER, CLOSED, or no mark read yet',
    },
    pnl_pct: { ...num, description: 'net of fees_usd, of slippage_usd for PAPER and of the dust written off; unrealized (at mark_price) while OPEN' },
    gross_pnl_pct: { ...num, description: '(mark_price / entry_price - 1) * 100' },
    fees_usd: num,
    slippage_usd: { ...num, description: 'against the reference prices, positive a cost; PAPER pays it in pnl_pct, LIVE fills already carry it' },
    status: { type: 'string', enum: ['OPEN', 'CLOSED'] },
    opened_at: { type: 'string', format: 'date-time' },
    closed_at: { type: 'string', format: 'date-time', nullable: true },
    source: { type: 'string', enum: ORDER_SOURCES, description: 'who opened the position: api, automation, gateway or alert' },
    gateway_key_id: { type: 'string', nullable: true, description: 'the gateway key whose position it is (only its SELLs close it)' },
    alert_hook_id: { type: 'string', nullable: true, description: 'the alert hook whose position it is' },
    exit_reason: {
      type: 'string',
      nullable: true,
      enum: ['manual', 'signal', 'flatten', 'venue_stop', 'venue_take_profit'],
      description:
        "what closed it: manual (an order by hand), signal (automation or an alert), flatten (the kill switch, or an unprotected pair sold), venue_stop or venue_take_profit (the venue's protection, or Bulwark's own sale standing in for it); null while OPEN, and for trades closed before version 016 by no known order",
    },
    protection: {
      type: 'object',
      nullable: true,
      description: "an OPEN LIVE trade's protection resting on the venue (SPEC 13), shared by every open LIVE trade of its pair; null otherwise",
      required: ['status', 'stop_price', 'take_profit_price', 'venue_order_ids'],
      additionalProperties: false,
      properties: {
        status: { type: 'string', enum: ['NONE', 'PLACING', 'RESTING', 'FAILED'] },
        stop_price: { ...nullableNum, description: 'the stop trigger' },
        take_profit_price: { ...nullableNum, description: 'the take-profit limit (or the mark at which Bulwark sells, where no OCO rests)' },
        venue_order_ids: { type: 'array', items: { type: 'string' }, description: "the venue's ids of the resting orders" },
      },
    },
  },
} as const satisfies Schema
