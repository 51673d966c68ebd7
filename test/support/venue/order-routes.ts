// The order endpoints of Binance spot (rest-api.md "Trading endpoints", "Account endpoints"):
// POST/GET/DELETE /api/v3/order, GET /api/v3/openOrders and GET /api/v3/myTrades, with the
// parameter rules, refusals and answer shapes Binance documents (ACK, RESULT and FULL answers).
import { randomBytes } from 'node:crypto'
import type { Params } from './auth.ts'
import { isAlgo, isOpen, type Order, type OrderType, type Side, type TimeInForce, type Trade } from './book.ts'
import { VenueError } from './errors.ts'
import type { Routes, VenueState } from './routes.ts'
import { listJson } from './list-routes.ts'
import { findSymbol, fmt, ORDER_TYPES, parseAmount } from './symbols.ts'

const CLIENT_ID = /^[a-zA-Z0-9-_]{1,36}$/

export const illegal = (name: string, range: string) => new VenueError(-1100, `Illegal characters found in parameter '${name}'; legal range is '${range}'.`)
export const mandatory = (name: string) => new VenueError(-1102, `Mandatory parameter '${name}' was not sent, was empty/null, or malformed.`)
export const notRequired = (name: string) => new VenueError(-1106, `Parameter '${name}' sent when not required.`)
export const invalid = (name: string) => new VenueError(-1130, `Data sent for parameter '${name}' is not valid.`)

export function long(p: Params, name: string): number | undefined {
  if (p[name] === undefined) return undefined
  if (!/^[0-9]{1,20}$/.test(p[name])) throw illegal(name, '^[0-9]{1,20}$')
  return Number(p[name])
}

export function clientId(p: Params, name: string): string {
  const value = p[name]
  if (value === undefined) return randomBytes(16).toString('base64url').slice(0, 22)
  if (!CLIENT_ID.test(value)) throw illegal(name, '^[a-zA-Z0-9-_]{1,36}$')
  return value
}

/** An order as GET /api/v3/order shows it; `stopPrice` only on stop-loss and take-profit orders. */
export function orderJson(o: Order): Record<string, unknown> {
  return {
    symbol: o.symbol.id,
    orderId: o.orderId,
    orderListId: o.orderListId,
    clientOrderId: o.clientOrderId,
    price: fmt(o.price),
    origQty: fmt(o.origQty),
    executedQty: fmt(o.executedQty),
    cummulativeQuoteQty: fmt(o.cumQuote),
    status: o.status,
    timeInForce: o.timeInForce,
    type: o.type,
    side: o.side,
    ...(isAlgo(o.type) ? { stopPrice: fmt(o.stopPrice) } : {}),
    time: o.time,
    updateTime: o.updateTime,
    isWorking: o.workingTime !== -1,
    workingTime: o.workingTime,
    origQuoteOrderQty: fmt(o.origQuoteOrderQty),
    selfTradePreventionMode: 'EXPIRE_MAKER',
  }
}

export function tradeJson(t: Trade): Record<string, unknown> {
  return {
    symbol: t.symbol.id,
    id: t.id,
    orderId: t.orderId,
    orderListId: t.orderListId,
    price: fmt(t.price),
    qty: fmt(t.qty),
    quoteQty: fmt(t.quoteQty),
    commission: fmt(t.commission),
    commissionAsset: t.commissionAsset,
    time: t.time,
    isBuyer: t.isBuyer,
    isMaker: t.isMaker,
    isBestMatch: true,
  }
}

/** The answer to a new order, as newOrderRespType asks. */
export function placed(o: Order, fills: Trade[], respType: string): Record<string, unknown> {
  const ack = { symbol: o.symbol.id, orderId: o.orderId, orderListId: o.orderListId, clientOrderId: o.clientOrderId, transactTime: o.time }
  if (respType === 'ACK') return ack
  const { time: _t, updateTime: _u, isWorking: _w, workingTime, ...rest } = orderJson(o)
  const result = { ...ack, ...rest, workingTime }
  if (respType === 'RESULT') return result
  const fillJson = fills.map((t) => ({
    price: fmt(t.price),
    qty: fmt(t.qty),
    commission: fmt(t.commission),
    commissionAsset: t.commissionAsset,
    tradeId: t.id,
  }))
  return { ...result, fills: fillJson }
}

