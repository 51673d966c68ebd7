// Accounts, orders and matching, deterministic and driven by the tests: each symbol has one last
// price (set through the control API). A MARKET order, or a LIMIT order that crosses the last price,
// fills at once at that price (in `fillParts` fills, up to `liquidity`); any other LIMIT order rests
// until the price moves across it (it then fills at its own price, as a maker) or a test fills part
// of it. Commission is taken from the asset received, as on Binance spot: a BUY pays it in the base
// asset, so the account holds less than it bought. Orders lock what they may spend; a cancel frees it.
// Stop-loss and take-profit orders (rest-api.md "New order", enums.md) rest un-triggered until the
// last price reaches their stop price, then work as a MARKET order (filled at the last price) or,
// the _LIMIT kinds, as a LIMIT order at their price (which rests when the price gapped through it).
// An OCO order list (rest-api.md "Order lists") locks its quantity once: its first leg to trigger or
// fill expires the other and ends the list.
import { VenueError } from './errors.ts'
import type { MarketData } from './market-data.ts'
import { Accounts } from './accounts.ts'
import { failure, floorTo, larger, mul, orderQuantity, smaller, type VenueSymbol } from './symbols.ts'

export type Side = 'BUY' | 'SELL'
export type OrderType = 'LIMIT' | 'LIMIT_MAKER' | 'MARKET' | 'STOP_LOSS' | 'STOP_LOSS_LIMIT' | 'TAKE_PROFIT' | 'TAKE_PROFIT_LIMIT'
/** "Algo" orders (filters.md MAX_NUM_ALGO_ORDERS). */
export const ALGO_TYPES: OrderType[] = ['STOP_LOSS', 'STOP_LOSS_LIMIT', 'TAKE_PROFIT', 'TAKE_PROFIT_LIMIT']
export const isAlgo = (type: OrderType) => ALGO_TYPES.includes(type)
/** The kinds that work as a MARKET order once triggered. */
const marketKind = (type: OrderType) => type === 'MARKET' || type === 'STOP_LOSS' || type === 'TAKE_PROFIT'
export type TimeInForce = 'GTC' | 'IOC' | 'FOK'
export type OrderStatus = 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED' | 'EXPIRED'

export interface Order {
  orderId: number
  symbol: VenueSymbol
  account: string
  clientOrderId: string
  side: Side
  type: OrderType
  timeInForce: TimeInForce
  /** 0 for MARKET orders. */
  price: bigint
  origQty: bigint
  origQuoteOrderQty: bigint
  executedQty: bigint
  cumQuote: bigint
  status: OrderStatus
  time: number
  updateTime: number
  /** What the order still holds of the account's balance (quote for a BUY, base for a SELL). */
  locked: bigint
  tradeIds: number[]
  /** Placed through the control API: an order "from elsewhere" (the venue's web page, another bot). */
  foreign: boolean
  /** The trigger of a stop-loss or take-profit order; 0 for the others. */
  stopPrice: bigint
  /** When the order went on the book (-1 while a stop waits for its trigger), as `workingTime` shows it. */
  workingTime: number
  /** The OCO list the order is a leg of; -1 for none. */
  orderListId: number
}

export interface OrderList {
  orderListId: number
  contingencyType: 'OCO'
  listClientOrderId: string
  symbol: VenueSymbol
  account: string
  /** The legs, below order first (as rest-api.md's examples list them). */
  orders: Order[]
  listStatusType: 'EXEC_STARTED' | 'ALL_DONE'
  listOrderStatus: 'EXECUTING' | 'ALL_DONE'
  transactionTime: number
}

/** One leg of a new OCO list. */
export interface NewLeg {
  type: OrderType
  price?: bigint
  stopPrice?: bigint
  timeInForce: TimeInForce
  clientOrderId: string
}

export interface Trade {
  id: number
  symbol: VenueSymbol
  orderId: number
  orderListId: number
  account: string
  price: bigint
  qty: bigint
  quoteQty: bigint
  commission: bigint
  commissionAsset: string
  time: number
  isBuyer: boolean
  isMaker: boolean
}

