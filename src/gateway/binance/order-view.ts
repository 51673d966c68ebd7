// Bulwark's orders and fills as Binance writes them (GET /api/v3/order, myTrades, and the answer
// to a new order), and the symbol names both sides use: Binance's BTCUSDT for Bulwark's BTC/USDT,
// as the tenant's venue lists its markets.
import { query, type Queries } from '../../store/store.ts'
import type { VenueFill } from '../../trading/live/live-fills.ts'
import type { VenueAnswer } from '../../trading/live/order-watch.ts'
import type { OrderRow, OrderStatus } from '../../trading/orders.ts'
import type { Exchange } from '../../venues/exchange.ts'
import { BinanceError } from './errors.ts'

/** The venue's market for a Binance symbol; -1121 when the venue has none. */
export async function pairOf(exchange: Exchange, symbol: string): Promise<string> {
  await exchange.loadMarkets()
  const market = (exchange.markets_by_id?.[symbol] as { spot?: boolean; symbol: string }[] | undefined)?.find((m) => m.spot)
  if (!market) throw new BinanceError(-1121, 'Invalid symbol.')
  return market.symbol
}

/** The Binance symbol of a pair: BTCUSDT for BTC/USDT. */
export function symbolOf(exchange: Exchange, pair: string): string {
  return exchange.markets?.[pair]?.id ?? pair.replace('/', '')
}

/** Binance's decimal strings: eight places, as its order answers write them. */
export const decimal = (n: number | null | undefined) => (n ?? 0).toFixed(8)

const STATUS: Record<OrderStatus, string> = {
  // Not on the venue yet, or held there: working either way.
  PENDING: 'NEW',
  OPEN: 'NEW',
  // Sent, and the venue could not be asked since: Bulwark still treats it as working.
  UNKNOWN: 'NEW',
  PARTIALLY_FILLED: 'PARTIALLY_FILLED',
  FILLED: 'FILLED',
  CANCELED: 'CANCELED',
  REJECTED: 'REJECTED',
}

/** An order row as orders_now gives it, with what its fills add up to. */
export type GatewayOrderRow = OrderRow & { venue_order_id: string | null; quote_filled: number }

export const ORDER_COLUMNS = `n.*, coalesce((SELECT sum(f.quantity * f.price) FROM venue_fills f WHERE f.order_id = n.id), 0) AS quote_filled`

/** The venue's order id as Binance's number (-1 while the venue has not acknowledged the order). */
export function orderIdOf(row: Pick<GatewayOrderRow, 'venue_order_id'>): number {
  const id = Number(row.venue_order_id)
  return row.venue_order_id !== null && Number.isSafeInteger(id) ? id : -1
}

/**
 * The order's type as Binance names it: a stop or take-profit (a bot's own, SPEC 14) is a LIMIT or
 * MARKET order of the ledger with a trigger.
 *
 * @example
 * binanceType({ type: 'LIMIT', stop_trigger: 'STOP_LOSS' }) // 'STOP_LOSS_LIMIT'
 */
export function binanceType(row: Pick<OrderRow, 'type' | 'stop_trigger'>): string {
  if (row.stop_trigger === null) return row.type
  return row.type === 'LIMIT' ? `${row.stop_trigger}_LIMIT` : row.stop_trigger
}

/** What an answer shows of an order: its row, or the venue's answer laid over the order as placed. */
export type OrderView = Pick<
  GatewayOrderRow,
  | 'id'
  | 'bot_client_order_id'
  | 'side'
  | 'type'
  | 'quantity'
  | 'notional_usd'
  | 'limit_price'
  | 'stop_price'
  | 'stop_trigger'
  | 'status'
  | 'created_at'
  | 'filled_at'
  | 'canceled_at'
  | 'filled_quantity'
  | 'venue_order_id'
  | 'quote_filled'
>

/**
 * The order as the venue's answer leaves it (orders_now's row once the answer is booked): a bot's
 * answer that does not wait for the booking (relayVenueAnswer).
 *
 * @example
 * answeredView(placed, { venueOrderId: '1001', status: 'FILLED', filled: 0.01, fills }) // { ...placed, status: 'FILLED', venue_order_id: '1001', ... }
 */
