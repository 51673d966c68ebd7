// Alerts through the risk gate (SPEC 16): a hook's SELL without an amount closes what that hook
// holds and nothing else (another hook's and the API's positions in the pair stay open); while
// trading is paused an alert that would open is refused 409 and logged, a reducing SELL passes; a
// risk limit refuses 422 with its RISK_LIMIT_BREACHED incident, committed with the alert's log row.
// PAPER orders fill at the next close, imported through the real `prices import`.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { checkedClient, importCloses } from '../trading/market.ts'
import type { Api } from '../venue/fixture-live.ts'
import { alertLog, createHook, message, refused, sendAlert } from './fixture.ts'

const test = suite('alerts: through the risk gate')
let server: Server
let api: Api
let acme: TenantFixture
let trader: string

// Each import is the next day's close: a PAPER order fills at the first close after it.
let day = 1
const nextClose = (price: number) => importCloses(server, [['BTC/USDT', `2025-03-${String(++day).padStart(2, '0')}`, price]])

test.before(async () => {
  server = await startServer()
  api = await checkedClient(server)
  acme = await tenantFixture(server, 'acme')
  trader = await acme.key(['orders:write', 'trades:read', 'risk:read', 'risk:admin'])
  assert.is((await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 100, max_exposure_usd: 1e7 } })).status, 200)
  await importCloses(server, [['BTC/USDT', '2025-03-01', 100]])
})
test.after(async () => {
  await server?.stop()
})

const order = async (id: string) => (await api('GET', `/api/v1/orders/${id}`, { token: trader })).json
const tradeOf = async (buyOrderId: string) => {
  const { trade_id } = await order(buyOrderId)
  return (await api('GET', '/api/v1/trades?limit=1000', { token: trader })).json.find((t: any) => t.id === trade_id)
}
const accepted = async (answer: Awaited<ReturnType<typeof sendAlert>>): Promise<string> => {
  assert.is(answer.status, 200, answer.text)
  return answer.json.order_id
}

test("a sell without quantity closes the hook's own position only: another hook's and the API's stay open", async () => {
  const a = await createHook(api, acme.jwt, { name: 'a', mode: 'PAPER' })
  const b = await createHook(api, acme.jwt, { name: 'b', mode: 'PAPER' })
  const buyA = await accepted(await sendAlert(server, a.path, message(a, { pair: 'BTCUSDT', side: 'buy', quantity: 1 })))
  const buyB = await accepted(await sendAlert(server, b.path, message(b, { pair: 'BTCUSDT', side: 'buy', quantity: 2 })))
  const byApi = await api('POST', '/api/v1/orders', { token: trader, body: { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 3 } })
  assert.is(byApi.status, 200, byApi.text)
  await nextClose(110)
  for (const id of [buyA, buyB, byApi.json.id]) assert.is((await order(id)).status, 'FILLED')

  const close = await accepted(await sendAlert(server, a.path, message(a, { pair: 'BTC/USDT', side: 'sell' })))
  const sell = await order(close)
  assert.equal([sell.side, sell.quantity, sell.alert_hook_id, sell.source], ['SELL', 1, a.id, 'alert'])
  // Its SELL already covers what the hook holds: a second one has nothing left to close.
  refused(await sendAlert(server, a.path, message(a, { pair: 'BTC/USDT', side: 'sell' })), 400, 'validation_failed', 'side')
  await nextClose(120)
  assert.is((await order(close)).status, 'FILLED')
  assert.is((await tradeOf(buyA)).status, 'CLOSED')
  assert.is((await tradeOf(buyB)).status, 'OPEN')
  assert.is((await tradeOf(buyB)).quantity, 2)
  assert.is((await tradeOf(byApi.json.id)).status, 'OPEN')
  assert.is((await tradeOf(byApi.json.id)).quantity, 3)

  const none = await sendAlert(server, a.path, message(a, { pair: 'BTC/USDT', side: 'sell' }))
  refused(none, 400, 'validation_failed', 'side')
  const logged = (await alertLog(api, acme.jwt, a.id))[0]
  assert.equal([logged.outcome, logged.code, logged.reason], ['REFUSED', 'validation_failed', none.json.detail])
  // A sell of a stated quantity is held to the hook's position too.
  refused(await sendAlert(server, b.path, message(b, { pair: 'BTC/USDT', side: 'sell', quantity: 2.5 })), 400, 'validation_failed', 'quantity')
})

