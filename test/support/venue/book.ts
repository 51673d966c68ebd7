// Accounts, orders and matching, deterministic and driven by the tests: each symbol has one last
// price (set through the control API). A MARKET order, or a LIMIT order that crosses the last price,
// fills at once at that price (in `fillParts` fills, up to `liquidity`); any other LIMIT order rests
// until the price moves across it (it then fills at its own price, as a maker) or a test fills part
// of it. Commission is taken from the asset received, as on Binance spot: a BUY pays it in the base
// asset, so the account holds less than it bought. Orders lock what they may spend; a cancel frees it.
import { VenueError } from './errors.ts'
import type { MarketData } from './market-data.ts'
import { Accounts } from './accounts.ts'
import { floorTo, mul, orderQuantity, smaller, type VenueSymbol } from './symbols.ts'

export type Side = 'BUY' | 'SELL'
export type OrderType = 'LIMIT' | 'LIMIT_MAKER' | 'MARKET'
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
}

export interface Trade {
  id: number
  symbol: VenueSymbol
  orderId: number
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
  clientOrderId: string
  foreign?: boolean
}

/** How a symbol's taker orders fill: in this many equal fills, up to this much base asset. */
export interface Depth {
  fillParts: number
  liquidity?: bigint
}

const insufficient = () => new VenueError(-2010, 'Account has insufficient balance for requested action.')
export const isOpen = (o: Order) => o.status === 'NEW' || o.status === 'PARTIALLY_FILLED'

export class Book extends Accounts {
  readonly orders: Order[] = []
  readonly trades: Trade[] = []
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

  place(n: NewOrder): { order: Order; fills: Trade[] } {
    const s = n.symbol
    const account = this.account(n.account)
    if (!account.canTrade) throw new VenueError(-2010, 'This account may not place or cancel orders.')
    if (this.orders.some((o) => isOpen(o) && o.account === n.account && o.clientOrderId === n.clientOrderId)) {
      throw new VenueError(-2010, 'Duplicate order sent.')
    }
    const last = this.market.last(s)
    const quantity = orderQuantity(s, n, last)
    const price = n.price ?? 0n
    const crosses = n.type === 'MARKET' || (n.side === 'BUY' ? price >= last : price <= last)
    if (n.type === 'LIMIT_MAKER' && crosses) throw new VenueError(-2010, 'Order would immediately match and take.')
    const spend = n.side === 'SELL' ? quantity : n.type === 'MARKET' ? (n.quoteOrderQty ?? mul(last, quantity)) : mul(price, quantity)
    const funds = this.balance(n.account, n.side === 'BUY' ? s.quote : s.base)
    if (funds.free < spend) throw insufficient()
    const time = this.now()
    const order: Order = {
      orderId: this.nextId('order', s),
      symbol: s,
      account: n.account,
      clientOrderId: n.clientOrderId,
      side: n.side,
      type: n.type,
      timeInForce: n.timeInForce,
      price,
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
    }
    if (n.type !== 'MARKET') {
      funds.free -= spend
      funds.locked += spend
      order.locked = spend
    }
    this.orders.push(order)
    const fills: Trade[] = []
    if (crosses) {
      const depth = this.depth.get(s.id) ?? { fillParts: 1 }
      const available = floorTo(smaller(quantity, depth.liquidity ?? quantity), s.step)
      if (!(n.timeInForce === 'FOK' && available < quantity)) {
        // Equal parts on the step grid; the last part takes what rounding left.
        const part = floorTo(available / BigInt(depth.fillParts), s.step)
        let left = available
        for (let i = 0; i < depth.fillParts && left > 0n; i++) {
          const qty = i === depth.fillParts - 1 || part === 0n ? left : part
          fills.push(this.fill(order, qty, last, false))
          left -= qty
        }
      }
    }
    if (isOpen(order) && (n.type === 'MARKET' || n.timeInForce !== 'GTC')) this.finish(order, 'EXPIRED')
    return { order, fills }
  }

  fill(order: Order, qty: bigint, price: bigint, isMaker: boolean): Trade {
    const s = order.symbol
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

  /** Sets the last price; resting orders it crossed fill at their own price. */
  moveTo(s: VenueSymbol, price: bigint): Trade[] {
    this.market.setLast(s, price)
    const crossed = this.orders.filter((o) => o.symbol === s && isOpen(o) && (o.side === 'BUY' ? o.price >= price : o.price <= price))
    return crossed.map((o) => this.fill(o, o.origQty - o.executedQty, o.price, true))
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
