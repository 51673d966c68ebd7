// The orders a gateway key sees: those placed through it, and no other (SPEC 14: a key is like a
// sub-account). Every query is bound to the key's tenant and the key.
import { query, type Queries } from '../../store/store.ts'
import type { GatewayKey } from '../keys.ts'
import { ORDER_COLUMNS, type GatewayOrderRow } from './order-view.ts'

/** The key's own LIVE orders, its key column written as given (`+n.gateway_key_id` keeps SQLite off its index). */
const own = (keyColumn = 'n.gateway_key_id') => `n.tenant_id = @tenant AND ${keyColumn} = @key AND n.mode = 'LIVE'`
const OWN = own()

// Started from the venue's id (its index), not from the key's orders: SQLite, without statistics,
// would walk every order the key ever placed through its index on gateway_key_id (a unary plus
// keeps it off that index; PostgreSQL plans by its statistics, and has no unary plus on text).
const byVenueIdWhere = (keyColumn: string) =>
  `${own(keyColumn)} AND n.pair = @pair
   AND n.id IN (SELECT v.order_id FROM venue_orders v WHERE v.venue_order_id = @venue AND v.tenant_id = @tenant)`
const byVenueId = query<{ tenant: string; key: string; pair: string; venue: string }, GatewayOrderRow>({
  sqlite: `SELECT ${ORDER_COLUMNS} FROM orders_now n WHERE ${byVenueIdWhere('+n.gateway_key_id')}`,
  postgres: `SELECT ${ORDER_COLUMNS} FROM orders_now n WHERE ${byVenueIdWhere('n.gateway_key_id')}`,
})
// The bot's own id names its newest order: Binance's client ids are unique among open orders only.
const byClientId = query<{ tenant: string; key: string; pair: string; client: string }, GatewayOrderRow>(
  `SELECT ${ORDER_COLUMNS} FROM orders_now n WHERE ${OWN} AND n.pair = @pair AND (n.bot_client_order_id = @client OR n.id = @client)
   ORDER BY n.seq DESC LIMIT 1`,
)
const byId = query<{ tenant: string; key: string; id: string }, GatewayOrderRow>(`SELECT ${ORDER_COLUMNS} FROM orders_now n WHERE ${OWN} AND n.id = @id`)
const working = query<{ tenant: string; key: string; pair: string | null }, GatewayOrderRow>(`
  SELECT ${ORDER_COLUMNS} FROM orders_now n WHERE ${OWN} AND (CAST(@pair AS TEXT) IS NULL OR n.pair = @pair)
    AND n.status IN ('PENDING', 'OPEN', 'PARTIALLY_FILLED', 'UNKNOWN')
  ORDER BY n.seq`)
const openWithClientId = query<{ key: string; client: string }, { id: string }>(
  `SELECT id FROM orders WHERE gateway_key_id = @key AND bot_client_order_id = @client AND status = 'PENDING'`,
)
const history = query<{ tenant: string; key: string; pair: string; from: number; start: string | null; end: string | null; limit: number }, GatewayOrderRow>(`
  SELECT ${ORDER_COLUMNS} FROM orders_now n WHERE ${OWN} AND n.pair = @pair
    AND (CAST(@start AS TEXT) IS NULL OR n.created_at >= @start) AND (CAST(@end AS TEXT) IS NULL OR n.created_at <= @end)
    AND (@from = 0 OR CAST(n.venue_order_id AS BIGINT) >= @from)
  ORDER BY n.seq LIMIT @limit`)

const scope = (key: GatewayKey) => ({ tenant: key.tenantId, key: key.id })

/** The key's order named by the venue's orderId or the bot's client order id. */
export function findKeyOrder(db: Queries, key: GatewayKey, pair: string, ref: { orderId?: number; clientId?: string }): Promise<GatewayOrderRow | undefined> {
  if (ref.orderId !== undefined) return db.get(byVenueId, { ...scope(key), pair, venue: String(ref.orderId) })
  return db.get(byClientId, { ...scope(key), pair, client: ref.clientId! })
}

export function keyOrderById(db: Queries, key: GatewayKey, id: string): Promise<GatewayOrderRow | undefined> {
  return db.get(byId, { ...scope(key), id })
}

/** The key's working orders, of one pair or all. */
export function workingKeyOrders(db: Queries, key: GatewayKey, pair: string | null): Promise<GatewayOrderRow[]> {
  return db.all(working, { ...scope(key), pair })
}

/** True while an order of the key with this client order id is still working. */
export async function clientIdInUse(db: Queries, key: GatewayKey, clientId: string): Promise<boolean> {
  return (await db.get(openWithClientId, { key: key.id, client: clientId })) !== undefined
}

export interface HistoryQuery {
  pair: string
  fromOrderId?: number
  start?: Date
  end?: Date
  limit: number
}

/** allOrders: the key's orders of a pair, oldest first. */
export function keyOrderHistory(db: Queries, key: GatewayKey, q: HistoryQuery): Promise<GatewayOrderRow[]> {
  return db.all(history, {
    ...scope(key),
    pair: q.pair,
    from: q.fromOrderId ?? 0,
    start: q.start?.toISOString() ?? null,
    end: q.end?.toISOString() ?? null,
    limit: q.limit,
  })
}
