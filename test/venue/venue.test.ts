// The real ccxt (through src/venues/exchange.ts) against the Binance-spot-compatible test venue:
// markets, daily candles, tickers, balances and key restrictions, LIMIT and MARKET orders with
// partial fills, look-ups by client order id, cancels, open orders and the trade history with the
// commission taken in the asset received. Expected amounts are worked out here, by hand.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openExchange } from '../../src/venues/exchange.ts'
import { ROOT } from '../support/harness.ts'
import { startVenue, type Venue } from '../support/venue/index.ts'
import { trader } from './fixture.ts'

const test = suite('venue: ccxt against the test venue')
const DAY = 86_400_000
let venue: Venue

test.before(async () => {
  venue = await startVenue({ seed: 7 })
})
test.after(async () => {
  await venue.close()
})

const numbers = (row: unknown[]) => [row[0], ...row.slice(1, 6).map(Number)]

/** Runs `read` again if a UTC midnight passed while it ran (the forming candle moved on). */
async function withinOneDay<T>(read: () => Promise<T>): Promise<T> {
  for (;;) {
    const day = Math.floor(Date.now() / DAY)
    const result = await read()
    if (Math.floor(Date.now() / DAY) === day) return result
  }
}

test('loadMarkets sees every catalogue pair, with precision and limits, in one request', async () => {
  const sql = readFileSync(join(ROOT, 'sql/001_init.sql'), 'utf8')
  const pairs = [...new Set([...sql.matchAll(/"([A-Z0-9]+\/USDT)"/g)].map((m) => m[1]))]
  assert.is(pairs.length, 12)
  const exchange = await trader(venue, 'markets')
  await venue.clearRequests()
  const markets = await exchange.loadMarkets()
  for (const pair of pairs) {
    assert.ok(markets[pair], pair)
    assert.is(markets[pair]!.spot, true)
    assert.is(markets[pair]!.active, true)
  }
  const btc = markets['BTC/USDT']!
  assert.is(btc.id, 'BTCUSDT')
  assert.equal(btc.precision, { amount: 0.00001, price: 0.01, base: 1e-8, quote: 1e-8 })
  assert.equal([btc.limits.amount?.min, btc.limits.price?.min, btc.limits.cost?.min], [0.00001, 0.01, 5])
  assert.equal(markets['DOGE/USDT']!.precision.amount, 1)
  assert.equal(markets['DOGE/USDT']!.precision.price, 0.00001)
  assert.equal(
    (await venue.requests()).map((r) => r.path),
    ['/api/v3/exchangeInfo'],
  )
})

test("with ccxt's own fetchMargins a keyed loadMarkets asks for margin pairs too, and gets none", async () => {
  const exchange = await trader(venue, 'margins')
  exchange.options.fetchMargins = true
  await venue.clearRequests()
  const markets = await exchange.loadMarkets()
  assert.equal(markets['ETH/USDT']!.marginModes, { cross: false, isolated: false })
  const seen = (await venue.requests()).map((r) => `${r.path} ${r.status}`).sort()
  assert.equal(seen, ['/api/v3/exchangeInfo 200', '/sapi/v1/margin/allPairs 200', '/sapi/v1/margin/isolated/allPairs 200'])
})

test("fetchOHLCV 1d: the seeded candles, oldest first, today's still-forming one last", async () => {
  const exchange = await openExchange({ exchange: 'binance', venueUrl: venue.url, caFile: venue.caFile })
  const [today, served, recent, page] = await withinOneDay(async () => [
    Math.floor(Date.now() / DAY) * DAY,
    await venue.candles('ETH/USDT'),
    await exchange.fetchOHLCV('ETH/USDT', '1d', undefined, 5),
    await exchange.fetchOHLCV('ETH/USDT', '1d', (await venue.candles('ETH/USDT'))[200][0] as number, 1000),
  ])
  assert.is(served.length, 1001)
  assert.equal(recent, served.slice(-5).map(numbers))
  assert.equal(page, served.slice(200).map(numbers))
  assert.is(recent[4][0], today)
  for (let i = 1; i < served.length; i++) assert.is(served[i][0], (served[i - 1][0] as number) + DAY)
  for (const [, open, high, low, close] of served.map(numbers) as number[][]) {
    assert.ok(high >= Math.max(open, close) && low <= Math.min(open, close) && low > 0)
  }
  // The forming candle closes, for now, at the last price.
  await venue.setPrice('ETH/USDT', 4321.5)
  const [forming] = await exchange.fetchOHLCV('ETH/USDT', '1d', undefined, 1)
  assert.is(forming[4], 4321.5)
  assert.ok((forming[2] as number) >= 4321.5)
})

test('the same seed serves the same closed candles on another venue; another seed does not', async () => {
  const twin = await startVenue({ seed: 7, historyDays: 30 })
  const other = await startVenue({ seed: 8, historyDays: 30 })
  try {
    const [mine, theirs, others] = await withinOneDay(async () => [
      await venue.candles('BTC/USDT'),
      await twin.candles('BTC/USDT'),
      await other.candles('BTC/USDT'),
    ])
    assert.is(theirs.length, 31)
    assert.equal(theirs.slice(0, -1), mine.slice(-31, -1))
    assert.not.equal(others.slice(0, -1), mine.slice(-31, -1))
  } finally {
    await twin.close()
    await other.close()
  }
})

