// Fitting orders to the market and placing them at most once, through the real ccxt against the test
// venue, under each fault of SPEC 10 (down, timeouts, dropped answers, 5xx, 429 with Retry-After,
// clock skew, insufficient balance) and Binance's reuse of a finished order's client order id.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { prng } from '../../src/shared/prng.ts'
import { fitToMarket, placeOnce } from '../../src/venues/placement.ts'
import { CATALOGUE_SYMBOLS, startVenue, type Venue } from '../support/venue/index.ts'
import { refusal } from './fixture.ts'
import { account as accountOn, limitBuy, marketBuy } from './fixture-placement.ts'

const test = suite('venue: placing orders at most once')
let venue: Venue
const account = (balances?: Record<string, number>) => accountOn(venue, balances)

test.before(async () => {
  // FOO's minimum is ten steps: an amount can round down to below it.
  const foo = { base: 'FOO', quote: 'USDT', tickSize: '0.01', stepSize: '0.001', minQty: '0.01', minNotional: '5', startPrice: 10 }
  venue = await startVenue({ symbols: [...CATALOGUE_SYMBOLS, foo] })
  await venue.setPrice('BTC/USDT', 60_000)
})
test.after(async () => {
  await venue.close()
})

test('fitToMarket rounds amounts down to the step and prices to the tick, either side', async () => {
  const { exchange } = await account()
  const random = prng(12)
  for (let i = 0; i < 200; i++) {
    const amountUnits = 1 + Math.floor(random() * 1e10) // 1e-10 BTC
    const priceUnits = 50_000_000 + Math.floor(random() * 1e7) // 0.001 USDT
    if (priceUnits % 10 === 5) continue // a tie: which way ccxt breaks it is not the point here
    const side = i % 2 ? 'sell' : 'buy'
    const fit = await fitToMarket(exchange, { symbol: 'BTC/USDT', side, type: 'limit', amount: amountUnits / 1e10, price: priceUnits / 1000 })
    const amount = Math.floor(amountUnits / 1e5) / 1e5 // whole steps of 0.00001
    const price = Math.round(priceUnits / 10) / 100
    if (amount < 0.00001 || amount * price < 5) assert.is(fit.ok, false)
    else assert.equal(fit, { ok: true, amount, price })
  }
})

test('fitToMarket refuses what is below the minimum amount, price or cost, naming the limit and the values', async () => {
  const { exchange } = await account()
  const refused = async (order: Parameters<typeof fitToMarket>[1]) => {
    const fit = await fitToMarket(exchange, order)
    return fit.ok ? 'fits' : fit.reason
  }
  const btc = { symbol: 'BTC/USDT', side: 'buy', type: 'limit', price: 50_000 } as const
  assert.is(await refused({ ...btc, amount: 0.000001 }), 'amount 0.000001 BTC is below the minimum 0.00001 of BTC/USDT')
  assert.is(await refused({ ...btc, amount: 0.00005 }), 'cost 2.5 USDT (0.00005 BTC x 50000) is below the minimum 5 of BTC/USDT')
  const market = { symbol: 'BTC/USDT', side: 'sell', type: 'market', referencePrice: 60_000 } as const
  assert.is(await refused({ ...market, amount: 0.000089 }), 'cost 4.8 USDT (0.00008 BTC x 60000) is below the minimum 5 of BTC/USDT')
  assert.is(await refused({ ...market, amount: 0.0001 }), 'fits')
  assert.is(await refused({ symbol: 'DOGE/USDT', side: 'buy', type: 'market', amount: 0.5 }), 'amount 0.5 DOGE is below the minimum 1 of DOGE/USDT')
  const foo = { symbol: 'FOO/USDT', side: 'sell', type: 'limit', price: 1000 } as const
  assert.is(await refused({ ...foo, amount: 0.0199 }), 'fits')
  assert.is(await refused({ ...foo, amount: 0.0099 }), "amount 0.0099 FOO (0.009 at the market's precision) is below the minimum 0.01 of FOO/USDT")
  const xrp = { symbol: 'XRP/USDT', side: 'buy', type: 'limit', amount: 100_000 } as const
  assert.is(await refused({ ...xrp, price: 0.00004 }), 'price 0.00004 USDT is below the minimum 0.0001 of XRP/USDT')
  assert.is(await refused({ ...xrp, symbol: 'XRP/BTC', price: 1 }), 'binance has no market XRP/BTC')
  const mistake = await refusal(fitToMarket(exchange, { ...market, amount: 1, price: 60_000 }))
  assert.instance(mistake, TypeError) // ccxt would turn the price into quoteOrderQty
})

test('an order below the minimum is rejected by placeOnce before anything leaves', async () => {
  const { exchange } = await account()
  const result = await placeOnce(exchange, limitBuy('ord_small', 0.00005))
  assert.equal(result, { outcome: 'rejected', reason: 'cost 2.5 USDT (0.00005 BTC x 50000) is below the minimum 5 of BTC/USDT', unanswered: false })
  assert.equal(await venue.requests({ method: 'POST' }), [])
})