export function answeredView(order: Omit<OrderView, 'venue_order_id' | 'quote_filled'>, answer: VenueAnswer): OrderView {
  const { venueOrderId, status, filled, fills } = answer
  return {
    ...order,
    venue_order_id: venueOrderId,
    status,
    filled_quantity: filled,
    quote_filled: fills.reduce((sum, f) => sum + f.amount * f.price, 0),
    // A quote-sized order's quantity is what it filled, once it has.
    quantity: order.quantity ?? (status === 'FILLED' ? filled : null),
  }
}

/** GET /api/v3/order's shape. */
export function binanceOrder(row: OrderView, symbol: string): Record<string, unknown> {
  const time = Date.parse(row.created_at)
  const ended = row.filled_at ?? row.canceled_at
  return {
    symbol,
    orderId: orderIdOf(row),
    orderListId: -1,
    clientOrderId: row.bot_client_order_id ?? row.id,
    price: decimal(row.limit_price),
    origQty: decimal(row.quantity),
    executedQty: decimal(row.filled_quantity),
    cummulativeQuoteQty: decimal(row.quote_filled),
    status: STATUS[row.status],
    timeInForce: 'GTC',
    type: binanceType(row),
    side: row.side,
    stopPrice: decimal(row.stop_price),
    icebergQty: decimal(0),
    time,
    updateTime: ended ? Date.parse(ended) : time,
    isWorking: true,
    workingTime: time,
    origQuoteOrderQty: decimal(row.notional_usd),
    selfTradePreventionMode: 'NONE',
  }
}

export interface FillRow {
  venue_trade_id: string
  order_id: string
  venue_order_id: string | null
  side: 'BUY' | 'SELL'
  quantity: number
  price: number
  fee: number
  fee_asset: string | null
  filled_at: string
}

/** A FillRow's columns and joins: one order's fills here, a key's in GET /api/v3/myTrades. */
export const FILL_ROWS = `SELECT f.venue_trade_id, f.order_id, v.venue_order_id, o.side, f.quantity, f.price, f.fee, f.fee_asset, f.filled_at
  FROM venue_fills f JOIN orders o ON o.id = f.order_id LEFT JOIN venue_orders v ON v.order_id = f.order_id`

const fillsOfOrder = query<[string], FillRow>(`${FILL_ROWS} WHERE f.order_id = ? ORDER BY f.filled_at, f.venue_trade_id`)

/** The fills of one order, oldest first. */
export function fillsOf(db: Queries, orderId: string): Promise<FillRow[]> {
  return db.all(fillsOfOrder, [orderId])
}

/** What a new order's answer shows of a fill. */
export type FillView = Pick<FillRow, 'venue_trade_id' | 'quantity' | 'price' | 'fee' | 'fee_asset'>

/** A fill of the venue's answer as the ledger will keep it. */
export function fillView(fill: VenueFill): FillView {
  return { venue_trade_id: fill.id, quantity: fill.amount, price: fill.price, fee: fill.fee?.cost ?? 0, fee_asset: fill.fee?.currency ?? null }
}

/** One fill as a new order's `fills` entry. */
export function binanceFill(fill: FillView): Record<string, unknown> {
  return {
    price: decimal(fill.price),
    qty: decimal(fill.quantity),
    commission: decimal(fill.fee),
    commissionAsset: fill.fee_asset ?? '',
    tradeId: Number(fill.venue_trade_id),
  }
}

/** One fill as GET /api/v3/myTrades writes it. */
export function binanceTrade(fill: FillRow, symbol: string): Record<string, unknown> {
  return {
    symbol,
    id: Number(fill.venue_trade_id),
    orderId: orderIdOf(fill),
    orderListId: -1,
    price: decimal(fill.price),
    qty: decimal(fill.quantity),
    quoteQty: decimal(fill.price * fill.quantity),
    commission: decimal(fill.fee),
    commissionAsset: fill.fee_asset ?? '',
    time: Date.parse(fill.filled_at),
    isBuyer: fill.side === 'BUY',
    // The ledger does not keep maker or taker; Bulwark's orders take liquidity unless they rest.
    isMaker: false,
    isBestMatch: true,
  }
}
