// LIVE orders when the venue misbehaves in ways Bulwark cannot prevent (SPEC 10, "What a LIVE ledger
// must say"): a clock that drifts from the venue's (-1021) on a send, a cancel and the kill switch's
// cancels; a send that gets no answer while every lookup fails (UNKNOWN, then found absent and placed
// once); and a venue that closes idle connections. The oracle is the venue's own book and request log.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import { type RequestRecord, startVenue, type Venue, venueKey } from '../support/venue/index.ts'
import { checkedClient, near } from '../trading/market.ts'
import { type Api, eventually, liveSuite, liveServer, liveTenant, type LiveTenant, orderReaches, outboxOf, priceBoth } from './fixture-live.ts'

const test = suite('venue: LIVE orders through clock skew, lost answers and closed connections')
let venue: Venue
let server: Server
let api: Api

liveSuite(test, (s) => ({ venue, server, api } = s))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const order = (on: Api, t: LiveTenant, body: Record<string, unknown>) =>
  on('POST', '/api/v1/orders', { token: t.trader, body: { pair: 'BTC/USDT', side: 'BUY', mode: 'LIVE', ...body } })
const marketBuy = (t: LiveTenant, on = api) => order(on, t, { type: 'MARKET', quantity: 0.01 })
const limitBuy = (t: LiveTenant, price: number) => order(api, t, { type: 'LIMIT', quantity: 0.01, limit_price: price })
const venueHealth = async (): Promise<string | undefined> => (await api('GET', '/api/v1/health')).json.venues.binance

/** The account's calls to /api/v3/order (and the venue's time, asked without a key), as "METHOD path status code". */
async function orderCalls(account: string, methods: string[]): Promise<string[]> {
  const { apiKey } = venueKey(account, account)
  const wanted = (r: RequestRecord) => (r.apiKey === apiKey && methods.includes(r.method) && r.path === '/api/v3/order') || r.path === '/api/v3/time'
  return (await venue.requests()).filter(wanted).map((r) => [r.method, r.path, r.status ?? r.fault, r.code].filter((part) => part !== undefined).join(' '))
}

/**
 * The calls met the skew and the clock was set by the venue's before the one that went through:
 * whichever noticed first (this call's own -1021, or a poll's or a reconciliation's, which set the
 * session's clock too), nothing but -1021 refusals before the venue's time was asked.
 */
function assertResynced(calls: string[], method: string, succeeded: number): void {
  const time = calls.indexOf('GET /api/v3/time 200')
  assert.ok(time >= 0, `the venue's time was asked: ${calls}`)
  const ok = calls.filter((c) => c === `${method} /api/v3/order 200`)
  assert.is(ok.length, succeeded, `${calls}`)
  assert.ok(calls.indexOf(ok[0]) > time, `sent once more after the resync: ${calls}`)
  const other = calls.filter((c) => c.startsWith(method) && !ok.includes(c))
  assert.ok(other.length <= succeeded && other.every((c) => c === `${method} /api/v3/order 400 -1021`), `only -1021 refusals: ${calls}`)
}