export interface NewOrder {
  account: string
  symbol: VenueSymbol
  side: Side
  type: OrderType
  timeInForce: TimeInForce
  quantity?: bigint
  quoteOrderQty?: bigint
  price?: bigint
  stopPrice?: bigint
  clientOrderId: string
  foreign?: boolean
}

/** How a symbol's taker orders fill: in this many equal fills, up to this much base asset. */
export interface Depth {
  fillParts: number
  liquidity?: bigint
}

/** -2010 for a type the symbol's `orderTypes` lacks (errors.md, messages for -2010). */
const UNSUPPORTED: Partial<Record<OrderType, string>> = {
  MARKET: 'Market orders are not supported for this symbol.',
  STOP_LOSS: 'Stop loss orders are not supported for this symbol.',
  STOP_LOSS_LIMIT: 'Stop loss limit orders are not supported for this symbol.',
  TAKE_PROFIT: 'Take profit orders are not supported for this symbol.',
  TAKE_PROFIT_LIMIT: 'Take profit limit orders are not supported for this symbol.',
}

const insufficient = () => new VenueError(-2010, 'Account has insufficient balance for requested action.')
export const isOpen = (o: Order) => o.status === 'NEW' || o.status === 'PARTIALLY_FILLED'
const isWaiting = (o: Order) => isOpen(o) && o.workingTime === -1

/**
 * Whether a stop price is reached at this last price (rest-api.md "Trigger order price rules":
 * a STOP_LOSS SELL and a TAKE_PROFIT BUY sit below the market, a STOP_LOSS BUY and a TAKE_PROFIT SELL above).
 */
export function triggered(type: OrderType, side: Side, stopPrice: bigint, last: bigint): boolean {
  const below = type.startsWith('STOP_LOSS') === (side === 'SELL')
  return below ? last <= stopPrice : last >= stopPrice
}

export class Book extends Accounts {
  readonly orders: Order[] = []
  readonly trades: Trade[] = []
  readonly lists: OrderList[] = []
  readonly depth = new Map<string, Depth>()
  private readonly ids = new Map<string, number>()

  constructor(
    private readonly market: MarketData,
    now: () => number,
    /** Commission per unit traded, in 1e-8 (0.1% = 100_000n). */
    private readonly commissionRate: bigint,
  ) {
    super(now)
  }

  /** Order and trade ids count per symbol, as Binance's do: an order id alone names no order. */
  private nextId(kind: string, symbol: VenueSymbol): number {
    const key = `${kind} ${symbol.id}`
    const id = this.ids.get(key) ?? (kind === 'order' ? 1000 : 5000)
    this.ids.set(key, id + 1)
    return id
  }

  /** The checks every new order passes: trading allowed, a client order id not in use, the filters. */
  private admit(n: NewOrder, type: OrderType, price: bigint | undefined, stopPrice: bigint | undefined): bigint {
    const s = n.symbol
    const account = this.account(n.account)
    if (!account.canTrade) throw new VenueError(-2010, 'This account may not place or cancel orders.')
    if (this.orders.some((o) => isOpen(o) && o.account === n.account && o.clientOrderId === n.clientOrderId)) {
      throw new VenueError(-2010, 'Duplicate order sent.')
    }
    const last = this.market.last(s)
    const quantity = orderQuantity(s, { ...n, type, price, stopPrice }, last)
    if (stopPrice !== undefined && triggered(type, n.side, stopPrice, last)) throw new VenueError(-2010, 'Order would trigger immediately.')
    return quantity
  }

  /** What an order locks: the base asset of a SELL, the quote asset a BUY may spend. */
  private spend(side: Side, type: OrderType, quantity: bigint, price: bigint, stopPrice: bigint, last: bigint, quoteOrderQty?: bigint): bigint {
    if (side === 'SELL') return quantity
    if (type === 'MARKET') return quoteOrderQty ?? mul(last, quantity)
    return mul(marketKind(type) ? stopPrice : price, quantity)
  }