/** An order in the answer to a cancel (rest-api.md "Cancel order"). */
export function canceled(order: Order, cancelId: string): Record<string, unknown> {
  const { time: _t, updateTime: _u, isWorking: _w, workingTime: _k, clientOrderId, ...rest } = orderJson(order)
  return {
    symbol: order.symbol.id,
    origClientOrderId: clientOrderId,
    orderId: order.orderId,
    orderListId: order.orderListId,
    clientOrderId: cancelId,
    transactTime: order.updateTime,
    ...rest,
  }
}

export function orderRoutes(state: VenueState, signed: string[]): Routes {
  const { book, symbols } = state
  const find = (p: Params, account: string) => {
    const s = findSymbol(symbols, p.symbol)
    const orderId = long(p, 'orderId')
    if (orderId === undefined && p.origClientOrderId === undefined) {
      throw new VenueError(-1102, "Param 'origClientOrderId' or 'orderId' must be sent, but both were empty/null!")
    }
    return book.find(account, s, { orderId, clientOrderId: p.origClientOrderId })
  }
  return {
    'POST /api/v3/order': {
      security: 'TRADE',
      params: [
        'symbol',
        'side',
        'type',
        'timeInForce',
        'quantity',
        'quoteOrderQty',
        'price',
        'newClientOrderId',
        'strategyId',
        'strategyType',
        'stopPrice',
        'trailingDelta',
        'icebergQty',
        'newOrderRespType',
        'selfTradePreventionMode',
        'pegPriceType',
        'pegOffsetValue',
        'pegOffsetType',
        ...signed,
      ],
      weight: 1,
      handle: (p, key) => {
        const symbol = findSymbol(symbols, p.symbol)
        if (p.side === undefined) throw mandatory('side')
        if (p.side !== 'BUY' && p.side !== 'SELL') throw new VenueError(-1117, 'Invalid side.')
        if (p.type === undefined) throw mandatory('type')
        if (!ORDER_TYPES.includes(p.type)) throw new VenueError(-1116, 'Invalid orderType.')
        const type = p.type as OrderType
        for (const name of ['icebergQty', 'pegPriceType', 'pegOffsetValue', 'pegOffsetType']) {
          if (p[name] !== undefined) throw notRequired(name)
        }
        // rest-api.md "New order": the additional mandatory parameters of each type.
        const algo = isAlgo(type)
        if (!algo && p.stopPrice !== undefined) throw notRequired('stopPrice')
        if (!algo && p.trailingDelta !== undefined) throw notRequired('trailingDelta')
        if (algo && p.trailingDelta !== undefined) throw new VenueError(-2010, 'Trailing stop orders are not supported for this symbol.')
        if (algo && p.stopPrice === undefined) throw mandatory('stopPrice')
        const market = type === 'MARKET' || type === 'STOP_LOSS' || type === 'TAKE_PROFIT'
        if (type === 'LIMIT' || type === 'STOP_LOSS_LIMIT' || type === 'TAKE_PROFIT_LIMIT') {
          if (p.timeInForce === undefined) throw mandatory('timeInForce')
          if (!['GTC', 'IOC', 'FOK'].includes(p.timeInForce)) throw new VenueError(-1115, 'Invalid timeInForce.')
        } else if (p.timeInForce !== undefined) throw new VenueError(-1114, 'TimeInForce parameter sent when not required.')
        if (type === 'MARKET') {
          if (p.price !== undefined) throw notRequired('price')
          if (p.quantity === undefined && p.quoteOrderQty === undefined) {
            throw new VenueError(-1102, "Param 'quantity' or 'quoteOrderQty' must be sent, but both were empty/null!")
          }
          if (p.quantity !== undefined && p.quoteOrderQty !== undefined) throw notRequired('quoteOrderQty')
        } else {
          if (p.quantity === undefined) throw mandatory('quantity')
          if (market && p.price !== undefined) throw notRequired('price')
          if (!market && p.price === undefined) throw mandatory('price')
          if (p.quoteOrderQty !== undefined) throw notRequired('quoteOrderQty')
        }
        // "MARKET and LIMIT order types default to FULL, all other orders default to ACK."
        const respType = p.newOrderRespType ?? (type === 'MARKET' || type === 'LIMIT' ? 'FULL' : 'ACK')
        if (!['ACK', 'RESULT', 'FULL'].includes(respType)) throw invalid('newOrderRespType')
        const { order, fills } = book.place({
          account: key.account,
          symbol,
          side: p.side as Side,
          type,
          timeInForce: (p.timeInForce ?? 'GTC') as TimeInForce,
          quantity: p.quantity === undefined ? undefined : parseAmount('quantity', p.quantity),
          quoteOrderQty: p.quoteOrderQty === undefined ? undefined : parseAmount('quoteOrderQty', p.quoteOrderQty),
          price: p.price === undefined ? undefined : parseAmount('price', p.price),
          stopPrice: p.stopPrice === undefined ? undefined : parseAmount('stopPrice', p.stopPrice),
          clientOrderId: clientId(p, 'newClientOrderId'),
        })
        return placed(order, fills, respType)
      },
    },
    'GET /api/v3/order': {
      security: 'USER_DATA',
      params: ['symbol', 'orderId', 'origClientOrderId', ...signed],
      weight: 4,
      handle: (p, key) => {
        const order = find(p, key.account)
        if (!order) throw new VenueError(-2013, 'Order does not exist.')
        return orderJson(order)
      },
    },
    'DELETE /api/v3/order': {
      security: 'TRADE',
      params: ['symbol', 'orderId', 'origClientOrderId', 'newClientOrderId', 'cancelRestrictions', ...signed],
      weight: 1,
      handle: (p, key) => {
        const restriction = p.cancelRestrictions
        if (restriction !== undefined && restriction !== 'ONLY_NEW' && restriction !== 'ONLY_PARTIALLY_FILLED') {
          throw new VenueError(-1145, 'Invalid cancelRestrictions')
        }
        const cancelId = clientId(p, 'newClientOrderId')
        const order = find(p, key.account)
        if (!order || !isOpen(order)) throw new VenueError(-2011, 'Unknown order sent.')
        if (restriction !== undefined && order.status !== restriction.slice('ONLY_'.length)) {
          throw new VenueError(-2011, 'Order was not canceled due to cancel restrictions.')
        }
        // "Canceling an individual order from an order list will cancel the entire order list."
        const list = book.listOf(order)
        if (list) book.cancelList(list)
        else book.finish(order, 'CANCELED')
        return canceled(order, cancelId)
      },
    },
    'DELETE /api/v3/openOrders': {
      security: 'TRADE',
      params: ['symbol', ...signed],
      weight: 1,
      handle: (p, key) => {
        const s = findSymbol(symbols, p.symbol)
        const cancelId = clientId(p, 'newClientOrderId')
        const answers: Record<string, unknown>[] = []
        for (const order of book.open(key.account, s)) {
          if (!isOpen(order)) continue // a leg of a list canceled already
          const list = book.listOf(order)
          if (list) {
            book.cancelList(list)
            answers.push(
              listJson(
                list,
                list.orders.map((o) => canceled(o, cancelId)),
              ),
            )
          } else {
            book.finish(order, 'CANCELED')
            answers.push(canceled(order, cancelId))
          }
        }
        return answers
      },
    },
    'GET /api/v3/openOrders': {
      security: 'USER_DATA',
      params: ['symbol', ...signed],
      weight: (p) => (p.symbol !== undefined ? 6 : 80),
      handle: (p, key) => book.open(key.account, p.symbol === undefined ? undefined : findSymbol(symbols, p.symbol)).map(orderJson),
    },
    'GET /api/v3/myTrades': {
      security: 'USER_DATA',
      params: ['symbol', 'orderId', 'startTime', 'endTime', 'fromId', 'limit', ...signed],
      weight: (p) => (p.orderId !== undefined ? 5 : 20),
      handle: (p, key) => {
        const s = findSymbol(symbols, p.symbol)
        const [orderId, start, end, fromId] = ['orderId', 'startTime', 'endTime', 'fromId'].map((name) => long(p, name))
        const limit = p.limit === undefined ? 500 : Number(p.limit)
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalid('limit')
        // The combinations rest-api.md lists; the time window holds at most 24 hours.
        const sent = ['orderId', 'startTime', 'endTime', 'fromId'].filter((name) => p[name] !== undefined).join('+')
        if (!['', 'orderId', 'startTime', 'endTime', 'fromId', 'startTime+endTime', 'orderId+fromId'].includes(sent)) {
          throw new VenueError(-1128, 'Combination of optional parameters invalid.')
        }
        if (start !== undefined && end !== undefined && end - start > 86_400_000)
          throw new VenueError(-1127, 'More than 24 hours between startTime and endTime.')
        const mine = book.trades.filter(
          (t) =>
            t.account === key.account &&
            t.symbol === s &&
            (orderId === undefined || t.orderId === orderId) &&
            (fromId === undefined || t.id >= fromId) &&
            (start === undefined || t.time >= start) &&
            (end === undefined || t.time <= end),
        )
        const oldestFirst = start !== undefined || fromId !== undefined
        return (oldestFirst ? mine.slice(0, limit) : mine.slice(-limit)).map(tradeJson)
      },
    },
  }
}
