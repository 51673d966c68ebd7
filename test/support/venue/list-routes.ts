// The order-list endpoints of Binance spot for OCO lists (rest-api.md "Order lists"): POST
// /api/v3/orderList/oco (above and below legs), the deprecated POST /api/v3/order/oco (a LIMIT_MAKER
// and a stop leg), GET /api/v3/orderList, GET /api/v3/openOrderList and DELETE /api/v3/orderList,
// with the leg rules, price relations (errors.md -1158, -1165..-1199, "The relationship of the
// prices for the orders is not correct.") and answer shapes Binance documents.
import type { Params } from './auth.ts'
import type { NewLeg, Order, OrderList, OrderType, Side, TimeInForce } from './book.ts'
import { VenueError } from './errors.ts'
import { canceled, clientId, invalid, long, mandatory, notRequired, placed } from './order-routes.ts'
import type { Routes, VenueState } from './routes.ts'
import { findSymbol, parseAmount } from './symbols.ts'

/** A list as Binance shows it; `orderReports` on the answers to placing and canceling one. */
export function listJson(list: OrderList, orderReports?: Record<string, unknown>[]): Record<string, unknown> {
  return {
    orderListId: list.orderListId,
    contingencyType: list.contingencyType,
    listStatusType: list.listStatusType,
    listOrderStatus: list.listOrderStatus,
    listClientOrderId: list.listClientOrderId,
    transactionTime: list.transactionTime,
    symbol: list.symbol.id,
    orders: list.orders.map((o) => ({ symbol: o.symbol.id, orderId: o.orderId, clientOrderId: o.clientOrderId })),
    ...(orderReports ? { orderReports } : {}),
  }
}

const OCO_TYPES = ['STOP_LOSS', 'STOP_LOSS_LIMIT', 'LIMIT_MAKER', 'TAKE_PROFIT', 'TAKE_PROFIT_LIMIT']
const typeRejected = () => new VenueError(-1158, 'Order type not supported in OCO.')
const relation = () => new VenueError(-2010, 'The relationship of the prices for the orders is not correct.')
const amount = (p: Params, name: string) => (p[name] === undefined ? undefined : parseAmount(name, p[name]))

/** One leg of POST /api/v3/orderList/oco: `above` or `below` and its parameters. */
function leg(p: Params, at: 'above' | 'below'): NewLeg {
  const name = (field: string) => `${at}${field}`
  const type = p[name('Type')]
  if (type === undefined) throw mandatory(name('Type'))
  if (!OCO_TYPES.includes(type)) throw typeRejected()
  const limit = type === 'LIMIT_MAKER' || type.endsWith('_LIMIT')
  const stop = type !== 'LIMIT_MAKER'
  for (const field of ['IcebergQty', 'PegPriceType', 'PegOffsetType', 'PegOffsetValue']) if (p[name(field)] !== undefined) throw notRequired(name(field))
  if (p[name('TrailingDelta')] !== undefined) {
    if (!stop) throw notRequired(name('TrailingDelta'))
    throw new VenueError(-2010, 'Trailing stop orders are not supported for this symbol.')
  }
  if (limit && p[name('Price')] === undefined) throw mandatory(name('Price'))
  if (!limit && p[name('Price')] !== undefined) throw notRequired(name('Price'))
  if (stop && p[name('StopPrice')] === undefined) throw mandatory(name('StopPrice'))
  if (!stop && p[name('StopPrice')] !== undefined) throw notRequired(name('StopPrice'))
  const tifNeeded = type.endsWith('_LIMIT')
  const tif = p[name('TimeInForce')]
  if (tifNeeded && tif === undefined) throw mandatory(name('TimeInForce'))
  if (!tifNeeded && tif !== undefined) throw notRequired(name('TimeInForce'))
  if (tif !== undefined && !['GTC', 'IOC', 'FOK'].includes(tif)) throw new VenueError(-1115, 'Invalid timeInForce.')
  return {
    type: type as OrderType,
    price: amount(p, name('Price')),
    stopPrice: amount(p, name('StopPrice')),
    timeInForce: (tif ?? 'GTC') as TimeInForce,
    clientOrderId: clientId(p, name('ClientOrderId')),
  }
}