test('a LIMIT and a MARKET order: placed once, fitted, under the client order id; MARKET by quantity', async () => {
  const { exchange, sent, held } = await account()
  const limit = await placeOnce(exchange, { ...limitBuy('ord_limit'), amount: 0.0123456, price: 50_000.004 })
  assert.equal([limit.outcome, limit.venueOrder?.clientOrderId, limit.venueOrder?.status], ['placed', 'ord_limit', 'open'])
  assert.equal(
    (await held('ord_limit')).map((o) => [o.origQty, o.price]),
    [['0.01234000', '50000.00000000']],
  )
  const market = await placeOnce(exchange, marketBuy('ord_market'))
  assert.equal([market.outcome, market.venueOrder?.status, market.venueOrder?.filled], ['placed', 'closed', 0.001])
  const post = (await venue.requests({ method: 'POST' })).at(-1)!
  assert.equal([post.params.quantity, post.params.quoteOrderQty, post.params.newClientOrderId], ['0.001', undefined, 'ord_market'])
  assert.equal(await sent(), ['POST order 200', 'POST order 200'])
})

test('placed, then the answer dropped: found by its client order id, one order', async () => {
  const { exchange, sent, held } = await account()
  await venue.fault({ kind: 'drop', match: { method: 'POST', path: '/api/v3/order' }, times: 1 })
  const result = await placeOnce(exchange, limitBuy('ord_drop'))
  assert.is(result.outcome, 'placed')
  assert.match(result.reason!, /^found by its client order id after: .*other side closed/)
  assert.is(result.unanswered, true)
  assert.equal(await sent(), ['POST order -', 'GET order 200'])
  assert.is((await held('ord_drop')).length, 1)
})

test('no answer within the timeout: found when the venue did it; sent again only once it cannot land', async () => {
  const { exchange, sent, held } = await account()
  exchange.timeout = 1000
  await venue.fault({ kind: 'hang', execute: true, match: { method: 'POST', path: '/api/v3/order' }, times: 1 })
  assert.is((await placeOnce(exchange, marketBuy('ord_slow'))).outcome, 'placed')
  assert.equal(await sent(), ['POST order -', 'GET order 200'])
  await venue.clearRequests()
  // Not done: not found, and again once recvWindow (+2 s) has passed; only then sent again.
  await venue.fault({ kind: 'hang', match: { method: 'POST', path: '/api/v3/order' }, times: 1 })
  assert.is((await placeOnce(exchange, marketBuy('ord_lost'))).outcome, 'placed')
  assert.equal(await sent(), ['POST order -', 'GET order 400', 'GET order 400', 'POST order 200'])
  assert.equal([(await held('ord_slow')).length, (await held('ord_lost')).length], [1, 1])
})

test('a 5xx: one order when the venue did it, sent again when it did not', async () => {
  const { exchange, sent, held } = await account()
  await venue.fault({ kind: 'status', status: 503, execute: true, match: { method: 'POST', path: '/api/v3/order' }, times: 1 })
  assert.is((await placeOnce(exchange, marketBuy('ord_503_done'))).outcome, 'placed')
  assert.equal(await sent(), ['POST order 503', 'GET order 200'])
  await venue.clearRequests()
  await venue.fault({ kind: 'status', status: 500, match: { method: 'POST', path: '/api/v3/order' }, times: 1 })
  assert.is((await placeOnce(exchange, marketBuy('ord_500_not'))).outcome, 'placed')
  assert.equal(await sent(), ['POST order 500', 'GET order 400', 'GET order 400', 'POST order 200'])
  assert.equal([(await held('ord_503_done')).length, (await held('ord_500_not')).length], [1, 1])
})

test('venue down: unknown after a few refused connections, no order; back up, the retry places it once', async () => {
  const { exchange, sent, held } = await account()
  await venue.down()
  const down = await placeOnce(exchange, limitBuy('ord_down'), { backoffMs: 10 })
  await venue.up()
  assert.is(down.outcome, 'unknown')
  assert.match(down.reason!, /^order ord_down not placed after 3 attempts: .*ECONNREFUSED/)
  assert.equal(await held('ord_down'), [])
  const retry = await placeOnce(exchange, limitBuy('ord_down'), { maybeSent: true })
  assert.equal([retry.outcome, 'reason' in retry], ['placed', false])
  assert.equal(await sent(), ['GET order 400', 'POST order 200'])
  assert.is((await held('ord_down')).length, 1)
})

test('insufficient balance: rejected with the venue code and message, sent once', async () => {
  const { exchange, sent, held } = await account({ USDT: 10 })
  const result = await placeOnce(exchange, marketBuy('ord_poor'))
  assert.equal(result, { outcome: 'rejected', reason: '-2010 Account has insufficient balance for requested action.', unanswered: false })
  assert.equal(await sent(), ['POST order 400'])
  assert.equal(await held('ord_poor'), [])
})

