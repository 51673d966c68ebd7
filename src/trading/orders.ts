// Orders (the pre-trade checks are ./pre-trade.ts). Table orders (sql/003_orders.sql): seq, id, tenant_id, model_id,
// pair, side, type, quantity, notional_usd, limit_price, reference_price, reference_date, status,
// created_at, filled_at, canceled_at, canceled_by, fill_price, fees_usd, slippage_usd, trade_id,
// mode, filled_quantity, reject_reason (sql/011_live_orders.sql), source, gateway_key_id,
// alert_hook_id (sql/015_live_ledger.sql), bot_client_order_id (sql/019), stop_price and stop_trigger
// (sql/020_gateway_stops.sql: a bot's stop or take-profit SELL through the gateway). Reads go through the views
// pending_orders and orders_now, which apply the kill switch's cancellation fences
// (src/trading/cancellations.ts) before their rows are settled, and show a LIVE order the venue
// holds as OPEN or PARTIALLY_FILLED (UNKNOWN while it cannot be asked). A LIVE order is also queued for the venue (./live/outbox.ts).
//
// Positions are LONG only: a BUY opens a new trade (a position), a SELL only ever reduces open
// trades of its pair, so every SELL is reduce-only and every BUY opens and grows exposure.
import { newId } from '../store/ids.ts'
import { query, type Queries, type Tx } from '../store/store.ts'
import { DomainError, validationError } from '../shared/errors.ts'
import type { FromSchema } from 'json-schema-to-ts'
import type { orderInputSchema, orderSchema } from './order-schema.ts'
import { recordEvent } from '../webhooks/events.ts'
import { queueLiveOrder, requestLiveCancel } from './live/outbox.ts'
import { holdTenant } from '../tenants/tenants.ts'

export { ORDER_SOURCES, ORDER_STATUSES, orderInputSchema, orderSchema } from './order-schema.ts'

/** What the API shows and events carry of an order. */
export type Order = FromSchema<typeof orderSchema>
/** The body of POST /api/v1/orders, and what the automation places. */
export type OrderInput = FromSchema<typeof orderInputSchema>
export type OrderSide = Order['side']
export type OrderType = Order['type']
export type OrderStatus = Order['status']
export type OrderMode = Order['mode']
export type OrderSource = Order['source']
/** What a stop or take-profit order waits for: the price falling to (STOP_LOSS) or rising to (TAKE_PROFIT) its stop_price. */
export type StopTrigger = NonNullable<Order['stop_trigger']>

export interface OrderRow {
  seq: number
  id: string
  tenant_id: string
  model_id: string | null
  pair: string
  side: OrderSide
  type: OrderType
  quantity: number | null
  notional_usd: number | null
  limit_price: number | null
  reference_price: number
  reference_date: string
  status: OrderStatus
  created_at: string
  filled_at: string | null
  canceled_at: string | null
  canceled_by: string | null
  fill_price: number | null
  fees_usd: number | null
  slippage_usd: number | null
  trade_id: string | null
  mode: OrderMode
  filled_quantity: number
  reject_reason: string | null
  source: OrderSource
  gateway_key_id: string | null
  alert_hook_id: string | null
  bot_client_order_id: string | null
  /** A stop or take-profit's trigger (a gateway bot's own, SPEC 14); null for every other order. */
  stop_price: number | null
  stop_trigger: StopTrigger | null
  /** The venue's id of a LIVE order it holds or held (orders_now only). */
  venue_order_id?: string | null
}

export function toOrder(row: OrderRow): Order {
  return {
    id: row.id,
    pair: row.pair,
    side: row.side,
    type: row.type,
    quantity: row.quantity,
    notional_usd: row.notional_usd,
    limit_price: row.limit_price,
    model_id: row.model_id,
    status: row.status,
    reduce_only: row.side === 'SELL',
    created_at: row.created_at,
    filled_at: row.filled_at,
    canceled_at: row.canceled_at,
    fill_price: row.fill_price,
    fees_usd: row.fees_usd,
    slippage_usd: row.slippage_usd,
    trade_id: row.trade_id,
    mode: row.mode,
    client_order_id: row.id,
    filled_quantity: row.filled_quantity,
    reject_reason: row.reject_reason,
    reference_price: row.reference_price,
    source: row.source,
    gateway_key_id: row.gateway_key_id,
    alert_hook_id: row.alert_hook_id,
    bot_client_order_id: row.bot_client_order_id,
    stop_price: row.stop_price,
    stop_trigger: row.stop_trigger,
  }
}

const insertOrder = query<
  Record<string, unknown>,
  { seq: number }
>(`INSERT INTO orders (id, tenant_id, model_id, pair, side, type, quantity, notional_usd, limit_price,
  reference_price, reference_date, status, created_at, mode, source, gateway_key_id, alert_hook_id, bot_client_order_id, stop_price, stop_trigger)
  VALUES (@id, @tenant_id, @model_id, @pair, @side, @type, @quantity, @notional_usd, @limit_price, @reference_price, @reference_date, 'PENDING',
  @created_at, @mode, @source, @gateway_key_id, @alert_hook_id, @bot_client_order_id, @stop_price, @stop_trigger) RETURNING seq`)