test('while paused an opening alert is 409 trading_paused and logged; a reducing sell passes', async () => {
  const hook = await createHook(api, acme.jwt, { name: 'paused', mode: 'PAPER' })
  const buy = await accepted(await sendAlert(server, hook.path, message(hook, { pair: 'BTC/USDT', side: 'buy', quantity: 0.5 })))
  await nextClose(121)
  assert.is((await order(buy)).status, 'FILLED')
  const paused = await api('POST', '/api/v1/risk/kill-switch', { token: trader, body: { action: 'PAUSE', pause: true, reason: 'alerts test' } })
  assert.is(paused.status, 200, paused.text)
  try {
    const opening = await sendAlert(server, hook.path, message(hook, { pair: 'BTC/USDT', side: 'buy', quantity: 0.5 }))
    refused(opening, 409, 'trading_paused')
    const logged = (await alertLog(api, acme.jwt, hook.id))[0]
    assert.equal([logged.outcome, logged.code, logged.order_id], ['REFUSED', 'trading_paused', null])
    const reducing = await accepted(await sendAlert(server, hook.path, message(hook, { pair: 'BTC/USDT', side: 'sell' })))
    assert.equal([(await order(reducing)).side, (await order(reducing)).quantity], ['SELL', 0.5])
    assert.is((await alertLog(api, acme.jwt, hook.id))[0].outcome, 'ACCEPTED')
  } finally {
    assert.is((await api('POST', '/api/v1/risk/kill-switch', { token: trader, body: { action: 'RESUME', pause: false } })).status, 200)
  }
})

test('a risk limit refuses 422 with its incident, committed with the REFUSED log row', async () => {
  const hook = await createHook(api, acme.jwt, { name: 'big spender', mode: 'PAPER' })
  assert.is((await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_exposure_usd: 2000 } })).status, 200)
  try {
    const answer = await sendAlert(server, hook.path, message(hook, { pair: 'BTC/USDT', side: 'buy', notional_usd: '5000' }))
    refused(answer, 422, 'risk_limit_exceeded')
    const incident = /incident (inc_[0-9A-Z]+)/.exec(answer.json.detail)?.[1]
    assert.ok(incident, answer.json.detail)
    const incidents = (await api('GET', '/api/v1/risk/incidents', { token: trader })).json
    const recorded = incidents.find((i: any) => i.id === incident)
    assert.is(recorded.action, 'RISK_LIMIT_BREACHED')
    assert.is(recorded.actor, `alert hook big spender (${hook.id})`)
    const logged = (await alertLog(api, acme.jwt, hook.id))[0]
    assert.equal([logged.outcome, logged.code, logged.reason], ['REFUSED', 'risk_limit_exceeded', answer.json.detail])
  } finally {
    assert.is((await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_exposure_usd: 1e7 } })).status, 200)
  }
})

test('an order the tenant cannot place is refused as the API refuses it, and logged: no price for the pair', async () => {
  const hook = await createHook(api, acme.jwt, { name: 'unpriced', mode: 'PAPER' })
  const answer = await sendAlert(server, hook.path, message(hook, { pair: 'DOGEUSDT', side: 'buy', quantity: 10 }))
  refused(answer, 422, 'no_price')
  assert.match(answer.json.detail, /DOGE\/USDT/)
  assert.equal(
    (await alertLog(api, acme.jwt, hook.id)).map((l) => [l.outcome, l.code]),
    [['REFUSED', 'no_price']],
  )
})

test.run()