test('clock skew on a send: refused -1021, the clock set by the venue, sent once more, FILLED and placed once', async () => {
  const skew = await liveTenant(server, api, venue, 'skew', { USDT: 100_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-01', 65_000, 65_000)
  await venue.clearRequests()
  // Bulwark's clock runs 10 s ahead of the venue's, which takes timestamps at most 1 s ahead.
  await venue.setClockOffset(-10_000)
  try {
    const placed = await marketBuy(skew)
    assert.is(placed.status, 200, placed.text)
    const filled = await orderReaches(api, skew.trader, placed.json.id, ['FILLED'])
    near(filled.filled_quantity, 0.01, 'filled')
    const onVenue = await venue.orders({ account: 'skew', clientOrderId: placed.json.id })
    assert.equal(
      onVenue.map((o) => o.status),
      ['FILLED'],
      'placed exactly once',
    )
    assertResynced(await orderCalls('skew', ['POST']), 'POST', 1)
  } finally {
    await venue.setClockOffset(0)
  }
})

test('clock skew on cancels: a DELETE and the kill switch resynchronise, cancel on the venue and leave nothing open', async () => {
  const drift = await liveTenant(server, api, venue, 'drift', { USDT: 100_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-02', 65_000, 65_000)
  try {
    const resting = await limitBuy(drift, 60_000)
    assert.is(resting.status, 200, resting.text)
    await orderReaches(api, drift.trader, resting.json.id, ['OPEN'])
    await venue.clearRequests()
    await venue.setClockOffset(-20_000)
    const deleted = await api('DELETE', `/api/v1/orders/${resting.json.id}`, { token: drift.trader })
    assert.is(deleted.status, 200, deleted.text)
    await orderReaches(api, drift.trader, resting.json.id, ['CANCELED'])
    assert.equal(
      (await venue.orders({ account: 'drift', clientOrderId: resting.json.id })).map((o) => o.status),
      ['CANCELED'],
    )
    assertResynced(await orderCalls('drift', ['DELETE']), 'DELETE', 1)

    // Two more resting orders (signed with the clock Bulwark took from the venue), then the venue's
    // clock jumps back: Bulwark's timestamps are now 20 s behind it, outside the recvWindow.
    const ids: string[] = []
    for (const price of [59_000, 58_000]) ids.push((await limitBuy(drift, price)).json.id)
    for (const id of ids) await orderReaches(api, drift.trader, id, ['OPEN'])
    assert.is((await venue.orders({ account: 'drift', open: true })).length, 2)
    await venue.clearRequests()
    await venue.setClockOffset(0)
    const pulled = await api('POST', '/api/v1/risk/kill-switch', { token: drift.trader, body: { action: 'CANCEL_AND_PAUSE', pause: true } })
    assert.is(pulled.status, 200, pulled.text)
    assert.is(pulled.json.canceled_orders, 2)
    for (const id of ids) await orderReaches(api, drift.trader, id, ['CANCELED'])
    assert.is((await venue.orders({ account: 'drift', open: true })).length, 0, 'nothing left open on the venue')
    assertResynced(await orderCalls('drift', ['DELETE']), 'DELETE', 2)
  } finally {
    await venue.setClockOffset(0)
  }
})

test('no answer and no lookup: UNKNOWN after recvWindow + 10 s, working for the limits and DELETE /venue; then placed once', async () => {
  const lost = await liveTenant(server, api, venue, 'lost', { USDT: 100_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-03', 65_000, 65_000)
  const limited = await api('PATCH', '/api/v1/risk/profile', { token: lost.tenant.jwt, body: { max_open_trades: 1 } })
  assert.is(limited.status, 200, limited.text)
  await venue.clearRequests()
  // The send hangs (never executed: ccxt gives up after its 10 s timeout) and every lookup meets a 503.
  await venue.fault({ kind: 'hang', match: { method: 'POST', path: '/api/v3/order' } })
  await venue.fault({ kind: 'status', status: 503, match: { method: 'GET', path: '/api/v3/order' } })
  let id = ''
  try {
    const started = Date.now()
    const placed = await marketBuy(lost)
    assert.is(placed.status, 200, placed.text)
    id = placed.json.id
    const unknown = await orderReaches(api, lost.trader, id, ['UNKNOWN'], 30_000)
    const after = Date.now() - started
    assert.ok(after >= 15_000 && after < 25_000, `UNKNOWN ${after} ms after the send: recvWindow (5 s) + 10 s, plus a lookup's pace`)
    assert.match(unknown.reject_reason, new RegExp(`order ${id} may be on the venue and could not be looked up: .*503`))
    assert.is((await outboxOf(server, id))?.state, 'UNKNOWN')
    assert.is(await venueHealth(), 'degraded')
    const disconnect = await api('DELETE', '/api/v1/venue', { token: lost.tenant.jwt })
    assert.is(disconnect.status, 409, disconnect.text)
    assert.is(disconnect.json.code, 'live_orders_open')
    const second = await marketBuy(lost)
    assert.is(second.status, 422, second.text)
    assert.is(second.json.code, 'risk_limit_exceeded')
    assert.equal(await venue.orders({ account: 'lost' }), [], 'the hung send placed nothing')
  } finally {
    await venue.clearFaults()
  }
  const filled = await orderReaches(api, lost.trader, id, ['FILLED'])
  near(filled.filled_quantity, 0.01, 'filled')
  assert.equal(
    (await venue.orders({ account: 'lost', clientOrderId: id })).map((o) => o.status),
    ['FILLED'],
    'placed exactly once',
  )
  // One send lost, lookups that failed and went on, one that found nothing once the send could no
  // longer land, then the one send.
  const calls = (await orderCalls('lost', ['POST', 'GET'])).filter((c) => !c.includes('/time'))
  assert.ok(calls.filter((c) => c === 'GET /api/v3/order 503').length >= 3, `${calls}`)
  assert.equal(
    calls.filter((c) => c !== 'GET /api/v3/order 503'),
    ['POST /api/v3/order hang', 'GET /api/v3/order 400 -2013', 'POST /api/v3/order 200'],
  )
  await eventually('the venue ok again', async () => ((await venueHealth()) === 'ok' ? true : undefined))
})

test('a venue that closes idle connections: each order after a quiet spell placed once, on a new connection, without a lookup', async () => {
  const quiet = await startVenue({ keepAliveMs: 300 })
  const quietServer = await liveServer(quiet)
  try {
    const on = await checkedClient(quietServer)
    const idle = await liveTenant(quietServer, on, quiet, 'idle', { USDT: 100_000 })
    await priceBoth(quietServer, quiet, 'BTC/USDT', '2025-03-01', 65_000, 65_000)
    const ids: string[] = []
    const quietSince: number[] = []
    for (let i = 0; i < 3; i++) {
      if (i > 0) {
        quietSince.push(Date.now())
        await sleep(1000) // over three times the venue's keep-alive: it has closed every idle connection
      }
      const placed = await marketBuy(idle, on)
      assert.is(placed.status, 200, placed.text)
      ids.push(placed.json.id)
      await orderReaches(on, idle.trader, placed.json.id, ['FILLED'])
    }
    const { apiKey } = venueKey('idle', 'idle')
    const requests = (await quiet.requests()).filter((r) => r.apiKey === apiKey)
    for (const id of ids) {
      assert.equal(
        (await quiet.orders({ account: 'idle', clientOrderId: id })).map((o) => o.status),
        ['FILLED'],
        `order ${id} placed exactly once`,
      )
    }
    const posts = requests.filter((r) => r.method === 'POST' && r.path === '/api/v3/order')
    assert.equal(
      posts.map((r) => [r.params.newClientOrderId, r.status]),
      ids.map((id) => [id, 200]),
      'one send per order, each answered',
    )
    assert.equal(
      requests.filter((r) => r.path === '/api/v3/order' && r.method === 'GET'),
      [],
      'no order needed a lookup',
    )
    // The quiet spells were real: the venue had closed what carried every earlier request, so each
    // order after one went out on a new connection, with nothing lost.
    const all = await quiet.requests()
    for (const [n, since] of quietSince.entries()) {
      const post = posts[n + 1]
      assert.ok(!all.some((r) => r.connection === post.connection && r.at < since), `order ${n + 2} on connection ${post.connection}, used before the quiet`)
    }
  } finally {
    await quietServer.stop()
    await quiet.close()
  }
})

test.run()
