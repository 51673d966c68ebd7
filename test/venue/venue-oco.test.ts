// OCO order lists on the test venue through the real ccxt's raw Binance endpoints (ccxt has no
// unified OCO call), as rest-api.md "Order lists" documents them: POST /api/v3/orderList/oco and the
// deprecated POST /api/v3/order/oco, GET /api/v3/orderList, GET /api/v3/openOrderList, DELETE
// /api/v3/orderList; one leg triggering or filling expires the other; the list locks its quantity once.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startVenue, type Venue } from '../support/venue/index.ts'
import { refusal, trader } from './fixture.ts'

const test = suite('venue: OCO order lists')
let venue: Venue
let n = 0
let label = ''
const account = (balances: Record<string, number> = { BTC: 0.1, USDT: 0 }) => {
  label = `oco${++n}`
  return trader(venue, label, balances)
}
const balance = async (asset: string) => (await venue.balances(label))[asset]
const oco = (exchange: any, params: Record<string, string> = {}) =>
  exchange.privatePostOrderListOco({
    symbol: 'BTCUSDT',
    side: 'SELL',
    quantity: '0.1',
    aboveType: 'LIMIT_MAKER',
    abovePrice: '66000',
    belowType: 'STOP_LOSS_LIMIT',
    belowStopPrice: '57000',
    belowPrice: '56500',
    belowTimeInForce: 'GTC',
    ...params,
  })

test.before(async () => {
  venue = await startVenue()
})
test.before.each(async () => {
  await venue.setPrice('BTC/USDT', 60_000)
})
test.after(async () => {
  await venue.close()
})

test('POST /api/v3/orderList/oco answers the list with its orders and reports, and locks the quantity once', async () => {
  const exchange: any = await account()
  const list = await oco(exchange, { listClientOrderId: 'protect-1' })
  assert.is(list.contingencyType, 'OCO')
  assert.is(list.listStatusType, 'EXEC_STARTED')
  assert.is(list.listOrderStatus, 'EXECUTING')
  assert.is(list.listClientOrderId, 'protect-1')
  assert.is(list.symbol, 'BTCUSDT')
  assert.equal(
    list.orderReports.map((r: any) => [r.type, r.status, r.orderListId, r.stopPrice, r.workingTime === -1]),
    [
      ['STOP_LOSS_LIMIT', 'NEW', list.orderListId, '57000.00000000', true],
      ['LIMIT_MAKER', 'NEW', list.orderListId, undefined, false],
    ],
  )
  assert.equal(
    list.orders.map((o: any) => o.orderId),
    list.orderReports.map((r: any) => r.orderId),
  )
  assert.equal(await balance('BTC'), { free: '0.00000000', locked: '0.10000000' })
  const open = await exchange.fetchOpenOrders('BTC/USDT')
  assert.equal(
    open.map((o: any) => o.info.orderListId),
    [list.orderListId, list.orderListId],
  )
  const [listed] = await exchange.privateGetOpenOrderList()
  assert.is(listed.orderListId, list.orderListId)
  assert.is(listed.orderReports, undefined)
  const queried = await exchange.privateGetOrderList({ origClientOrderId: 'protect-1' })
  assert.equal(queried, listed)
  // The coins are held by the list: another SELL of them is refused for balance.
  const second = await refusal(exchange.createOrder('BTC/USDT', 'market', 'sell', 0.1))
  assert.is(second.constructor.name, 'InsufficientFunds')
})

test('the limit leg filling expires the stop leg and ends the list', async () => {
  const exchange: any = await account()
  const list = await oco(exchange)
  const fills = (await venue.setPrice('BTC/USDT', 66_500)).filter((t) => t.account === label)
  assert.equal(
    fills.map((t) => [t.price, t.isMaker]),
    [['66000.00000000', true]],
  )
  const [stop, limit] = list.orders.map((o: any) => o.orderId)
  assert.is((await exchange.fetchOrder(String(stop), 'BTC/USDT')).info.status, 'EXPIRED')
  assert.is((await exchange.fetchOrder(String(limit), 'BTC/USDT')).info.status, 'FILLED')
  const done = await exchange.privateGetOrderList({ orderListId: String(list.orderListId) })
  assert.equal([done.listStatusType, done.listOrderStatus], ['ALL_DONE', 'ALL_DONE'])
  assert.equal(await exchange.privateGetOpenOrderList(), [])
  assert.equal(await balance('BTC'), { free: '0.00000000', locked: '0.00000000' })
  assert.is(Number((await balance('USDT')).free), 6600 - 6.6)
})