test('fetchTicker reads the last price; fetchTime the venue clock', async () => {
  const exchange = await openExchange({ exchange: 'binance', venueUrl: venue.url, caFile: venue.caFile })
  await venue.setPrice('SOL/USDT', 151.25)
  const ticker = await exchange.fetchTicker('SOL/USDT')
  assert.equal([ticker.symbol, ticker.last, ticker.bid, ticker.ask], ['SOL/USDT', 151.25, 151.24, 151.26])
  const before = Date.now()
  const time = await exchange.fetchTime()
  assert.ok(time! >= before && time! <= Date.now())
  await venue.setClockOffset(-3_600_000)
  assert.ok((await exchange.fetchTime())! <= Date.now() - 3_600_000)
  await venue.setClockOffset(0)
})

test('fetchBalance: free and locked per asset, and the account flags', async () => {
  const exchange = await trader(venue, 'balance', { USDT: 2500.5, ETH: 1.25 })
  const balance = await exchange.fetchBalance()
  assert.equal(balance.USDT, { free: 2500.5, used: 0, total: 2500.5 })
  assert.equal(balance.ETH, { free: 1.25, used: 0, total: 1.25 })
  assert.equal(balance.BTC, { free: 0, used: 0, total: 0 })
  assert.equal([balance.info.canTrade, balance.info.canWithdraw], [true, false])
  await venue.setAccount({ canWithdraw: true }, 'balance')
  assert.is((await exchange.fetchBalance()).info.canWithdraw, true)
})

test("apiRestrictions answer per key: the key's own withdrawal and trading rights", async () => {
  const safe = await (await trader(venue, 'safe-key')).sapiGetAccountApiRestrictions()
  const unsafe = await (await trader(venue, 'unsafe-key', {}, { enableWithdrawals: true })).sapiGetAccountApiRestrictions()
  assert.equal([safe.enableReading, safe.enableSpotAndMarginTrading, safe.enableWithdrawals], [true, true, false])
  assert.is(unsafe.enableWithdrawals, true)
})

test('a LIMIT buy rests, locks its cost, and fills at its own price when the price crosses it', async () => {
  const exchange = await trader(venue, 'limit', { USDT: 10_000 })
  await venue.setPrice('BTC/USDT', 60_000)
  const order = await exchange.createOrder('BTC/USDT', 'limit', 'buy', 0.01, 59_000, { clientOrderId: 'ord_limit_1' })
  assert.equal([order.status, order.filled, order.clientOrderId, order.price], ['open', 0, 'ord_limit_1', 59_000])
  assert.equal((await exchange.fetchBalance()).USDT, { free: 9410, used: 590, total: 10_000 })
  assert.equal(
    (await exchange.fetchOpenOrders('BTC/USDT')).map((o) => o.id),
    [order.id],
  )
  await venue.setPrice('BTC/USDT', 59_500)
  assert.is((await exchange.fetchOrder(order.id!, 'BTC/USDT')).status, 'open')
  await venue.setPrice('BTC/USDT', 58_900)
  const filled = await exchange.fetchOrder(order.id!, 'BTC/USDT')
  assert.equal([filled.status, filled.filled, filled.average, filled.cost], ['closed', 0.01, 59_000, 590])
  const [trade] = await exchange.fetchMyTrades('BTC/USDT')
  assert.equal([trade.order, trade.price, trade.amount, trade.side, trade.takerOrMaker], [order.id, 59_000, 0.01, 'buy', 'maker'])
  assert.equal(trade.fee, { cost: 0.00001, currency: 'BTC' })
  // The commission came out of the BTC bought: 0.01 x (1 - 0.001) is held.
  const balance = await exchange.fetchBalance()
  assert.equal([balance.BTC.total, balance.USDT.total, balance.USDT.used], [0.00999, 9410, 0])
})

