// Stop-loss and take-profit orders on the test venue, through the real ccxt (binance class), as
// Binance documents them (rest-api.md "New order", "Trigger order price rules"; filters.md
// MAX_NUM_ALGO_ORDERS; errors.md, messages for -2010): placed with ccxt's stopLossPrice and
// takeProfitPrice, resting un-triggered, triggered by the last price, locking what they sell.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { CATALOGUE_SYMBOLS, startVenue, type Venue } from '../support/venue/index.ts'
import { refusal, trader } from './fixture.ts'

const test = suite('venue: stop-loss and take-profit orders')
let venue: Venue
let n = 0
const account = (balances: Record<string, number> = { BTC: 1, USDT: 100_000 }) => trader(venue, `stops${++n}`, balances)
const free = async (label: string, asset: string) => Number((await venue.balances(label))[asset]?.free ?? 0)
const locked = async (label: string, asset: string) => Number((await venue.balances(label))[asset]?.locked ?? 0)

test.before(async () => {
  // NOSTOP offers no STOP_LOSS; TWO allows two resting stops.
  const nostop = { base: 'NOSTOP', quote: 'USDT', tickSize: '0.01', stepSize: '0.01', minQty: '0.01', minNotional: '5', startPrice: 10 }
  const two = { base: 'TWO', quote: 'USDT', tickSize: '0.01', stepSize: '0.01', minQty: '0.01', minNotional: '5', startPrice: 10 }
  venue = await startVenue({
    symbols: [
      ...CATALOGUE_SYMBOLS,
      { ...nostop, orderTypes: ['LIMIT', 'LIMIT_MAKER', 'MARKET', 'STOP_LOSS_LIMIT', 'TAKE_PROFIT_LIMIT'], ocoAllowed: false },
      { ...two, maxNumAlgoOrders: 2 },
    ],
  })
})
test.before.each(async () => {
  await venue.setPrice('BTC/USDT', 60_000)
})
test.after(async () => {
  await venue.close()
})

test('a market stop-loss is sent as STOP_LOSS, rests un-triggered, and fills at the last price once the price falls to its stop', async () => {
  const exchange = await account()
  const label = `stops${n}`
  const order = await exchange.createOrder('BTC/USDT', 'market', 'sell', 0.1, undefined, { stopLossPrice: 57_000 })
  const [sent] = await venue.requests({ method: 'POST', path: '/api/v3/order' }).then((r) => r.slice(-1))
  assert.is(sent.params.type, 'STOP_LOSS')
  assert.is(sent.params.stopPrice, '57000')
  assert.is(order.status, 'open')
  assert.is(order.info.workingTime, -1)
  assert.is(await locked(label, 'BTC'), 0.1)
  const [open] = await exchange.fetchOpenOrders('BTC/USDT')
  assert.is(open.id, order.id)
  assert.is(open.info.type, 'STOP_LOSS')
  assert.is(open.info.stopPrice, '57000.00000000')
  assert.is(open.info.isWorking, false)
  assert.is(open.triggerPrice, 57_000)
  assert.equal(await venue.setPrice('BTC/USDT', 58_000), []) // above the stop: nothing happens
  const fills = await venue.setPrice('BTC/USDT', 56_500) // gapped below the stop: fills at the last price
  assert.is(fills.length, 1)
  const done = await exchange.fetchOrder(String(order.id), 'BTC/USDT')
  assert.is(done.status, 'closed')
  assert.is(done.average, 56_500)
  assert.is(done.info.type, 'STOP_LOSS')
  assert.is(done.info.isWorking, true)
  assert.ok(Number(done.info.workingTime) > 0)
  const [trade] = await exchange.fetchMyTrades('BTC/USDT')
  assert.is(trade.order, order.id)
  assert.is(trade.price, 56_500)
  assert.is(trade.fee?.cost, 5.65) // 0.1% of 5650 USDT
  assert.is(trade.fee?.currency, 'USDT')
  assert.is(trade.takerOrMaker, 'taker')
  assert.is(await free(label, 'BTC'), 0.9)
  assert.is(await locked(label, 'BTC'), 0)
  assert.is(await free(label, 'USDT'), 100_000 + 5650 - 5.65)
})