const orderById = query<[string, string], OrderRow>('SELECT * FROM orders_now WHERE id = ? AND tenant_id = ?')
const cancelOne = query<[string, string, string], OrderRow>(
  "UPDATE orders SET status = 'CANCELED', canceled_at = ?, canceled_by = 'api' WHERE seq = (SELECT seq FROM pending_orders WHERE id = ? AND tenant_id = ? AND mode = 'PAPER') RETURNING *",
)
const tenantOrders = query<Record<string, unknown>, OrderRow>(`
  SELECT * FROM orders_now WHERE tenant_id = @tenant AND id < @before
    AND (CAST(@status AS TEXT) IS NULL OR status = @status) AND (CAST(@pair AS TEXT) IS NULL OR pair = @pair)
    AND (CAST(@model AS TEXT) IS NULL OR model_id = @model) AND (CAST(@since AS TEXT) IS NULL OR created_at >= @since)
  ORDER BY id DESC LIMIT @limit`)

export async function orderRow(db: Queries, tenantId: string, id: string): Promise<OrderRow | undefined> {
  return db.get(orderById, [id, tenantId])
}

export async function getOrder(db: Queries, tenantId: string, id: string): Promise<Order> {
  const row = await orderRow(db, tenantId, id)
  if (!row) throw new DomainError('not_found', `order ${id} not found`)
  return toOrder(row)
}

export interface OrderFilter {
  tenantId: string
  before: string
  limit: number
  status?: OrderStatus
  pair?: string
  modelId?: string
  since?: string
}

export async function ordersFor(db: Queries, f: OrderFilter): Promise<Order[]> {
  const rows = await db.all(tenantOrders, {
    tenant: f.tenantId,
    before: f.before,
    limit: f.limit,
    status: f.status ?? null,
    pair: f.pair ?? null,
    model: f.modelId ?? null,
    since: f.since ?? null,
  })
  return rows.map(toOrder)
}

/** Who placed an order: the API's caller, the automation, the kill switch (FLATTEN), a gateway key or an alert hook. */
export interface OrderOrigin {
  source: OrderSource
  gateway_key_id?: string
  alert_hook_id?: string
  /** A gateway order's newClientOrderId, as the bot sent it. */
  bot_client_order_id?: string
  /** A gateway bot's stop or take-profit SELL: the venue holds it until the price reaches `price`. */
  stop?: { trigger: StopTrigger; price: number }
}

/**
 * Writes a PENDING order and its order.created event; checks are the caller's. A LIVE order is
 * queued for the venue in the same transaction (`exchange`: the tenant's venue account's).
 * `reference` is the price the checks used (a LIVE order's: the venue's) and the candle date the
 * paper broker fills after.
 */
export async function insertPendingOrder(
  tx: Tx,
  tenantId: string,
  fields: Pick<OrderRow, 'model_id' | 'pair' | 'side' | 'type' | 'quantity' | 'notional_usd' | 'limit_price'>,
  reference: { close: number; date: string },
  now: Date,
  origin: OrderOrigin,
  live?: { exchange: string },
): Promise<OrderRow> {
  const id = newId('ord')
  // The new row as orders_now shows it, built rather than read back through the view: a PENDING
  // order written now is behind no cancellation fence and has no venue id yet.
  const written = {
    ...fields,
    id,
    tenant_id: tenantId,
    reference_price: reference.close,
    reference_date: reference.date,
    status: 'PENDING' as const,
    created_at: now.toISOString(),
    mode: live ? ('LIVE' as const) : ('PAPER' as const),
    source: origin.source,
    gateway_key_id: origin.gateway_key_id ?? null,
    alert_hook_id: origin.alert_hook_id ?? null,
    bot_client_order_id: origin.bot_client_order_id ?? null,
    stop_price: origin.stop?.price ?? null,
    stop_trigger: origin.stop?.trigger ?? null,
  }
  const { seq } = (await tx.get(insertOrder, written))!
  if (live) await queueLiveOrder(tx, tenantId, id, live.exchange, now)
  const row: OrderRow = {
    ...written,
    seq,
    filled_at: null,
    canceled_at: null,
    canceled_by: null,
    fill_price: null,
    fees_usd: null,
    slippage_usd: null,
    trade_id: null,
    filled_quantity: 0,
    reject_reason: null,
    venue_order_id: null,
  }
  await recordEvent(tx, tenantId, 'order.created', { ...toOrder(row) }, now)
  return row
}

/**
 * Cancels one PENDING order; canceling a CANCELED one again answers it unchanged. A working LIVE
 * order is answered as it stands: its cancel goes to the venue after commit, and the venue's answer
 * ends it (CANCELED, or FILLED when a fill came first).
 */
export async function cancelOrder(tx: Tx, tenantId: string, id: string, now: Date): Promise<Order> {
  return tx.savepoint(async () => {
    // On PostgreSQL, after any kill switch of the tenant that commits first, as its orders are: a
    // cancel that read the order as pending before that switch's fence committed would take the
    // order from the switch after the switch had counted it (SQLite runs one change at a time).
    await holdTenant(tx, tenantId, 'update')
    const live = await orderRow(tx, tenantId, id)
    if (live?.mode === 'LIVE' && ['PENDING', 'OPEN', 'PARTIALLY_FILLED'].includes(live.status)) {
      await requestLiveCancel(tx, tenantId, id, 'api', now)
      return toOrder(live)
    }
    const row = await tx.get(cancelOne, [now.toISOString(), id, tenantId])
    if (row) {
      const order = toOrder(row)
      await recordEvent(tx, tenantId, 'order.canceled', { ...order }, now)
      return order
    }
    const order = await getOrder(tx, tenantId, id)
    if (order.status === 'CANCELED') return order
    throw validationError('id', `order ${id} is ${order.status}; only PENDING orders can be canceled`)
  })
}
