// Alerts in (SPEC 16), sent as TradingView sends them (a POST of the message, text/plain or
// application/json, no header of ours) to a real server: an accepted alert is a PAPER order of the
// tenant with the hook's model, shown by GET /api/v1/orders and logged ACCEPTED with its order; the
// same id again places nothing; a wrong secret, an unknown or revoked hook, a source outside the
// hook's CIDRs, an oversized or unparseable body write nothing (a counter at most); malformed and
// stale messages are refused naming the field, and logged; the 61st alert of a minute is 429.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { rawExchange } from '../support/raw-http.ts'
import { checkedClient, importCloses } from '../trading/market.ts'
import type { Api } from '../venue/fixture-live.ts'
import { alertLog, alertRows, createHook, freshMinute, type Hook, hookOf, message, refused, sendAlert, TRADINGVIEW_ADDRESS } from './fixture.ts'

const test = suite('alerts: the receiver')
let server: Server
let api: Api
let acme: TenantFixture
let reader: string
let hook: Hook

test.before(async () => {
  // 127.0.0.1 is the trusted proxy: an X-Forwarded-For hop then says where a sender is.
  server = await startServer({ args: ['--trusted-proxy', '127.0.0.1/32'] })
  api = await checkedClient(server)
  acme = await tenantFixture(server, 'acme')
  reader = await acme.key(['trades:read'])
  assert.is((await api('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: ['trend-follower'] } })).status, 200)
  assert.is((await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 1000, max_exposure_usd: 1e9 } })).status, 200)
  await importCloses(server, [
    ['BTC/USDT', '2025-03-01', 100],
    ['ETH/USDT', '2025-03-01', 50],
  ])
  hook = await createHook(api, acme.jwt, { name: 'tradingview', mode: 'PAPER', model_id: 'trend-follower' })
})
test.after(async () => {
  await server?.stop()
})

const order = async (id: string) => (await api('GET', `/api/v1/orders/${id}`, { token: reader })).json
const hookOrders = async (hookId: string) =>
  (await api('GET', '/api/v1/orders?limit=1000', { token: reader })).json.filter((o: any) => o.alert_hook_id === hookId)

let first: { message: Record<string, unknown>; orderId: string }

test('a TradingView alert (text/plain, placeholders as strings) is a PAPER order of the hook, with its model, answered at once', async () => {
  assert.is(hook.path, `/hooks/alerts/${hook.id}`)
  const sent = message(hook, { pair: 'BTCUSDT', side: 'buy', quantity: '0.5' })
  const started = performance.now()
  const answer = await sendAlert(server, hook.path, sent, { type: 'text' })
  assert.ok(performance.now() - started < 1000, 'answered within 1 s')
  assert.is(answer.status, 200, answer.text)
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/)
  assert.equal(Object.keys(answer.json).sort(), ['order_id', 'status'])
  assert.is(answer.json.status, 'PENDING')
  const placed = await order(answer.json.order_id)
  assert.is(placed.source, 'alert')
  assert.is(placed.alert_hook_id, hook.id)
  assert.is(placed.model_id, 'trend-follower')
  assert.is(placed.mode, 'PAPER')
  assert.is(placed.pair, 'BTC/USDT')
  assert.is(placed.side, 'BUY')
  assert.is(placed.type, 'MARKET')
  assert.is(placed.quantity, 0.5)
  first = { message: sent, orderId: placed.id }

  const logged = (await alertLog(api, acme.jwt, hook.id))[0]
  assert.is(logged.outcome, 'ACCEPTED')
  assert.is(logged.order_id, placed.id)
  assert.is(logged.alert_id, sent.id)
  const kept = JSON.parse(logged.message)
  assert.not.ok('secret' in kept, 'the log keeps the message without its secret')
  assert.is(kept.pair, 'BTCUSDT')
  assert.not.match(JSON.stringify(await alertRows(server, hook.id)), new RegExp(hook.secret))
})