test('429: Retry-After waited out, then placed once; a wait past maxWaitMs is unknown, sent once', async () => {
  const { exchange, sent, held } = await account()
  try {
    await venue.setRateLimit({ weight: 0, windowMs: 1000 }) // every request refused, Retry-After: 1
    const pending = placeOnce(exchange, limitBuy('ord_429'), { attempts: 5 })
    while ((await sent()).length === 0) await new Promise((resolve) => setTimeout(resolve, 20))
    await venue.setRateLimit({ weight: 6000 })
    assert.is((await pending).outcome, 'placed')
    const posts = await venue.requests({ method: 'POST' })
    assert.equal(
      posts.slice(0, -1).map((r) => [r.status, r.code]),
      posts.slice(0, -1).map(() => [429, -1003]),
    )
    assert.is(posts.at(-1)!.status, 200)
    assert.ok(posts.at(-1)!.at - posts.at(-2)!.at >= 1000 - 5) // Retry-After: 1 (timers may round down by a ms)
    assert.is((await held('ord_429')).length, 1)
    await venue.clearRequests()
    await venue.setRateLimit({ weight: 0, windowMs: 600_000 })
    const impatient = await placeOnce(exchange, limitBuy('ord_429_long'), { maxWaitMs: 5_000 })
    assert.equal([impatient.outcome, impatient.retryAfterMs], ['unknown', 600_000])
    assert.match(impatient.reason!, /^-1003 Too much request weight used; .* \(the venue asks to wait 600 s\)$/)
    assert.equal(await sent(), ['POST order 429'])
  } finally {
    await venue.setRateLimit({ weight: 6000 })
  }
})

test('clock skew (-1021): the clock set by the venue and one more send; refused again, rejected with nothing placed; a lookup stays unknown', async () => {
  const { exchange, sent, held } = await account()
  // The host's clock runs 10 s ahead of the venue's: every signed request is refused for its timestamp.
  await venue.setClockOffset(-10_000)
  let resyncs = 0
  const resyncClock = async () => {
    resyncs++
    await exchange.loadTimeDifference()
  }
  try {
    const refused = await placeOnce(exchange, limitBuy('ord_skew'), { resyncClock: async () => void resyncs++ })
    assert.is(refused.outcome, 'rejected', 'a clock the venue still refuses placed nothing: rejected, never retried forever')
    assert.match(refused.reason ?? '', /^-1021 Timestamp for this request was 1000ms ahead of the server's time\./, refused.reason)
    assert.equal(await sent(), ['POST order 400', 'POST order 400'], 'one more send after the resync, then no loop')
    const lookup = await placeOnce(exchange, limitBuy('ord_skew'), { maybeSent: true })
    assert.is(lookup.outcome, 'unknown')
    assert.is(
      lookup.reason,
      "order ord_skew may be on the venue and could not be looked up: -1021 Timestamp for this request was 1000ms ahead of the server's time.",
    )
    assert.equal(await held('ord_skew'), [])

    await venue.clearRequests()
    const placed = await placeOnce(exchange, limitBuy('ord_skew_resynced'), { resyncClock })
    assert.is(placed.outcome, 'placed', placed.reason)
    assert.equal(await sent(), ['POST order 400', 'POST order 200'], 'refused, the clock set by the venue, sent once more')
    assert.is((await held('ord_skew_resynced')).length, 1)
    assert.ok(Math.abs(Number(exchange.options.timeDifference) - 10_000) < 1000, `time difference ${exchange.options.timeDifference}`)
  } finally {
    await venue.setClockOffset(0)
    exchange.options.timeDifference = 0
  }
  assert.is(resyncs, 2)
})

test('the reuse trap: a retry of an order that FILLED finds it, and no second order is made', async () => {
  const { exchange, sent, held } = await account()
  const first = await placeOnce(exchange, marketBuy('ord_reuse'))
  const again = await placeOnce(exchange, marketBuy('ord_reuse'), { maybeSent: true })
  assert.equal([again.outcome, again.venueOrder?.id, again.venueOrder?.status], ['placed', first.venueOrder?.id, 'closed'])
  assert.equal(await sent(), ['POST order 200', 'GET order 200'])
  assert.is((await held('ord_reuse')).length, 1)
  // An open order under the id, sent again without maybeSent: the venue's "duplicate" leads to it.
  await venue.clearRequests()
  await placeOnce(exchange, limitBuy('ord_open'))
  const dup = await placeOnce(exchange, limitBuy('ord_open'))
  assert.equal([dup.outcome, dup.reason], ['placed', 'found by its client order id after: -2010 Duplicate order sent.'])
  assert.equal(await sent(), ['POST order 200', 'POST order 400', 'GET order 200'])
  assert.is((await held('ord_open')).length, 1)
})

test.run()