  /** Open stop-loss and take-profit orders of an account on a symbol, against MAX_NUM_ALGO_ORDERS. */
  private checkAlgoCount(account: string, s: VenueSymbol, adding: number): void {
    const open = this.orders.filter((o) => o.account === account && o.symbol === s && isOpen(o) && isAlgo(o.type)).length
    if (adding > 0 && open + adding > s.maxNumAlgoOrders) throw failure('MAX_NUM_ALGO_ORDERS')
  }

  private newOrder(
    n: NewOrder,
    type: OrderType,
    leg: { price: bigint; stopPrice: bigint; timeInForce: TimeInForce; clientOrderId: string },
    quantity: bigint,
  ): Order {
    const time = this.now()
    return {
      orderId: this.nextId('order', n.symbol),
      symbol: n.symbol,
      account: n.account,
      clientOrderId: leg.clientOrderId,
      side: n.side,
      type,
      timeInForce: leg.timeInForce,
      price: leg.price,
      origQty: quantity,
      origQuoteOrderQty: n.quoteOrderQty ?? 0n,
      executedQty: 0n,
      cumQuote: 0n,
      status: 'NEW',
      time,
      updateTime: time,
      locked: 0n,
      tradeIds: [],
      foreign: n.foreign ?? false,
      stopPrice: leg.stopPrice,
      workingTime: isAlgo(type) ? -1 : time,
      orderListId: -1,
    }
  }

  private lock(order: Order, amount: bigint): void {
    const s = order.symbol
    const funds = this.balance(order.account, order.side === 'BUY' ? s.quote : s.base)
    funds.free -= amount
    funds.locked += amount
    order.locked += amount
  }

  place(n: NewOrder): { order: Order; fills: Trade[] } {
    const s = n.symbol
    const type = n.type
    if (!s.orderTypes.includes(type)) throw new VenueError(-2010, UNSUPPORTED[type] ?? 'Unsupported order combination')
    const quantity = this.admit(n, type, n.price, n.stopPrice)
    const last = this.market.last(s)
    const price = n.price ?? 0n
    const stopPrice = n.stopPrice ?? 0n
    const crosses = type === 'MARKET' || ((type === 'LIMIT' || type === 'LIMIT_MAKER') && (n.side === 'BUY' ? price >= last : price <= last))
    if (type === 'LIMIT_MAKER' && crosses) throw new VenueError(-2010, 'Order would immediately match and take.')
    const spend = this.spend(n.side, type, quantity, price, stopPrice, last, n.quoteOrderQty)
    if (this.balance(n.account, n.side === 'BUY' ? s.quote : s.base).free < spend) throw insufficient()
    this.checkAlgoCount(n.account, s, isAlgo(type) ? 1 : 0)
    const order = this.newOrder(n, type, { price, stopPrice, timeInForce: n.timeInForce, clientOrderId: n.clientOrderId }, quantity)
    if (type !== 'MARKET') this.lock(order, spend)
    this.orders.push(order)
    const fills = crosses ? this.take(order, last) : []
    if (isOpen(order) && (type === 'MARKET' || (!isAlgo(type) && n.timeInForce !== 'GTC'))) this.finish(order, 'EXPIRED')
    return { order, fills }
  }

  /** Fills an order as a taker at the last price: in `fillParts` fills, up to the symbol's liquidity. */
  private take(order: Order, last: bigint): Trade[] {
    const s = order.symbol
    const quantity = order.origQty - order.executedQty
    const depth = this.depth.get(s.id) ?? { fillParts: 1 }
    const available = floorTo(smaller(quantity, depth.liquidity ?? quantity), s.step)
    const fills: Trade[] = []
    if (order.timeInForce === 'FOK' && !marketKind(order.type) && available < quantity) return fills
    // Equal parts on the step grid; the last part takes what rounding left.
    const part = floorTo(available / BigInt(depth.fillParts), s.step)
    let left = available
    for (let i = 0; i < depth.fillParts && left > 0n; i++) {
      const qty = i === depth.fillParts - 1 || part === 0n ? left : part
      fills.push(this.fill(order, qty, last, false))
      left -= qty
    }
    return fills
  }