test('application/json, a LIMIT sized in USD, side in capitals, a slash pair and epoch milliseconds', async () => {
  const sent = message(hook, { pair: 'eth/usdt', side: 'BUY', type: 'limit', price: 45, notional_usd: 100, timestamp: Date.now() })
  const answer = await sendAlert(server, hook.path, sent, { type: 'json' })
  assert.is(answer.status, 200, answer.text)
  const placed = await order(answer.json.order_id)
  assert.equal([placed.pair, placed.type, placed.limit_price, placed.notional_usd, placed.quantity], ['ETH/USDT', 'LIMIT', 45, 100, null])
})

test('the same id again is a duplicate: 200 with the first order, no second order, logged DUPLICATE', async () => {
  const before = (await hookOrders(hook.id)).length
  const again = await sendAlert(server, hook.path, first.message, { type: 'json' })
  assert.is(again.status, 200, again.text)
  assert.equal(again.json, { duplicate: true, order_id: first.orderId })
  assert.is((await hookOrders(hook.id)).length, before, 'no second order')
  const logged = (await alertLog(api, acme.jwt, hook.id))[0]
  assert.equal([logged.outcome, logged.order_id, logged.alert_id], ['DUPLICATE', first.orderId, first.message.id])
})

test('a wrong or missing secret is 401 and records nothing but the hook refused_count', async () => {
  const rows = (await alertRows(server, hook.id)).length
  const count = (await hookOf(api, acme.jwt, hook.id)).refused_count
  refused(await sendAlert(server, hook.path, { ...message(hook, { pair: 'BTC/USDT', side: 'buy', quantity: 1 }), secret: 'guess' }), 401, 'alert_unauthorized')
  const { secret: _s, ...unsigned } = message(hook, { pair: 'BTC/USDT', side: 'buy', quantity: 1 })
  refused(await sendAlert(server, hook.path, unsigned), 401, 'alert_unauthorized')
  // A secret of the right length, one character off: the comparison is of digests, in constant time.
  const near = `${hook.secret.slice(0, -1)}${hook.secret.endsWith('0') ? '1' : '0'}`
  refused(await sendAlert(server, hook.path, { ...message(hook, { pair: 'BTC/USDT', side: 'buy', quantity: 1 }), secret: near }), 401, 'alert_unauthorized')
  assert.is((await alertRows(server, hook.id)).length, rows, 'no log row')
  assert.is((await hookOf(api, acme.jwt, hook.id)).refused_count, count + 3)
})

test('an unknown or revoked hook is 404 not_found, recording nothing', async () => {
  const sent = message(hook, { pair: 'BTC/USDT', side: 'buy', quantity: 1 })
  refused(await sendAlert(server, `/hooks/alerts/ahk_01J${'A'.repeat(23)}`, sent), 404, 'not_found')
  refused(await sendAlert(server, '/hooks/alerts/not-a-hook', sent), 404, 'not_found')
  refused(await sendAlert(server, '/hooks/alerts', sent), 404, 'not_found')
  const doomed = await createHook(api, acme.jwt, { name: 'doomed', mode: 'PAPER' })
  assert.is((await sendAlert(server, doomed.path, message(doomed, { pair: 'BTC/USDT', side: 'buy', quantity: 0.1 }))).status, 200)
  assert.is((await api('DELETE', `/api/v1/alert-hooks/${doomed.id}`, { token: acme.jwt })).status, 200)
  refused(await sendAlert(server, doomed.path, message(doomed, { pair: 'BTC/USDT', side: 'buy', quantity: 0.1 })), 404, 'not_found')
  assert.is((await alertRows(server, doomed.id)).length, 1, 'only the alert before the revocation')
  assert.is((await hookOf(api, acme.jwt, doomed.id)).refused_count, 0)
  const other = await sendAlert(server, hook.path, sent, { method: 'PUT' })
  refused(other, 405, 'method_not_allowed')
  assert.is(other.headers.get('allow'), 'POST')
})

