// The venue kept warm after a tenant's orders (src/trading/live/warmth.ts), through the real server,
// executor, ccxt and the test venue (a Node server: idle connections closed after 5 s). Once a LIVE
// order is done and its lane has nothing to call the venue for, the lane reads the traded pair's
// price every 2 s: the pair's mark stays fresh, and the next order goes out on a connection those
// reads kept open instead of a new one. A tenant that never traded is read for nothing.
import { setTimeout as sleep } from 'node:timers/promises'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Server } from '../support/harness.ts'
import type { Venue } from '../support/venue/index.ts'
import { withDb } from '../trading/market.ts'
import { type Api, eventually, liveSuite, liveTenant, orderReaches, outboxOf, priceBoth } from './fixture-live.ts'

const test = suite('venue: the venue kept warm after orders')
let venue: Venue
let server: Server
let api: Api

liveSuite(test, (s) => ({ venue, server, api } = s))

const resting = (id: string) => eventually(`order ${id} on the venue`, async () => ((await outboxOf(server, id))?.state === 'OPEN' ? true : undefined))
const markOf = (slug: string) =>
  withDb(server, (db) =>
    db.get<{ marked_at: string }>("SELECT m.marked_at FROM venue_marks m JOIN tenants t ON t.id = m.tenant_id WHERE t.slug = ? AND m.pair = 'BTC/USDT'", [
      slug,
    ]),
  )

test('after an order the pair is read every 2 s: its mark fresh, and the next order on a connection kept open', async () => {
  const warm = await liveTenant(server, api, venue, 'warm', { USDT: 100_000 })
  await liveTenant(server, api, venue, 'cold', { USDT: 100_000 })
  await priceBoth(server, venue, 'BTC/USDT', '2025-03-01', 65_000, 65_000)
  const limitBuy = (price: number) =>
    api('POST', '/api/v1/orders', {
      token: warm.trader,
      body: { pair: 'BTC/USDT', side: 'BUY', type: 'LIMIT', quantity: 0.01, limit_price: price, mode: 'LIVE' },
    })
  const first = await limitBuy(60_000)
  assert.is(first.status, 200, first.text)
  await resting(first.json.id)
  const canceled = await api('DELETE', `/api/v1/orders/${first.json.id}`, { token: warm.trader })
  assert.ok(canceled.status < 300, canceled.text)
  await orderReaches(api, warm.trader, first.json.id, ['CANCELED'])

  // Over the venue's 5 s keep-alive, with nothing working: no order to poll, no protection.
  const quietSince = Date.now()
  await sleep(6500)
  const reads = (await venue.requests()).filter((r) => r.at >= quietSince && r.path === '/api/v3/ticker/24hr')
  assert.ok(reads.length >= 2, `the pair read at least twice in 6.5 s of quiet (${reads.length})`)
  assert.ok(
    reads.every((r) => r.params.symbol === 'BTCUSDT'),
    'only the traded pair is read',
  )
  const mark = await markOf('warm')
  assert.ok(mark && Date.now() - Date.parse(mark.marked_at) < 3500, `the mark read within the last 3.5 s (${mark?.marked_at})`)
  assert.is(await markOf('cold'), undefined, 'a tenant that never traded has no mark read for it')

  const second = await limitBuy(60_100)
  assert.is(second.status, 200, second.text)
  await resting(second.json.id)
  const post = (await venue.requests()).find((r) => r.method === 'POST' && r.path === '/api/v3/order' && r.params.newClientOrderId === second.json.id)
  assert.ok(post, 'the second order reached the venue')
  assert.ok(
    reads.some((r) => r.connection === post.connection),
    `the second order went out on connection ${post.connection}, one the quiet's reads kept open (${[...new Set(reads.map((r) => r.connection))].join(', ')})`,
  )
  await api('DELETE', `/api/v1/orders/${second.json.id}`, { token: warm.trader })
})

test.run()
