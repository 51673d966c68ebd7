// The control API the tests drive the venue with: prices, balances, keys, fills, foreign orders,
// what the venue holds and received, faults, the weight limit and the clock. Every method is async
// and takes and returns plain JSON, so the same calls work in-process and over the child's IPC.
import { DEFAULT_RESTRICTIONS, type Restrictions } from './auth.ts'
import { isAlgo, isOpen, type Order, type OrderList, type OrderType, type Side, type TimeInForce } from './book.ts'
import { VenueError } from './errors.ts'
import type { Fault } from './faults.ts'
import { klineRow } from './market-data.ts'
import { listJson } from './list-routes.ts'
import { orderJson, tradeJson } from './order-routes.ts'
import type { VenueState } from './routes.ts'
import type { RequestRecord, VenueServer } from './server.ts'
import { findSymbol, fmt, units } from './symbols.ts'

export type Amount = number | string

/** An order by symbol and venue id, or by client order id (the newest with it). */
export type OrderRef = { symbol: string; orderId: number } | { clientOrderId: string; symbol?: string; account?: string }

export interface KeySpec {
  apiKey: string
  secret: string
  account?: string
  restrictions?: Partial<Restrictions>
}

export interface InjectedOrder {
  symbol: string
  side: Side
  type?: OrderType
  quantity: Amount
  price?: Amount
  /** For STOP_LOSS, STOP_LOSS_LIMIT, TAKE_PROFIT and TAKE_PROFIT_LIMIT. */
  stopPrice?: Amount
  timeInForce?: TimeInForce
  clientOrderId?: string
  account?: string
}

/** An order list by symbol and id, or by list client order id (the newest with it). */
export type OrderListRef = { symbol: string; orderListId: number } | { listClientOrderId: string; symbol?: string; account?: string }

/** An order or trade as Binance shows it, plus whose it is (and whether a test placed it). */
export type OrderView = Record<string, unknown> & { account: string; foreign: boolean }
export type TradeView = Record<string, unknown> & { account: string }
/** An order list as GET /api/v3/orderList shows it, plus whose it is and its legs as orders. */
export type OrderListView = Record<string, unknown> & { account: string; legs: OrderView[] }

