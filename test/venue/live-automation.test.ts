// LIVE models (SPEC 10): PUT /api/v1/workspace/models names the active models whose automation
// trades LIVE, and a publish then places their orders on the tenant's venue through the real CLI,
// executor, ccxt and test venue. The model's exit sells its LIVE position only: a PAPER position of
// the same model and pair stays open, and a tenant trading the model on paper gets PAPER orders.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cli, login, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { startVenue, type Venue } from '../support/venue/index.ts'
import { day, importSeries, lastClose } from '../signals/fixtures.ts'
import { checkedClient, near } from '../trading/market.ts'
import { type Api, eventually, liveServer, liveTenant, type LiveTenant, orderReaches } from './fixture-live.ts'

const test = suite('venue: LIVE workspace and automation')
let venue: Venue
let server: Server
let api: Api
let acme: LiveTenant
const MODEL = 'trend-follower'
const OTHER = 'mean-reversion'
const YESTERDAY = day(-1)
const UNIVERSE = ['BTC/USDT', 'ETH/USDT', 'SOL/USDT', 'BNB/USDT', 'XRP/USDT']
const COMMISSION = 0.001

test.before(async () => {
  venue = await startVenue()
  server = await liveServer(venue)
  api = await checkedClient(server)
  acme = await liveTenant(server, api, venue, 'acme', { USDT: 100_000 })
})
test.after(async () => {
  await server.stop()
  await venue.close()
})

const setModels = (token: string, body: Record<string, unknown>) => api('PUT', '/api/v1/workspace/models', { token, body })
const workspace = async (token = acme.tenant.jwt) => (await api('GET', '/api/v1/workspace', { token })).json

test('GET and PUT: live_model_ids sorted, kept for the models that stay active when left out, dropped with them', async () => {
  assert.equal((await workspace()).live_model_ids, [])
  const set = await setModels(acme.tenant.jwt, { model_ids: [MODEL, OTHER], live_model_ids: [MODEL, OTHER] })
  assert.is(set.status, 200, set.text)
  assert.equal(set.json.live_model_ids, [OTHER, MODEL])
  assert.equal((await workspace()).live_model_ids, [OTHER, MODEL])

  const one = await setModels(acme.tenant.jwt, { model_ids: [MODEL, OTHER], live_model_ids: [MODEL] })
  assert.equal(one.json.live_model_ids, [MODEL])
  const kept = await setModels(acme.tenant.jwt, { model_ids: [OTHER, MODEL] })
  assert.equal(kept.json.live_model_ids, [MODEL], 'left out: the models that stay active keep their flag')
  const dropped = await setModels(acme.tenant.jwt, { model_ids: [OTHER] })
  assert.equal(dropped.json.active_model_ids, [OTHER])
  assert.equal(dropped.json.live_model_ids, [], 'a model no longer active is no longer LIVE')
  const back = await setModels(acme.tenant.jwt, { model_ids: [OTHER, MODEL] })
  assert.equal(back.json.live_model_ids, [], 'reactivated: PAPER until named again')
  const cleared = await setModels(acme.tenant.jwt, { model_ids: [OTHER, MODEL], live_model_ids: [OTHER] })
  assert.equal(cleared.json.live_model_ids, [OTHER])
  assert.equal((await setModels(acme.tenant.jwt, { model_ids: [OTHER, MODEL], live_model_ids: [] })).json.live_model_ids, [])
})

test('refused: a LIVE model not active (400), duplicates (400), SIGNAL plan (403), no venue (409), an API key or a viewer (403)', async () => {
  const before = await workspace()
  const outside = await setModels(acme.tenant.jwt, { model_ids: [OTHER], live_model_ids: [OTHER, MODEL] })
  assert.is(outside.status, 400, outside.text)
  assert.is(outside.json.code, 'validation_failed')
  assert.equal(
    outside.json.errors.map((e: any) => e.field),
    ['live_model_ids[1]'],
  )
  assert.match(outside.json.detail, /model "trend-follower" is not in model_ids/)
  const twice = await setModels(acme.tenant.jwt, { model_ids: [MODEL], live_model_ids: [MODEL, MODEL] })
  assert.is(twice.status, 400, twice.text)
  assert.is(twice.json.code, 'validation_failed')

  const watcher = await tenantFixture(server, 'watcher', 'SIGNAL')
  const signal = await setModels(watcher.jwt, { model_ids: [MODEL], live_model_ids: [MODEL] })
  assert.is(signal.status, 403, signal.text)
  assert.is(signal.json.code, 'plan_forbids')
  assert.match(signal.json.detail, /plan SIGNAL .*trading a model LIVE needs the EXECUTE plan/)
  assert.equal((await workspace(watcher.jwt)).active_model_ids, [], 'a refusal changes nothing')

  const zeta = await tenantFixture(server, 'zeta')
  const noVenue = await setModels(zeta.jwt, { model_ids: [MODEL], live_model_ids: [MODEL] })
  assert.is(noVenue.status, 409, noVenue.text)
  assert.is(noVenue.json.code, 'venue_not_connected')
  assert.match(noVenue.json.detail, /PUT \/api\/v1\/venue/)
  const paperOnly = await setModels(zeta.jwt, { model_ids: [OTHER], live_model_ids: [] })
  assert.is(paperOnly.status, 200, 'an empty LIVE list needs no venue')

  const key = await setModels(acme.trader, { model_ids: [MODEL], live_model_ids: [MODEL] })
  assert.is(key.status, 403)
  assert.is(key.json.code, 'session_required')
  const made = await cli(['user', 'create', 'viewer@acme.test', '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'viewer-password-1',
  })
  assert.is(made.code, 0, made.stderr)
  const viewer = await setModels(await login(server, 'viewer@acme.test', 'viewer-password-1'), { model_ids: [MODEL], live_model_ids: [MODEL] })
  assert.is(viewer.status, 403)
  assert.is(viewer.json.code, 'forbidden_role')
  assert.equal(await workspace(), before)
})