test('MARKET orders: fills in parts, by quantity or by cost, and EXPIRED past the liquidity', async () => {
  const exchange = await trader(venue, 'market', { USDT: 10_000, SOL: 3 })
  await venue.setPrice('ETH/USDT', 3000)
  await venue.setDepth('ETH/USDT', { fillParts: 3 })
  const order = await exchange.createOrder('ETH/USDT', 'market', 'buy', 0.3)
  assert.equal([order.status, order.filled, order.cost, order.average], ['closed', 0.3, 900, 3000])
  assert.equal(
    order.trades.map((t) => [t.amount, t.fee?.cost, t.fee?.currency]),
    [
      [0.1, 0.0001, 'ETH'],
      [0.1, 0.0001, 'ETH'],
      [0.1, 0.0001, 'ETH'],
    ],
  )
  assert.equal([(await exchange.fetchBalance()).ETH.total, (await exchange.fetchBalance()).USDT.total], [0.2997, 9100])
  // By cost: 100 USDT buys floor(100 / 3000, step 0.0001) = 0.0333 ETH for 99.9 USDT.
  const byCost = await exchange.createMarketBuyOrderWithCost('ETH/USDT', 100)
  assert.equal([byCost.filled, byCost.cost], [0.0333, 99.9])
  assert.is((await venue.requests({ method: 'POST', path: '/api/v3/order' })).at(-1)!.params.quoteOrderQty, '100')
  assert.equal((await exchange.fetchBalance()).USDT.total, 9000.1)
  await venue.setDepth('ETH/USDT', { fillParts: 1 })
  // 2 SOL to sell, 1 SOL of liquidity: 1 sold, the rest expires.
  await venue.setPrice('SOL/USDT', 150)
  await venue.setDepth('SOL/USDT', { liquidity: 1 })
  const sell = await exchange.createOrder('SOL/USDT', 'market', 'sell', 2)
  assert.equal([sell.status, sell.filled, sell.remaining], ['expired', 1, 1])
  const balance = await exchange.fetchBalance()
  assert.equal([balance.SOL.total, balance.USDT.total], [2, 9149.95])
  await venue.setDepth('SOL/USDT', {})
})

test('a partial fill, a look-up by client order id, and a cancel that frees the rest', async () => {
  const exchange = await trader(venue, 'partial', { ETH: 2 })
  await venue.setPrice('ETH/USDT', 3000)
  const order = await exchange.createOrder('ETH/USDT', 'limit', 'sell', 1, 3500, { clientOrderId: 'ord_partial_1' })
  await venue.fillOrder({ clientOrderId: 'ord_partial_1' }, 0.4)
  const found = await exchange.fetchOrder('', 'ETH/USDT', { clientOrderId: 'ord_partial_1' })
  assert.equal([found.id, found.status, found.filled, found.remaining, found.info.status], [order.id, 'open', 0.4, 0.6, 'PARTIALLY_FILLED'])
  assert.equal((await exchange.fetchBalance()).ETH, { free: 1, used: 0.6, total: 1.6 })
  const canceled = await exchange.cancelOrder(order.id!, 'ETH/USDT')
  assert.equal([canceled.status, canceled.filled, canceled.info.origClientOrderId], ['canceled', 0.4, 'ord_partial_1'])
  // ccxt reads clientOrderId from the cancel's answer, where Binance puts the cancel's own id.
  assert.is.not(canceled.clientOrderId, 'ord_partial_1')
  const balance = await exchange.fetchBalance()
  assert.equal([balance.ETH, balance.USDT.total], [{ free: 1.6, used: 0, total: 1.6 }, 1398.6])
})

test('fetchOpenOrders with and without a symbol, a foreign order among them', async () => {
  const exchange = await trader(venue, 'open', { USDT: 10_000, ETH: 1 })
  await venue.setPrice('BTC/USDT', 60_000)
  await venue.setPrice('ETH/USDT', 3000)
  await venue.setPrice('SOL/USDT', 150)
  await exchange.createOrder('BTC/USDT', 'limit', 'buy', 0.001, 50_000)
  await exchange.createOrder('ETH/USDT', 'limit', 'sell', 0.5, 4000)
  const foreign = await venue.injectOrder({ symbol: 'SOL/USDT', side: 'BUY', quantity: 1, price: 100, account: 'open' })
  const all = await exchange.fetchOpenOrders()
  assert.equal(all.map((o) => o.symbol).sort(), ['BTC/USDT', 'ETH/USDT', 'SOL/USDT'])
  assert.is(all.find((o) => o.symbol === 'SOL/USDT')!.clientOrderId, foreign.clientOrderId)
  assert.equal(
    (await exchange.fetchOpenOrders('ETH/USDT')).map((o) => o.price),
    [4000],
  )
})

test('fetchMyTrades: newest by default, from a time, from a trade id, with the fee in BTC', async () => {
  const exchange = await trader(venue, 'history', { USDT: 1000 })
  await venue.setPrice('BTC/USDT', 60_000)
  for (let i = 0; i < 3; i++) await exchange.createOrder('BTC/USDT', 'market', 'buy', 0.001)
  const held = (await venue.trades({ account: 'history' })).map((t) => ({ id: String(t.id), time: t.time as number }))
  const all = await exchange.fetchMyTrades('BTC/USDT')
  assert.equal(
    all.map((t) => t.id),
    held.map((t) => t.id),
  )
  assert.ok(all.every((t) => t.fee?.cost === 0.000001 && t.fee.currency === 'BTC' && t.side === 'buy' && t.takerOrMaker === 'taker'))
  assert.equal(
    (await exchange.fetchMyTrades('BTC/USDT', undefined, 2)).map((t) => t.id),
    held.slice(1).map((t) => t.id),
  )
  assert.equal(
    (await exchange.fetchMyTrades('BTC/USDT', held[1].time)).map((t) => t.id),
    held.filter((t) => t.time >= held[1].time).map((t) => t.id),
  )
  assert.equal(
    (await exchange.fetchMyTrades('BTC/USDT', undefined, undefined, { fromId: held[2].id })).map((t) => t.id),
    [held[2].id],
  )
})

test.run()