test("a sender outside the hook's source_cidrs is 403 source_forbidden, counted, not logged", async () => {
  const guarded = await createHook(api, acme.jwt, { name: 'tv only', mode: 'PAPER', source_cidrs: [`${TRADINGVIEW_ADDRESS}/32`] })
  const fromTv = await sendAlert(server, guarded.path, message(guarded, { pair: 'BTC/USDT', side: 'buy', quantity: 0.1 }), { from: TRADINGVIEW_ADDRESS })
  assert.is(fromTv.status, 200, fromTv.text)
  refused(await sendAlert(server, guarded.path, message(guarded, { pair: 'BTC/USDT', side: 'buy', quantity: 0.1 })), 403, 'source_forbidden')
  refused(
    await sendAlert(server, guarded.path, message(guarded, { pair: 'BTC/USDT', side: 'buy', quantity: 0.1 }), { from: '198.51.100.7' }),
    403,
    'source_forbidden',
  )
  // Checked before the secret: a stranger learns nothing of it.
  refused(await sendAlert(server, guarded.path, { secret: 'guess' }, { from: '198.51.100.7' }), 403, 'source_forbidden')
  assert.is((await alertRows(server, guarded.id)).length, 1)
  assert.is((await hookOf(api, acme.jwt, guarded.id)).refused_count, 3)
})