/** Orders of a tenant for the model, oldest first. */
async function modelOrders(token: string): Promise<any[]> {
  return (await api('GET', `/api/v1/orders?model_id=${MODEL}&limit=100`, { token })).json.reverse()
}

test('a publish trades a LIVE model on the venue: LIVE BUYs on ENTER_LONG, a LIVE SELL of the LIVE position only on EXIT_LONG', async () => {
  const set = await setModels(acme.tenant.jwt, { model_ids: [MODEL], live_model_ids: [MODEL] })
  assert.equal(set.json.live_model_ids, [MODEL])
  const paper: TenantFixture = await tenantFixture(server, 'paper')
  assert.is((await setModels(paper.jwt, { model_ids: [MODEL] })).status, 200)
  const paperKey = await paper.key(['trades:read'])
  // ETH/USDT one day short: a PAPER BUY of the model fills on its last candle, imported below.
  await importSeries(
    server.dataDir,
    UNIVERSE.filter((p) => p !== 'ETH/USDT'),
    YESTERDAY,
  )
  await importSeries(server.dataDir, ['ETH/USDT'], YESTERDAY, 1)
  await venue.setPrice('ETH/USDT', lastClose('ETH/USDT') + 1)
  const post = (body: Record<string, unknown>) =>
    api('POST', '/api/v1/orders', { token: acme.trader, body: { pair: 'ETH/USDT', side: 'BUY', type: 'MARKET', model_id: MODEL, ...body } })
  const onPaper = await post({ notional_usd: 1000 })
  assert.is(onPaper.status, 200, onPaper.text)
  const onVenue = await post({ quantity: 1, mode: 'LIVE' })
  assert.is(onVenue.status, 200, onVenue.text)
  await orderReaches(api, acme.trader, onVenue.json.id, ['FILLED'])
  await importSeries(server.dataDir, ['ETH/USDT'], YESTERDAY)
  await orderReaches(api, acme.trader, onPaper.json.id, ['FILLED'])
  const open = (await api('GET', `/api/v1/trades?status=OPEN&pair=ETH/USDT`, { token: acme.trader })).json
  const liveTrade = open.find((t: any) => t.mode === 'LIVE')
  const paperTrade = open.find((t: any) => t.mode === 'PAPER')
  near(liveTrade.quantity, 1 - COMMISSION, 'the LIVE trade holds what the venue account holds')
  assert.ok(paperTrade.quantity > 2 * liveTrade.quantity, 'the PAPER trade is the larger one')

  for (const pair of ['BTC/USDT', 'BNB/USDT', 'ETH/USDT']) await venue.setPrice(pair, lastClose(pair))
  const known = new Set((await modelOrders(acme.trader)).map((o) => o.id))
  const published = await cli(['publish', '--model', MODEL], { dataDir: server.dataDir })
  assert.is(published.code, 0, published.stderr)
  assert.match(published.stdout, /automation: 5 orders for 2 tenants/)

  // acme: ETH EXIT sells the LIVE trade's quantity, not the PAPER one's; each ENTER_LONG is a LIVE
  // BUY of max_exposure_usd / max_open_trades = 10000 / 5 USD.
  const placed = (await modelOrders(acme.trader)).filter((o) => !known.has(o.id))
  assert.equal(
    placed.map((o) => `${o.pair} ${o.side} ${o.mode} ${o.notional_usd ?? o.quantity} ${o.source}`),
    [`ETH/USDT SELL LIVE ${liveTrade.quantity} automation`, 'BTC/USDT BUY LIVE 2000 automation', 'BNB/USDT BUY LIVE 2000 automation'],
  )
  for (const order of placed) {
    const filled = await orderReaches(api, acme.trader, order.id, ['FILLED'])
    assert.is(filled.mode, 'LIVE')
    // A BUY sized in USD goes out as a quote quantity: the venue spends exactly what automation sized.
    const spent = filled.filled_quantity * filled.fill_price
    if (order.side === 'BUY') assert.ok(spent <= 2000 && spent > 1990, `${order.pair}: spent ${spent} of 2000`)
    const sent = await eventually(`${order.id} on the venue`, async () => {
      const found = await venue.orders({ account: 'acme', clientOrderId: order.id })
      return found.length ? found : undefined
    })
    assert.is(sent.length, 1, 'exactly one order on the venue under the Bulwark id')
  }
  const after = (await api('GET', `/api/v1/trades?pair=ETH/USDT`, { token: acme.trader })).json
  assert.is(after.find((t: any) => t.id === liveTrade.id).status, 'CLOSED')
  assert.is(after.find((t: any) => t.id === paperTrade.id).status, 'OPEN', 'the PAPER position of the model is not the LIVE model’s to sell')

  // paper: the same signals, on paper.
  assert.equal(
    (await modelOrders(paperKey)).map((o) => `${o.pair} ${o.side} ${o.mode} ${o.notional_usd}`),
    ['BTC/USDT BUY PAPER 2000', 'BNB/USDT BUY PAPER 2000'],
  )
  assert.is((await venue.orders({ account: 'paper' })).length, 0)
})

test.run()