export function controlApi(state: VenueState, server: VenueServer, clock: { offsetMs: number }) {
  const { book, market, symbols, keys } = state
  const view = (o: Order): OrderView => ({ ...orderJson(o), account: o.account, foreign: o.foreign })
  const trades = (list: typeof book.trades) => list.map((t): TradeView => ({ ...tradeJson(t), account: t.account }))
  const find = (ref: OrderRef): Order => {
    const order =
      'orderId' in ref
        ? book.orders.find((o) => o.orderId === ref.orderId && o.symbol === findSymbol(symbols, ref.symbol))
        : book.orders.findLast(
            (o) =>
              o.clientOrderId === ref.clientOrderId &&
              (!ref.symbol || o.symbol === findSymbol(symbols, ref.symbol)) &&
              (!ref.account || o.account === ref.account),
          )
    if (!order) throw new Error(`test venue: no order ${JSON.stringify(ref)}`)
    return order
  }
  const listView = (l: OrderList): OrderListView => ({ ...listJson(l), account: l.account, legs: l.orders.map(view) })
  const findList = (ref: OrderListRef): OrderList => {
    const list =
      'orderListId' in ref
        ? book.lists.find((l) => l.orderListId === ref.orderListId && l.symbol === findSymbol(symbols, ref.symbol))
        : book.lists.findLast(
            (l) =>
              l.listClientOrderId === ref.listClientOrderId &&
              (!ref.symbol || l.symbol === findSymbol(symbols, ref.symbol)) &&
              (!ref.account || l.account === ref.account),
          )
    if (!list) throw new Error(`test venue: no order list ${JSON.stringify(ref)}`)
    return list
  }
  return {
    /** Sets the last price: stops it reaches trigger, resting LIMIT orders it crosses fill at their own price. */
    async setPrice(symbol: string, price: Amount): Promise<TradeView[]> {
      return trades(book.moveTo(findSymbol(symbols, symbol), units(price)))
    },
    async lastPrice(symbol: string): Promise<string> {
      return fmt(market.last(findSymbol(symbols, symbol)))
    },
    /** How taker orders fill on a symbol: in `fillParts` fills, at most `liquidity` base asset (the rest EXPIRES). */
    async setDepth(symbol: string, depth: { fillParts?: number; liquidity?: Amount }): Promise<void> {
      const s = findSymbol(symbols, symbol)
      book.depth.set(s.id, { fillParts: depth.fillParts ?? 1, liquidity: depth.liquidity === undefined ? undefined : units(depth.liquidity) })
    },
    /** Sets the free amount of each asset named (locked amounts stay). */
    async setBalances(balances: Record<string, Amount>, account = 'main'): Promise<void> {
      for (const [asset, amount] of Object.entries(balances)) book.balance(account, asset).free = units(amount)
      book.account(account).updateTime = state.now()
    },
    async balances(account = 'main'): Promise<Record<string, { free: string; locked: string }>> {
      const all = book.account(account).balances
      return Object.fromEntries([...all].map(([asset, b]) => [asset, { free: fmt(b.free), locked: fmt(b.locked) }]))
    },
    /** The account's own flags (GET /api/v3/account): canTrade, canWithdraw, canDeposit. */
    async setAccount(flags: { canTrade?: boolean; canWithdraw?: boolean; canDeposit?: boolean }, account = 'main'): Promise<void> {
      Object.assign(book.account(account), flags)
    },
    async addKey(spec: KeySpec): Promise<void> {
      const restrictions = { ...DEFAULT_RESTRICTIONS, ...spec.restrictions }
      keys.set(spec.apiKey, { apiKey: spec.apiKey, secret: spec.secret, account: spec.account ?? 'main', restrictions, createTime: state.now() })
    },
    async setRestrictions(apiKey: string, restrictions: Partial<Restrictions>): Promise<void> {
      const key = keys.get(apiKey)
      if (!key) throw new Error(`test venue: no key ${apiKey}`)
      key.restrictions = { ...key.restrictions, ...restrictions }
    },
    /** Fills part (or the rest) of a resting order at its own price, as a maker. */
    async fillOrder(ref: OrderRef, quantity?: Amount): Promise<TradeView[]> {
      const order = find(ref)
      if (!isOpen(order)) throw new Error(`test venue: order ${order.orderId} is ${order.status}`)
      const qty = quantity === undefined ? order.origQty - order.executedQty : units(quantity)
      if (qty <= 0n || qty > order.origQty - order.executedQty) throw new Error(`test venue: cannot fill ${fmt(qty)} of order ${order.orderId}`)
      return trades([book.fill(order, qty, order.price, true)])
    },
    /** An order "from elsewhere" (the venue's web page, another bot): placed as any order is. */
    async injectOrder(spec: InjectedOrder): Promise<OrderView> {
      const type = spec.type ?? 'LIMIT'
      try {
        const { order } = book.place({
          account: spec.account ?? 'main',
          symbol: findSymbol(symbols, spec.symbol),
          side: spec.side,
          type,
          timeInForce: spec.timeInForce ?? 'GTC',
          quantity: units(spec.quantity),
          price: spec.price === undefined ? undefined : units(spec.price),
          stopPrice: spec.stopPrice === undefined ? undefined : units(spec.stopPrice),
          clientOrderId: spec.clientOrderId ?? `web_${book.orders.length + 1}`,
          foreign: true,
        })
        return view(order)
      } catch (error) {
        throw error instanceof VenueError ? new Error(`test venue: ${error.message}`) : error
      }
    },
    /** Cancels an order "by hand on the exchange"; a leg of an executing OCO list cancels the whole list, as on Binance. */
    async cancelOrder(ref: OrderRef): Promise<OrderView> {
      const order = find(ref)
      const list = book.listOf(order)
      if (list) book.cancelList(list)
      else if (isOpen(order)) book.finish(order, 'CANCELED')
      return view(order)
    },
    /** Cancels an OCO list "by hand on the exchange" (both legs CANCELED, the list ALL_DONE). */
    async cancelOrderList(ref: OrderListRef): Promise<OrderListView> {
      const list = findList(ref)
      if (list.listStatusType !== 'ALL_DONE') book.cancelList(list)
      return listView(list)
    },
    /** Orders; `algo: true` keeps the stop-loss and take-profit ones (MAX_NUM_ALGO_ORDERS counts those). */
    async orders(filter: { symbol?: string; account?: string; open?: boolean; clientOrderId?: string; algo?: boolean } = {}): Promise<OrderView[]> {
      const s = filter.symbol === undefined ? undefined : findSymbol(symbols, filter.symbol)
      return book.orders
        .filter((o) => (!s || o.symbol === s) && (!filter.account || o.account === filter.account) && (filter.open === undefined || isOpen(o) === filter.open))
        .filter((o) => filter.clientOrderId === undefined || o.clientOrderId === filter.clientOrderId)
        .filter((o) => filter.algo === undefined || isAlgo(o.type) === filter.algo)
        .map(view)
    },
    /** OCO order lists; `open: true` keeps the executing ones. */
    async orderLists(filter: { symbol?: string; account?: string; open?: boolean } = {}): Promise<OrderListView[]> {
      const s = filter.symbol === undefined ? undefined : findSymbol(symbols, filter.symbol)
      return book.lists
        .filter((l) => (!s || l.symbol === s) && (!filter.account || l.account === filter.account))
        .filter((l) => filter.open === undefined || (l.listStatusType !== 'ALL_DONE') === filter.open)
        .map(listView)
    },
    async trades(filter: { symbol?: string; account?: string } = {}): Promise<TradeView[]> {
      const s = filter.symbol === undefined ? undefined : findSymbol(symbols, filter.symbol)
      return trades(book.trades.filter((t) => (!s || t.symbol === s) && (!filter.account || t.account === filter.account)))
    },
    /** Every request received, oldest first (or those to one method and path). */
    async requests(filter: { method?: string; path?: string } = {}): Promise<RequestRecord[]> {
      return server.requests.filter((r) => (!filter.method || r.method === filter.method) && (!filter.path || r.path === filter.path))
    },
    async clearRequests(): Promise<void> {
      server.requests.length = 0
    },
    async fault(fault: Fault): Promise<void> {
      server.faults.add(fault)
    },
    async clearFaults(): Promise<void> {
      server.faults.clear()
    },
    /** Closes the listener and every connection (connection refused) until up(). */
    async down(): Promise<void> {
      await server.down()
    },
    async up(): Promise<void> {
      await server.up()
    },
    async setRateLimit(limit: { weight: number; windowMs?: number }): Promise<void> {
      state.limiter.limit = limit.weight
      state.limiter.windowMs = limit.windowMs ?? 60_000
      state.limiter.reset()
    },
    async resetRateLimit(): Promise<void> {
      state.limiter.reset()
    },
    /** Shifts the venue's clock (serverTime, the recvWindow check, order and trade times). */
    async setClockOffset(ms: number): Promise<void> {
      clock.offsetMs = ms
    },
    /** Every daily kline served (closed ones, then today's forming one), as GET /api/v3/klines rows. */
    async candles(symbol: string): Promise<unknown[][]> {
      return market.candles(findSymbol(symbols, symbol)).map(klineRow)
    },
  }
}

export type VenueControl = ReturnType<typeof controlApi>