  /**
   * A new OCO list (POST /api/v3/orderList/oco, POST /api/v3/order/oco): both legs pass the checks
   * of a new order, the list locks its quantity once (on its first leg) and counts its stop legs
   * against MAX_NUM_ALGO_ORDERS.
   */
  placeList(n: NewOrder & { listClientOrderId: string }, legs: NewLeg[]): OrderList {
    const s = n.symbol
    if (!s.ocoAllowed) throw new VenueError(-2010, 'OCO orders are not supported for this symbol')
    for (const leg of legs) if (!s.orderTypes.includes(leg.type)) throw new VenueError(-2010, UNSUPPORTED[leg.type] ?? 'Unsupported order combination')
    if (this.lists.some((l) => l.account === n.account && l.listStatusType !== 'ALL_DONE' && l.listClientOrderId === n.listClientOrderId)) {
      throw new VenueError(-2010, 'Duplicate order sent.')
    }
    const last = this.market.last(s)
    const quantities = legs.map((leg) => this.admit({ ...n, clientOrderId: leg.clientOrderId }, leg.type, leg.price, leg.stopPrice))
    const quantity = quantities[0]
    const spends = legs.map((leg) => this.spend(n.side, leg.type, quantity, leg.price ?? 0n, leg.stopPrice ?? 0n, last))
    const spend = spends.reduce(larger)
    if (this.balance(n.account, n.side === 'BUY' ? s.quote : s.base).free < spend) throw insufficient()
    this.checkAlgoCount(n.account, s, legs.filter((leg) => isAlgo(leg.type)).length)
    const list: OrderList = {
      orderListId: this.nextId('list', s),
      contingencyType: 'OCO',
      listClientOrderId: n.listClientOrderId,
      symbol: s,
      account: n.account,
      orders: [],
      listStatusType: 'EXEC_STARTED',
      listOrderStatus: 'EXECUTING',
      transactionTime: this.now(),
    }
    for (const leg of legs) {
      const order = this.newOrder(
        n,
        leg.type,
        { price: leg.price ?? 0n, stopPrice: leg.stopPrice ?? 0n, timeInForce: leg.timeInForce, clientOrderId: leg.clientOrderId },
        quantity,
      )
      order.orderListId = list.orderListId
      list.orders.push(order)
      this.orders.push(order)
    }
    this.lock(list.orders[0], spend)
    this.lists.push(list)
    return list
  }

  /** A leg triggered or began to fill: it takes the list's lock, the other legs expire, the list is done. */
  private settle(order: Order): void {
    const list = this.lists.find((l) => l.orderListId === order.orderListId && l.symbol === order.symbol)
    if (!list || list.listStatusType === 'ALL_DONE') return
    for (const other of list.orders) {
      if (other === order || !isOpen(other)) continue
      order.locked += other.locked
      other.locked = 0n
      this.finish(other, 'EXPIRED')
    }
    this.endList(list)
  }

  private endList(list: OrderList): void {
    list.listStatusType = 'ALL_DONE'
    list.listOrderStatus = 'ALL_DONE'
    list.transactionTime = this.now()
  }

  /** Cancels a whole list (DELETE /api/v3/orderList, or DELETE /api/v3/order on one of its legs). */
  cancelList(list: OrderList): void {
    for (const order of list.orders) if (isOpen(order)) this.finish(order, 'CANCELED')
    this.endList(list)
  }

  /** The list an open order is a leg of, while that list is executing. */
  listOf(order: Order): OrderList | undefined {
    if (order.orderListId === -1) return undefined
    return this.lists.find((l) => l.orderListId === order.orderListId && l.symbol === order.symbol && l.listStatusType !== 'ALL_DONE')
  }

