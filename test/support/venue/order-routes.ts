// The order endpoints of Binance spot (rest-api.md "Trading endpoints", "Account endpoints"):
// POST/GET/DELETE /api/v3/order, GET /api/v3/openOrders and GET /api/v3/myTrades, with the
// parameter rules, refusals and answer shapes Binance documents (ACK, RESULT and FULL answers).
import { randomBytes } from 'node:crypto'
import type { Params } from './auth.ts'
import { isOpen, type Order, type OrderType, type Side, type TimeInForce, type Trade } from './book.ts'
import { VenueError } from './errors.ts'
import type { Routes, VenueState } from './routes.ts'
import { findSymbol, fmt, parseAmount } from './symbols.ts'

const CLIENT_ID = /^[a-zA-Z0-9-_]{1,36}$/

const illegal = (name: string, range: string) => new VenueError(-1100, `Illegal characters found in parameter '${name}'; legal range is '${range}'.`)
const mandatory = (name: string) => new VenueError(-1102, `Mandatory parameter '${name}' was not sent, was empty/null, or malformed.`)
const notRequired = (name: string) => new VenueError(-1106, `Parameter '${name}' sent when not required.`)
const invalid = (name: string) => new VenueError(-1130, `Data sent for parameter '${name}' is not valid.`)

function long(p: Params, name: string): number | undefined {
  if (p[name] === undefined) return undefined
  if (!/^[0-9]{1,20}$/.test(p[name])) throw illegal(name, '^[0-9]{1,20}$')
  return Number(p[name])
}

function clientId(p: Params, name: string): string {
  const value = p[name]
  if (value === undefined) return randomBytes(16).toString('base64url').slice(0, 22)
  if (!CLIENT_ID.test(value)) throw illegal(name, '^[a-zA-Z0-9-_]{1,36}$')
  return value
}

export function orderJson(o: Order): Record<string, unknown> {
  return {
    symbol: o.symbol.id,
    orderId: o.orderId,
    orderListId: -1,
    clientOrderId: o.clientOrderId,
    price: fmt(o.price),
    origQty: fmt(o.origQty),
    executedQty: fmt(o.executedQty),
    cummulativeQuoteQty: fmt(o.cumQuote),
    status: o.status,
    timeInForce: o.timeInForce,
    type: o.type,
    side: o.side,
    time: o.time,
    updateTime: o.updateTime,
    isWorking: true,
    workingTime: o.time,
    origQuoteOrderQty: fmt(o.origQuoteOrderQty),
    selfTradePreventionMode: 'EXPIRE_MAKER',
  }
}

export function tradeJson(t: Trade): Record<string, unknown> {
  return {
    symbol: t.symbol.id,
    id: t.id,
    orderId: t.orderId,
    orderListId: -1,
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
function placed(o: Order, fills: Trade[], respType: string): Record<string, unknown> {
  const ack = { symbol: o.symbol.id, orderId: o.orderId, orderListId: -1, clientOrderId: o.clientOrderId, transactTime: o.time }
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
        if (!['LIMIT', 'LIMIT_MAKER', 'MARKET'].includes(p.type)) throw new VenueError(-1116, 'Invalid orderType.')
        const type = p.type as OrderType
        for (const name of ['stopPrice', 'trailingDelta', 'icebergQty', 'pegPriceType', 'pegOffsetValue', 'pegOffsetType']) {
          if (p[name] !== undefined) throw notRequired(name)
        }
        if (type === 'LIMIT') {
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
          if (p.price === undefined) throw mandatory('price')
          if (p.quoteOrderQty !== undefined) throw notRequired('quoteOrderQty')
        }
        const respType = p.newOrderRespType ?? (type === 'LIMIT_MAKER' ? 'ACK' : 'FULL')
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
        book.finish(order, 'CANCELED')
        const { time: _t, updateTime: _u, isWorking: _w, workingTime: _k, clientOrderId, ...rest } = orderJson(order)
        return {
          symbol: order.symbol.id,
          origClientOrderId: clientOrderId,
          orderId: order.orderId,
          orderListId: -1,
          clientOrderId: cancelId,
          transactTime: order.updateTime,
          ...rest,
        }
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