test('a stop-limit gapped through rests as a working limit order at its price, unfilled, until the price comes back', async () => {
  const exchange = await account()
  const order = await exchange.createOrder('BTC/USDT', 'limit', 'sell', 0.1, 56_900, { stopLossPrice: 57_000 })
  const [sent] = await venue.requests({ method: 'POST', path: '/api/v3/order' }).then((r) => r.slice(-1))
  assert.equal([sent.params.type, sent.params.timeInForce, sent.params.price], ['STOP_LOSS_LIMIT', 'GTC', '56900'])
  assert.equal(await venue.setPrice('BTC/USDT', 55_000), []) // triggered, but its limit is above the price
  const working = await exchange.fetchOrder(String(order.id), 'BTC/USDT')
  assert.is(working.status, 'open')
  assert.is(working.filled, 0)
  assert.is(working.info.type, 'STOP_LOSS_LIMIT')
  assert.is(working.info.isWorking, true)
  assert.ok(Number(working.info.workingTime) > 0)
  const fills = await venue.setPrice('BTC/USDT', 57_500) // back above its limit: fills at its own price, as a maker
  assert.is(fills.length, 1)
  assert.is(fills[0].price, '56900.00000000')
  assert.is(fills[0].isMaker, true)
  assert.is((await exchange.fetchOrder(String(order.id), 'BTC/USDT')).status, 'closed')
})

test('a stop-limit triggered within its limit fills at once at the last price', async () => {
  const exchange = await account()
  const order = await exchange.createOrder('BTC/USDT', 'limit', 'sell', 0.1, 56_000, { stopLossPrice: 57_000 })
  const fills = await venue.setPrice('BTC/USDT', 56_800)
  assert.equal(
    fills.map((t) => [t.price, t.isMaker]),
    [['56800.00000000', false]],
  )
  assert.is((await exchange.fetchOrder(String(order.id), 'BTC/USDT')).status, 'closed')
})

test('a take-profit triggers when the price rises to its stop: TAKE_PROFIT sells at the last price', async () => {
  const exchange = await account()
  const order = await exchange.createOrder('BTC/USDT', 'market', 'sell', 0.1, undefined, { takeProfitPrice: 63_000 })
  const [sent] = await venue.requests({ method: 'POST', path: '/api/v3/order' }).then((r) => r.slice(-1))
  assert.is(sent.params.type, 'TAKE_PROFIT')
  assert.equal(await venue.setPrice('BTC/USDT', 50_000), []) // a fall does not trigger a take-profit
  assert.equal(await venue.setPrice('BTC/USDT', 62_999.99), [])
  const fills = await venue.setPrice('BTC/USDT', 63_000)
  assert.equal(
    fills.map((t) => t.price),
    ['63000.00000000'],
  )
  const done = await exchange.fetchOrder(String(order.id), 'BTC/USDT')
  assert.is(done.status, 'closed')
  assert.is(done.info.type, 'TAKE_PROFIT')
})

test('a stop whose trigger is already crossed is refused: -2010 Order would trigger immediately. (OrderImmediatelyFillable)', async () => {
  const exchange = await account()
  const stop = await refusal(exchange.createOrder('BTC/USDT', 'market', 'sell', 0.1, undefined, { stopLossPrice: 60_000 }))
  assert.is(stop.constructor.name, 'OrderImmediatelyFillable')
  assert.match(stop.message, 'Order would trigger immediately.')
  const takeProfit = await refusal(exchange.createOrder('BTC/USDT', 'limit', 'sell', 0.1, 59_000, { takeProfitPrice: 59_500 }))
  assert.is(takeProfit.constructor.name, 'OrderImmediatelyFillable')
  assert.equal(await venue.orders({ account: `stops${n}` }), [])
})

test('a resting protective SELL locks its coins: a second SELL of them is refused for balance until the protection is canceled', async () => {
  const exchange = await account({ BTC: 0.1, USDT: 0 })
  const stop = await exchange.createOrder('BTC/USDT', 'market', 'sell', 0.1, undefined, { stopLossPrice: 55_000 })
  const second = await refusal(exchange.createOrder('BTC/USDT', 'market', 'sell', 0.1))
  assert.is(second.constructor.name, 'InsufficientFunds')
  assert.match(second.message, 'Account has insufficient balance for requested action.')
  await exchange.cancelOrder(String(stop.id), 'BTC/USDT')
  const sold = await exchange.createOrder('BTC/USDT', 'market', 'sell', 0.1)
  assert.is(sold.status, 'closed')
})