test('a body over 16,384 bytes is 413, one of 16,384 is read; an unparseable body is 400 naming body; neither is logged', async () => {
  const rows = (await alertRows(server, hook.id)).length
  const sent = JSON.stringify(message(hook, { pair: 'BTC/USDT', side: 'buy', quantity: 0.01 }))
  const padded = (size: number) => sent + ' '.repeat(size - Buffer.byteLength(sent))
  refused(await sendAlert(server, hook.path, undefined, { raw: padded(16_385) }), 413, 'payload_too_large')
  assert.is((await sendAlert(server, hook.path, undefined, { raw: padded(16_384) })).status, 200)
  // Chunked, without a Content-Length: counted as it arrives.
  const port = Number(new URL(server.url).port)
  const chunk = 'x'.repeat(8_000)
  const chunked = [0, 1, 2].map(() => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('')
  const streamed = await rawExchange(
    port,
    `POST ${hook.path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunked}0\r\n\r\n`,
  )
  assert.is(streamed.status, 413)
  assert.is(streamed.json.code, 'payload_too_large')
  for (const raw of ['', 'buy BTCUSDT now', '[1, 2]', '"text"', '{"secret": ']) {
    refused(await sendAlert(server, hook.path, undefined, { raw }), 400, 'invalid_json', 'body')
  }
  assert.is((await alertRows(server, hook.id)).length, rows + 1, 'only the alert of 16,384 bytes')
})

test('a malformed message is 400 naming the field, logged REFUSED with the code and why', async () => {
  const cases: [Record<string, unknown>, string, string][] = [
    [{ pair: 'BTC/USDT', side: 'long', quantity: 1 }, 'validation_failed', 'side'],
    [{ pair: 'BTC/USDT', quantity: 1 }, 'validation_failed', 'side'],
    [{ pair: 'XYZ', side: 'buy', quantity: 1 }, 'validation_failed', 'pair'],
    [{ side: 'buy', quantity: 1 }, 'validation_failed', 'pair'],
    [{ pair: 'BTC/USDT', side: 'buy' }, 'validation_failed', 'quantity'],
    [{ pair: 'BTC/USDT', side: 'buy', quantity: 'NaN' }, 'validation_failed', 'quantity'],
    [{ pair: 'BTC/USDT', side: 'buy', quantity: -1 }, 'validation_failed', 'quantity'],
    [{ pair: 'BTC/USDT', side: 'buy', quantity: 1, notional_usd: 10 }, 'validation_failed', 'quantity'],
    [{ pair: 'BTC/USDT', side: 'buy', quantity: 1, timestamp: 'yesterday' }, 'validation_failed', 'timestamp'],
    [{ pair: 'BTC/USDT', side: 'buy', quantity: 1, timestamp: Math.floor(Date.now() / 1000) }, 'validation_failed', 'timestamp'],
    [{ pair: 'BTC/USDT', side: 'buy', type: 'limit', quantity: 1 }, 'validation_failed', 'price'],
    [{ pair: 'BTC/USDT', side: 'buy', type: 'stop', quantity: 1 }, 'validation_failed', 'type'],
    [{ pair: 'BTC/USDT', side: 'buy', quantity: 1, price: '100' }, 'validation_failed', 'price'],
    [{ pair: 'BTC/USDT', side: 'sell', qty: 1 }, 'unknown_field', 'qty'],
  ]
  const before = (await hookOrders(hook.id)).length
  for (const [fields, code, field] of cases) {
    const sent = message(hook, fields)
    if (!('timestamp' in fields)) delete sent.timestamp
    const answer = await sendAlert(server, hook.path, sent)
    refused(answer, 400, code, field)
    const logged = (await alertLog(api, acme.jwt, hook.id))[0]
    assert.equal([logged.outcome, logged.code, logged.reason, logged.alert_id], ['REFUSED', code, answer.json.detail, sent.id])
    assert.not.ok('secret' in JSON.parse(logged.message))
  }
  const noId = message(hook, { pair: 'BTC/USDT', side: 'buy', quantity: 1 })
  delete noId.id
  refused(await sendAlert(server, hook.path, noId), 400, 'validation_failed', 'id')
  assert.is((await hookOrders(hook.id)).length, before, 'nothing was placed')
})

test("a timestamp older than the hook's max_age_seconds, or well ahead of the clock, is 400 alert_stale, logged", async () => {
  const now = Date.now()
  const cases = [new Date(now - 120_000).toISOString(), now - 61_000, String(now + 60_000)]
  for (const timestamp of cases) {
    const answer = await sendAlert(server, hook.path, message(hook, { pair: 'BTC/USDT', side: 'buy', quantity: 1, timestamp }))
    refused(answer, 400, 'alert_stale', 'timestamp')
    const logged = (await alertLog(api, acme.jwt, hook.id))[0]
    assert.equal([logged.outcome, logged.code], ['REFUSED', 'alert_stale'])
  }
  const patient = await createHook(api, acme.jwt, { name: 'patient', mode: 'PAPER', max_age_seconds: 600 })
  const late = await sendAlert(server, patient.path, message(patient, { pair: 'BTC/USDT', side: 'buy', quantity: 0.1, timestamp: cases[0] }))
  assert.is(late.status, 200, `${late.text}: within this hook's max_age_seconds`)
})

test('each hook takes 60 alerts a minute: the 61st is 429 with Retry-After, and not logged', async () => {
  const busy = await createHook(api, acme.jwt, { name: 'busy', mode: 'PAPER' })
  await freshMinute()
  const sent = message(busy, { pair: 'BTC/USDT', side: 'buy', quantity: 0.01 })
  const answers = await Promise.all(Array.from({ length: 60 }, () => sendAlert(server, busy.path, sent)))
  assert.equal(
    answers.map((a) => a.status),
    answers.map(() => 200),
  )
  assert.is(answers.filter((a) => a.json.duplicate !== true).length, 1, 'one order, 59 duplicates')
  const over = await sendAlert(server, busy.path, message(busy, { pair: 'BTC/USDT', side: 'buy', quantity: 0.01 }))
  refused(over, 429, 'rate_limited')
  assert.ok(Number(over.headers.get('retry-after')) >= 1)
  assert.is((await alertRows(server, busy.id)).length, 60)
  // Another hook of the tenant has its own minute.
  assert.is((await sendAlert(server, hook.path, message(hook, { pair: 'BTC/USDT', side: 'buy', quantity: 0.01 }))).status, 200)
})

test('one request line per alert under the route pattern, and no secret anywhere in the log', async () => {
  await new Promise((resolve) => setTimeout(resolve, 100)) // request lines are flushed within 20 ms
  const lines = server
    .output()
    .split('\n')
    .filter((line) => line.includes('"/hooks/alerts'))
  assert.ok(lines.length > 0)
  assert.ok(
    lines.every((line) => /"route":"\/hooks\/alerts\/(:id|\*)"/.test(line)),
    lines[0],
  )
  assert.not.ok(server.output().includes(hook.secret), 'the secret is never logged')
})

test.run()