test('the stop leg triggering expires the limit leg; gapped through its limit, it rests working as a plain order of the ended list', async () => {
  const exchange: any = await account()
  const list = await oco(exchange)
  assert.equal(await venue.setPrice('BTC/USDT', 56_000), [])
  const [stop, limit] = list.orders.map((o: any) => o.orderId)
  const working = await exchange.fetchOrder(String(stop), 'BTC/USDT')
  assert.equal([working.info.status, working.info.isWorking], ['NEW', true])
  assert.is((await exchange.fetchOrder(String(limit), 'BTC/USDT')).info.status, 'EXPIRED')
  assert.is((await exchange.privateGetOrderList({ orderListId: String(list.orderListId) })).listStatusType, 'ALL_DONE')
  assert.equal(await balance('BTC'), { free: '0.00000000', locked: '0.10000000' })
  // The list is over: DELETE /api/v3/orderList knows it no more; the working leg cancels as an order.
  const gone = await refusal(exchange.privateDeleteOrderList({ symbol: 'BTCUSDT', orderListId: String(list.orderListId) }))
  assert.match(gone.message, '"code":-2011')
  await exchange.cancelOrder(String(stop), 'BTC/USDT')
  assert.equal(await balance('BTC'), { free: '0.10000000', locked: '0.00000000' })
})

test('DELETE /api/v3/orderList cancels both legs and frees the balance; canceling one leg cancels the whole list', async () => {
  const exchange: any = await account()
  const list = await oco(exchange, { aboveType: 'TAKE_PROFIT', aboveStopPrice: '66000', abovePrice: undefined as any })
  const canceled = await exchange.privateDeleteOrderList({ symbol: 'BTCUSDT', orderListId: String(list.orderListId) })
  assert.equal([canceled.listStatusType, canceled.listOrderStatus], ['ALL_DONE', 'ALL_DONE'])
  assert.equal(
    canceled.orderReports.map((r: any) => [r.type, r.status]),
    [
      ['STOP_LOSS_LIMIT', 'CANCELED'],
      ['TAKE_PROFIT', 'CANCELED'],
    ],
  )
  assert.equal(await balance('BTC'), { free: '0.10000000', locked: '0.00000000' })
  const again = await oco(exchange)
  await exchange.cancelOrder(String(again.orders[1].orderId), 'BTC/USDT')
  const legs = await venue.orderLists({ account: label })
  assert.equal(
    legs[1].legs.map((o) => o.status),
    ['CANCELED', 'CANCELED'],
  )
  assert.equal(await balance('BTC'), { free: '0.10000000', locked: '0.00000000' })
})

test('cancelAllOrders on a symbol with an OCO answers the list as one entry; the control API cancels a list by hand', async () => {
  const exchange: any = await account()
  await oco(exchange)
  const all = await exchange.cancelAllOrders('BTC/USDT')
  assert.is(all.length, 1)
  assert.is(all[0].info.contingencyType, 'OCO')
  assert.is(all[0].id, undefined)
  const list = await oco(exchange)
  const byHand = await venue.cancelOrderList({ symbol: 'BTC/USDT', orderListId: list.orderListId })
  assert.is(byHand.listStatusType, 'ALL_DONE')
  assert.equal(await exchange.privateGetOpenOrderList(), [])
})

test('refusals: prices on the wrong side, a crossed trigger, a leg type in the wrong place, a missing leg price', async () => {
  const exchange: any = await account()
  const message = (params: Record<string, string>) => refusal(oco(exchange, params)).then((e) => e.message)
  assert.match(await message({ abovePrice: '59000' }), '"code":-2010,"msg":"The relationship of the prices for the orders is not correct."')
  assert.match(await message({ belowStopPrice: '61000' }), 'The relationship of the prices for the orders is not correct.')
  assert.match(
    await message({
      aboveType: 'STOP_LOSS',
      aboveStopPrice: '66000',
      abovePrice: undefined as any,
      belowType: 'TAKE_PROFIT',
      belowPrice: undefined as any,
      belowTimeInForce: undefined as any,
    }),
    '"code":-1197,"msg":"A stop loss order in a sell OCO must be below."',
  )
  assert.match(await message({ belowType: 'LIMIT' }), '"code":-1158,"msg":"Order type not supported in OCO."')
  assert.match(await message({ belowPrice: undefined as any }), "Mandatory parameter 'belowPrice'")
  assert.match(await message({ quantity: '0.2' }), 'Account has insufficient balance for requested action.')
  assert.equal(await venue.orders({ account: label }), [])
})

test('the deprecated POST /api/v3/order/oco places a STOP_LOSS(_LIMIT) and a LIMIT_MAKER leg', async () => {
  const exchange: any = await account()
  const list = await exchange.privatePostOrderOco({
    symbol: 'BTCUSDT',
    side: 'SELL',
    quantity: '0.1',
    price: '66000',
    stopPrice: '57000',
    stopLimitPrice: '56500',
    stopLimitTimeInForce: 'GTC',
  })
  assert.equal(
    list.orderReports.map((r: any) => r.type),
    ['STOP_LOSS_LIMIT', 'LIMIT_MAKER'],
  )
  assert.equal(await balance('BTC'), { free: '0.00000000', locked: '0.10000000' })
  const stopOnly = await refusal(
    exchange.privatePostOrderOco({ symbol: 'BTCUSDT', side: 'SELL', quantity: '0.1', price: '66000', stopPrice: '57000', stopLimitPrice: '56500' }),
  )
  assert.match(stopOnly.message, "Mandatory parameter 'stopLimitTimeInForce'")
})

test.run()