  fill(order: Order, qty: bigint, price: bigint, isMaker: boolean): Trade {
    const s = order.symbol
    if (order.orderListId !== -1) this.settle(order)
    const base = this.balance(order.account, s.base)
    const quote = this.balance(order.account, s.quote)
    const quoteQty = mul(price, qty)
    const buy = order.side === 'BUY'
    const commission = mul(buy ? qty : quoteQty, this.commissionRate)
    const release = smaller(order.locked, buy ? mul(order.price, qty) : qty)
    const held = buy ? quote : base
    order.locked -= release
    held.locked -= release
    held.free += release
    if (buy) {
      quote.free -= quoteQty
      base.free += qty - commission
    } else {
      base.free -= qty
      quote.free += quoteQty - commission
    }
    const time = this.now()
    const trade: Trade = {
      id: this.nextId('trade', s),
      symbol: s,
      orderId: order.orderId,
      orderListId: order.orderListId,
      account: order.account,
      price,
      qty,
      quoteQty,
      commission,
      commissionAsset: buy ? s.base : s.quote,
      time,
      isBuyer: buy,
      isMaker,
    }
    this.trades.push(trade)
    this.market.recordTrade(s, qty, quoteQty)
    order.tradeIds.push(trade.id)
    order.executedQty += qty
    order.cumQuote += quoteQty
    order.updateTime = time
    this.account(order.account).updateTime = time
    if (order.executedQty === order.origQty) this.finish(order, 'FILLED')
    else order.status = 'PARTIALLY_FILLED'
    return trade
  }

  /** Ends an order and frees what it still held. */
  finish(order: Order, status: 'FILLED' | 'CANCELED' | 'EXPIRED'): void {
    const s = order.symbol
    const held = this.balance(order.account, order.side === 'BUY' ? s.quote : s.base)
    held.locked -= order.locked
    held.free += order.locked
    order.locked = 0n
    order.status = status
    order.updateTime = this.now()
  }

  /**
   * Sets the last price. Stops it reaches trigger first: a STOP_LOSS or TAKE_PROFIT fills at this
   * price as a taker, a _LIMIT one goes on the book at its price (filled at this price when that
   * crosses it, resting when the price gapped through it). Then resting orders the price crossed
   * fill at their own price, as makers.
   */
  moveTo(s: VenueSymbol, price: bigint): Trade[] {
    this.market.setLast(s, price)
    const fills: Trade[] = []
    const reached = this.orders.filter((o) => o.symbol === s && isWaiting(o) && triggered(o.type, o.side, o.stopPrice, price))
    for (const order of reached) {
      if (!isWaiting(order)) continue // its OCO partner triggered first
      if (order.orderListId !== -1) this.settle(order)
      order.workingTime = this.now()
      order.updateTime = order.workingTime
      const crosses = marketKind(order.type) || (order.side === 'BUY' ? order.price >= price : order.price <= price)
      if (crosses) fills.push(...this.take(order, price))
      if (isOpen(order) && (marketKind(order.type) || order.timeInForce !== 'GTC')) this.finish(order, 'EXPIRED')
    }
    const crossed = this.orders.filter(
      (o) => o.symbol === s && isOpen(o) && o.workingTime !== -1 && !marketKind(o.type) && (o.side === 'BUY' ? o.price >= price : o.price <= price),
    )
    for (const o of crossed) fills.push(this.fill(o, o.origQty - o.executedQty, o.price, true))
    return fills
  }

  find(account: string, s: VenueSymbol, ref: { orderId?: number; clientOrderId?: string }): Order | undefined {
    const mine = this.orders.filter((o) => o.account === account && o.symbol === s)
    if (ref.orderId !== undefined) {
      const order = mine.find((o) => o.orderId === ref.orderId)
      return ref.clientOrderId === undefined || order?.clientOrderId === ref.clientOrderId ? order : undefined
    }
    return mine.findLast((o) => o.clientOrderId === ref.clientOrderId)
  }

  open(account: string, s?: VenueSymbol): Order[] {
    return this.orders.filter((o) => o.account === account && isOpen(o) && (s === undefined || o.symbol === s))
  }
}