test('the parameter rules of POST /api/v3/order for stops: stopPrice mandatory, price and stopPrice only where documented', async () => {
  const exchange = await account()
  const post = (params: Record<string, string>) =>
    refusal((exchange as any).privatePostOrder({ symbol: 'BTCUSDT', side: 'SELL', quantity: '0.1', ...params })).then((e) => e.message)
  assert.match(await post({ type: 'STOP_LOSS' }), '-1102,"msg":"Mandatory parameter \'stopPrice\' was not sent')
  assert.match(await post({ type: 'STOP_LOSS', stopPrice: '50000', price: '49000' }), '-1106,"msg":"Parameter \'price\' sent when not required."')
  assert.match(await post({ type: 'STOP_LOSS_LIMIT', stopPrice: '50000', price: '49000' }), "Mandatory parameter 'timeInForce'")
  assert.match(await post({ type: 'TAKE_PROFIT_LIMIT', stopPrice: '70000', timeInForce: 'GTC' }), "Mandatory parameter 'price'")
  assert.match(
    await post({ type: 'LIMIT', price: '70000', timeInForce: 'GTC', stopPrice: '1' }),
    '-1106,"msg":"Parameter \'stopPrice\' sent when not required."',
  )
  assert.match(await post({ type: 'STOP_LOSS', stopPrice: '50000.001' }), '-1013,"msg":"Filter failure: PRICE_FILTER"')
  assert.match(await post({ type: 'STOP_LOSS', stopPrice: '50000', trailingDelta: '100' }), 'Trailing stop orders are not supported for this symbol.')
  // newOrderRespType defaults to ACK for stops ("MARKET and LIMIT order types default to FULL, all other orders default to ACK").
  const ack = await (exchange as any).privatePostOrder({ symbol: 'BTCUSDT', side: 'SELL', quantity: '0.1', type: 'STOP_LOSS', stopPrice: '50000' })
  assert.equal(Object.keys(ack).sort(), ['clientOrderId', 'orderId', 'orderListId', 'symbol', 'transactTime'])
})

test('MAX_NUM_ALGO_ORDERS: exchangeInfo shows it, and one stop more than it allows is refused (-1013 Filter failure)', async () => {
  const exchange = await account({ TWO: 10, USDT: 0 })
  await exchange.loadMarkets()
  await venue.setPrice('TWO/USDT', 10)
  const market = exchange.market('TWO/USDT')
  assert.ok(market.info.filters.some((f: any) => f.filterType === 'MAX_NUM_ALGO_ORDERS' && f.maxNumAlgoOrders === 2))
  assert.ok(exchange.market('BTC/USDT').info.filters.some((f: any) => f.filterType === 'MAX_NUM_ALGO_ORDERS' && f.maxNumAlgoOrders === 5))
  await exchange.createOrder('TWO/USDT', 'market', 'sell', 1, undefined, { stopLossPrice: 9 })
  await exchange.createOrder('TWO/USDT', 'market', 'sell', 1, undefined, { takeProfitPrice: 11 })
  await exchange.createOrder('TWO/USDT', 'limit', 'sell', 1, 12) // a plain order does not count
  const third = await refusal(exchange.createOrder('TWO/USDT', 'market', 'sell', 1, undefined, { stopLossPrice: 8 }))
  assert.match(third.message, '"code":-1013,"msg":"Filter failure: MAX_NUM_ALGO_ORDERS"')
  assert.is((await venue.orders({ symbol: 'TWO/USDT', account: `stops${n}`, open: true, algo: true })).length, 2)
})

test('a market whose orderTypes lack STOP_LOSS: ccxt refuses a market stop before sending; the venue refuses it too (-2010)', async () => {
  const exchange = await account({ NOSTOP: 10, USDT: 0 })
  await venue.setPrice('NOSTOP/USDT', 10)
  await venue.clearRequests()
  const refused = await refusal(exchange.createOrder('NOSTOP/USDT', 'market', 'sell', 1, undefined, { stopLossPrice: 9 }))
  assert.is(refused.constructor.name, 'InvalidOrder')
  assert.match(refused.message, 'triggerPrice parameter is not allowed for NOSTOP/USDT market orders')
  assert.equal(await venue.requests({ method: 'POST' }), [])
  const raw = await refusal((exchange as any).privatePostOrder({ symbol: 'NOSTOPUSDT', side: 'SELL', type: 'STOP_LOSS', quantity: '1', stopPrice: '9' }))
  assert.match(raw.message, '"code":-2010,"msg":"Stop loss orders are not supported for this symbol."')
  const stopLimit = await exchange.createOrder('NOSTOP/USDT', 'limit', 'sell', 1, 8.9, { stopLossPrice: 9 })
  assert.is(stopLimit.status, 'open')
})

test.run()