/**
 * The OCO price restrictions against the last traded price: on a SELL the LIMIT_MAKER or take-profit
 * leg sits above it and the stop-loss leg below, on a BUY the other way round.
 */
function checkRelation(side: Side, legs: NewLeg[], last: bigint): void {
  for (const l of legs) {
    const stopLoss = l.type.startsWith('STOP_LOSS')
    // The price that decides: the stop of a stop or take-profit, the limit of a LIMIT_MAKER or TAKE_PROFIT_LIMIT.
    const level = l.type === 'LIMIT_MAKER' || l.type === 'TAKE_PROFIT_LIMIT' ? (l.price ?? 0n) : (l.stopPrice ?? 0n)
    const above = stopLoss === (side === 'BUY')
    if (above ? level <= last : level >= last) throw relation()
  }
}

export function listRoutes(state: VenueState, signed: string[]): Routes {
  const { book, symbols } = state
  const lists = (account: string) => book.lists.filter((l) => l.account === account)
  const report = (o: Order, respType: string) => placed(o, [], respType)

  function newList(p: Params, account: string, legs: NewLeg[]) {
    const symbol = findSymbol(symbols, p.symbol)
    if (p.side === undefined) throw mandatory('side')
    if (p.side !== 'BUY' && p.side !== 'SELL') throw new VenueError(-1117, 'Invalid side.')
    if (p.quantity === undefined) throw mandatory('quantity')
    const respType = p.newOrderRespType ?? 'FULL'
    if (!['ACK', 'RESULT', 'FULL'].includes(respType)) throw invalid('newOrderRespType')
    const side = p.side as Side
    checkRelation(side, legs, state.market.last(symbol))
    const list = book.placeList(
      {
        account,
        symbol,
        side,
        type: legs[0].type,
        timeInForce: 'GTC',
        quantity: parseAmount('quantity', p.quantity),
        clientOrderId: legs[0].clientOrderId,
        listClientOrderId: clientId(p, 'listClientOrderId'),
      },
      legs,
    )
    return listJson(
      list,
      list.orders.map((o) => report(o, respType)),
    )
  }

  const findList = (p: Params, account: string, idName: string, clientName: string): OrderList | undefined => {
    const id = long(p, idName)
    if (id === undefined && p[clientName] === undefined) {
      throw new VenueError(-1102, `Param '${clientName}' or '${idName}' must be sent, but both were empty/null!`)
    }
    const mine = lists(account).filter((l) => p.symbol === undefined || l.symbol === findSymbol(symbols, p.symbol))
    const list = id !== undefined ? mine.find((l) => l.orderListId === id) : mine.findLast((l) => l.listClientOrderId === p[clientName])
    return list && (p[clientName] === undefined || list.listClientOrderId === p[clientName]) ? list : undefined
  }

  return {
    'POST /api/v3/orderList/oco': {
      security: 'TRADE',
      params: [
        'symbol',
        'listClientOrderId',
        'side',
        'quantity',
        ...['above', 'below'].flatMap((at) =>
          [
            'Type',
            'ClientOrderId',
            'IcebergQty',
            'Price',
            'StopPrice',
            'TrailingDelta',
            'TimeInForce',
            'StrategyId',
            'StrategyType',
            'PegPriceType',
            'PegOffsetType',
            'PegOffsetValue',
          ].map((f) => at + f),
        ),
        'newOrderRespType',
        'selfTradePreventionMode',
        ...signed,
      ],
      weight: 1,
      handle: (p, key) => {
        const above = leg(p, 'above')
        const below = leg(p, 'below')
        // One leg LIMIT_MAKER / TAKE_PROFIT(_LIMIT), the other STOP_LOSS(_LIMIT); which sits above depends on the side.
        const stopLoss = (l: NewLeg) => l.type.startsWith('STOP_LOSS')
        if (stopLoss(above) === stopLoss(below)) throw typeRejected()
        if (p.side === 'SELL' && stopLoss(above)) throw new VenueError(-1197, 'A stop loss order in a sell OCO must be below.')
        if (p.side === 'BUY' && stopLoss(below)) throw new VenueError(-1196, 'A stop loss order in a buy OCO must be above.')
        return newList(p, key.account, [below, above])
      },
    },
    'POST /api/v3/order/oco': {
      security: 'TRADE',
      params: [
        'symbol',
        'listClientOrderId',
        'side',
        'quantity',
        'limitClientOrderId',
        'price',
        'limitStrategyId',
        'limitStrategyType',
        'limitIcebergQty',
        'trailingDelta',
        'stopClientOrderId',
        'stopPrice',
        'stopStrategyId',
        'stopStrategyType',
        'stopLimitPrice',
        'stopIcebergQty',
        'stopLimitTimeInForce',
        'newOrderRespType',
        'selfTradePreventionMode',
        ...signed,
      ],
      weight: 1,
      handle: (p, key) => {
        for (const name of ['limitIcebergQty', 'stopIcebergQty']) if (p[name] !== undefined) throw notRequired(name)
        if (p.trailingDelta !== undefined) throw new VenueError(-2010, 'Trailing stop orders are not supported for this symbol.')
        if (p.price === undefined) throw mandatory('price')
        if (p.stopPrice === undefined) throw mandatory('stopPrice')
        // "stopLimitPrice: If provided, stopLimitTimeInForce is required."
        if (p.stopLimitPrice !== undefined && p.stopLimitTimeInForce === undefined) throw mandatory('stopLimitTimeInForce')
        if (p.stopLimitPrice === undefined && p.stopLimitTimeInForce !== undefined) throw notRequired('stopLimitTimeInForce')
        const tif = p.stopLimitTimeInForce ?? 'GTC'
        if (!['GTC', 'IOC', 'FOK'].includes(tif)) throw new VenueError(-1115, 'Invalid timeInForce.')
        const stop: NewLeg = {
          type: p.stopLimitPrice === undefined ? 'STOP_LOSS' : 'STOP_LOSS_LIMIT',
          price: amount(p, 'stopLimitPrice'),
          stopPrice: amount(p, 'stopPrice'),
          timeInForce: tif as TimeInForce,
          clientOrderId: clientId(p, 'stopClientOrderId'),
        }
        const limit: NewLeg = { type: 'LIMIT_MAKER', price: amount(p, 'price'), timeInForce: 'GTC', clientOrderId: clientId(p, 'limitClientOrderId') }
        return newList(p, key.account, [stop, limit])
      },
    },
    'GET /api/v3/orderList': {
      security: 'USER_DATA',
      params: ['orderListId', 'origClientOrderId', ...signed],
      weight: 4,
      handle: (p, key) => {
        const list = findList(p, key.account, 'orderListId', 'origClientOrderId')
        if (!list) throw new VenueError(-2013, 'Order does not exist.')
        return listJson(list)
      },
    },
    'GET /api/v3/openOrderList': {
      security: 'USER_DATA',
      params: signed,
      weight: 6,
      handle: (_p, key) =>
        lists(key.account)
          .filter((l) => l.listStatusType !== 'ALL_DONE')
          .map((l) => listJson(l)),
    },
    'DELETE /api/v3/orderList': {
      security: 'TRADE',
      params: ['symbol', 'orderListId', 'listClientOrderId', 'newClientOrderId', ...signed],
      weight: 1,
      handle: (p, key) => {
        findSymbol(symbols, p.symbol)
        const cancelId = clientId(p, 'newClientOrderId')
        const list = findList(p, key.account, 'orderListId', 'listClientOrderId')
        if (!list || list.listStatusType === 'ALL_DONE') throw new VenueError(-2011, 'Unknown order sent.')
        book.cancelList(list)
        return listJson(
          list,
          list.orders.map((o) => canceled(o, cancelId)),
        )
      },
    },
  }
}
