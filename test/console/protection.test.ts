// The protection resting on the venue (SPEC 13) in real Chromium, for a tenant with real LIVE
// positions: a server pointed at the test venue, the profile set and the entries bought through the
// API, the executor placing the protections through ccxt. The console shows each open LIVE
// position's protection as the API has it (the API's prices and order ids checked first against
// the venue's own open orders), a refused one flagged in words, a closed trade's exit reason, and
// the profile editor's four protection fields: saved, and refused with the API's detail.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { Browser, Page } from 'playwright-core'
import type { Server } from '../support/harness.ts'
import { CATALOGUE_SYMBOLS, startVenue, type Venue } from '../support/venue/index.ts'
import { checkedClient, near } from '../trading/market.ts'
import { type Api, eventually, incidentsOf, liveServer, liveTenant, type LiveTenant, orderReaches, priceBoth } from '../venue/fixture-live.ts'
import { roundTo } from '../venue/fixture-protection.ts'
import { axeViolations, cells, fmt, launchChromium, signIn, watchedPage, type WatchedPage } from './fixture.ts'

const test = suite('console: protection resting on the venue')
let venue: Venue
let server: Server
let api: Api
let t: LiveTenant
let browser: Browser
let w: WatchedPage
let page: Page

test.before(async () => {
  // LINK allows one stop order per symbol (Binance's MAX_NUM_ALGO_ORDERS), so a protection can be refused.
  venue = await startVenue({ symbols: CATALOGUE_SYMBOLS.map((s) => (s.base === 'LINK' ? { ...s, maxNumAlgoOrders: 1 } : s)) })
  server = await liveServer(venue)
  api = await checkedClient(server)
  t = await liveTenant(server, api, venue, 'guard', { USDT: 100_000, LINK: 10 })
  browser = await launchChromium()
  w = await watchedPage(browser)
  page = w.page
  await signIn(page, server, t.tenant.ownerEmail, t.tenant.password)
})
test.after(async () => {
  await w?.close()
  await browser?.close()
  await server?.stop()
  await venue?.close()
})

const get = async (path: string) => {
  const res = await api('GET', path, { token: t.trader })
  assert.is(res.status, 200, res.text)
  return res.json
}
const openTrades = async (): Promise<any[]> => get('/api/v1/trades?status=OPEN&limit=1000')
const tradeOf = async (pair: string) => (await openTrades()).find((x) => x.pair === pair)

async function bought(pair: string, quantity: number): Promise<void> {
  const buy = await api('POST', '/api/v1/orders', { token: t.trader, body: { mode: 'LIVE', pair, side: 'BUY', type: 'MARKET', quantity } })
  assert.is(buy.status, 200, buy.text)
  await orderReaches(api, t.trader, buy.json.id, ['FILLED'])
}

/** The open trade of `pair` once the API says its protection is `status` and `check` holds. */
const protectedAs = (pair: string, status: string, check: (trade: any) => boolean = () => true) =>
  eventually(`${pair} ${status}`, async () => {
    const trade = await tradeOf(pair)
    return trade?.protection?.status === status && check(trade) ? trade : undefined
  })

/** The view drawn again from the API's current answers (a reload keeps the session: sessionStorage). */
async function show(id: string): Promise<void> {
  await page.goto(`${server.url}/console#/${id}`)
  await page.reload()
  await page.waitForSelector(`main[data-ready="${id}"]`)
}

/** The open positions the overview shows: pair, mode and the protection cell (mark and PnL move with the venue's marks). */
const positionsShown = async () => (await cells(page, '#open-positions')).map((row) => [row[0], row[2], row[8]])
const positionsOfApi = async () => (await openTrades()).map((x) => [x.pair, x.mode, fmt.protection(x.protection)])
/** The trades table of Orders & trades: pair, quantity, status, protection, exit reason. */
const tradesShown = async () => (await cells(page, '#trades-table')).map((row) => [row[2], row[3], row[10], row[11], row[12]])
const tradesOfApi = async () =>
  ((await get('/api/v1/trades?limit=50')) as any[]).map((x) => [
    x.pair,
    fmt.amount(x.quantity),
    x.status,
    fmt.protection(x.protection),
    fmt.exitReason(x.exit_reason),
  ])

test('an open LIVE position shows its protection beside it: status, stop and take-profit prices, the venue order ids', async () => {
  await priceBoth(server, venue, 'BTC/USDT', '2025-05-01', 60_000, 60_000)
  const profile = await api('PATCH', '/api/v1/risk/profile', { token: t.trader, body: { venue_stop_loss_pct: 5, venue_take_profit_pct: 10 } })
  assert.is(profile.status, 200, profile.text)
  await bought('BTC/USDT', 0.02)
  const trade = await protectedAs('BTC/USDT', 'RESTING', (x) => x.protection.venue_order_ids.length === 2)
  // The API's protection is what rests on the venue: one OCO, stop and take-profit from the average fill.
  const resting = (await venue.orders({ account: 'guard', open: true })).filter((o) => o.symbol === 'BTCUSDT') as Record<string, any>[]
  const stop = resting.find((o) => o.type === 'STOP_LOSS')!
  const take = resting.find((o) => o.type === 'LIMIT_MAKER')!
  assert.equal([...trade.protection.venue_order_ids].sort(), [String(stop.orderId), String(take.orderId)].sort())
  near(trade.protection.stop_price, Number(stop.stopPrice), 'stop')
  near(trade.protection.take_profit_price, Number(take.price), 'take-profit')
  near(trade.protection.stop_price, roundTo(trade.entry_price * 0.95, 0.01), 'stop = entry x (1 - 5%)')

  await show('overview')
  assert.equal(await positionsShown(), await positionsOfApi())
  assert.equal(await positionsShown(), [['BTC/USDT', 'LIVE', fmt.protection(trade.protection)]])
  assert.match(fmt.protection(trade.protection), /^RESTING stop [\d,.]+; take-profit [\d,.]+; venue orders \d+, \d+$/)
  assert.is(await page.locator('#open-positions [data-status="RESTING"] .state').textContent(), 'RESTING')
  assert.is(await page.locator('#unprotected').count(), 0, 'nothing flagged')
  assert.equal(await axeViolations(page), [], 'the overview with a protected position')

  await show('orders')
  assert.equal(await tradesShown(), await tradesOfApi())
  assert.equal(await tradesShown(), [['BTC/USDT', fmt.amount(trade.quantity), 'OPEN', fmt.protection(trade.protection), '\u2014']])
  // The one page has no "Show older" button, and nothing in its place.
  assert.is(await page.evaluate(() => document.getElementById('trades-table')!.lastChild!.textContent), '1 shown, all of them')
})

test('a protection the venue refuses is flagged in words, beside the position and above the table', async () => {
  await priceBoth(server, venue, 'LINK/USDT', '2025-05-02', 15, 15)
  // The account's one stop order on LINKUSDT, placed elsewhere: the protection finds no room.
  await venue.injectOrder({ account: 'guard', symbol: 'LINKUSDT', side: 'SELL', type: 'STOP_LOSS', quantity: 10, stopPrice: 10 })
  await bought('LINK/USDT', 20)
  const link = await protectedAs('LINK/USDT', 'FAILED')
  assert.is((await incidentsOf(server, 'guard', 'VENUE_PROTECTION_FAILED')).length, 1)
  await show('overview')
  assert.equal(await positionsShown(), await positionsOfApi())
  const row = (await positionsShown()).find((r) => r[0] === 'LINK/USDT')!
  assert.equal(row, ['LINK/USDT', 'LIVE', 'FAILED: not protected The venue refused it: see the incidents.'])
  assert.equal(row[2], fmt.protection(link.protection))
  assert.is(
    await page.textContent('#unprotected'),
    'Not protected on the venue: LINK/USDT. The venue refused the protective order; the reason is in the incidents.',
  )
  assert.is(await page.locator('#open-positions [data-status="RESTING"]').count(), 1, 'BTC/USDT still resting')
  assert.equal(await axeViolations(page), [], 'the overview with a refused protection')
  // The link leads to the trail, where the venue's refusal is.
  await page.locator('#unprotected a').click()
  await page.waitForSelector('main[data-ready="incidents"]')
  assert.match((await page.textContent('#incidents-table'))!, 'VENUE_PROTECTION_FAILED')
})

test('a trade its venue stop closed shows the exit reason; it leaves the open positions', async () => {
  await priceBoth(server, venue, 'ETH/USDT', '2025-05-03', 3000, 3000)
  await bought('ETH/USDT', 1)
  const open = await protectedAs('ETH/USDT', 'RESTING')
  await show('orders')
  assert.ok((await tradesShown()).some((r) => r[0] === 'ETH/USDT' && r[2] === 'OPEN' && r[3] === fmt.protection(open.protection)))
  await venue.setPrice('ETH/USDT', 2800)
  const closed = await eventually('closed by its stop', async () => {
    const list = (await get('/api/v1/trades?status=CLOSED')) as any[]
    return list.find((x) => x.pair === 'ETH/USDT')
  })
  assert.is(closed.exit_reason, 'venue_stop')
  await show('orders')
  assert.equal(await tradesShown(), await tradesOfApi())
  assert.equal(
    (await tradesShown()).find((r) => r[0] === 'ETH/USDT'),
    ['ETH/USDT', fmt.amount(closed.quantity), 'CLOSED', '\u2014', 'Stop on the venue'],
  )
  assert.is(await page.getAttribute('#trades-table [data-exit-reason]', 'data-exit-reason'), 'venue_stop')
  await show('overview')
  assert.equal(
    (await positionsShown()).map((r) => r[0]),
    ['LINK/USDT', 'BTC/USDT'],
  )
})

/** Clicks "Save the profile" and returns the notice of the redrawn view. */
async function save(): Promise<string> {
  await page.evaluate(() => document.getElementById('notice')?.remove())
  await page.getByRole('button', { name: 'Save the profile' }).click()
  await page.waitForSelector('main[data-ready="risk"] #notice')
  return (await page.textContent('#notice'))!
}

/** The trail's RISK_PROFILE_UPDATED incidents, newest first (the protections record incidents of their own meanwhile). */
const profileChanges = async () => ((await get('/api/v1/risk/incidents?limit=100')) as any[]).filter((i) => i.action === 'RISK_PROFILE_UPDATED')

const FIELDS = ['venue_stop_loss_pct', 'venue_take_profit_pct', 'stop_limit_offset_pct', 'unprotected_action']

test('the profile editor shows the four protection fields and saves them; the protections follow', async () => {
  await show('risk')
  const before = await get('/api/v1/risk/profile')
  assert.equal(
    FIELDS.map((x) => before[x]),
    [5, 10, 1, 'ALERT'],
  )
  for (const field of FIELDS) {
    assert.is(await page.inputValue(`#edit-${field}`), String(before[field]), field)
    assert.is(await page.textContent(`#profile [data-field="${field}"] dd`), String(before[field]), field)
  }
  const form = page.locator('#edit-profile')
  await form.getByLabel('Venue stop-loss (%)').fill('3')
  await form.getByLabel('Venue take-profit (%)').fill('')
  await form.getByLabel('Stop-limit offset (%)').fill('2')
  await form.getByLabel('When the venue refuses a protection').selectOption('FLATTEN')
  const notice = await save()
  assert.is(
    notice,
    'Profile saved: Venue stop-loss (%) 5 → 3; Venue take-profit (%) 10 → off; Stop-limit offset (%) 1 → 2; Unprotected action ALERT → FLATTEN.',
  )
  const after = await get('/api/v1/risk/profile')
  const wanted = { venue_stop_loss_pct: 3, venue_take_profit_pct: null, stop_limit_offset_pct: 2, unprotected_action: 'FLATTEN' }
  assert.equal(after, { ...before, ...wanted })
  for (const [field, value] of Object.entries(wanted)) {
    assert.is(await page.textContent(`#profile [data-field="${field}"] dd`), value === null ? 'off' : String(value), field)
    assert.is(await page.inputValue(`#edit-${field}`), value === null ? '' : String(value), field)
  }
  const incident = (await profileChanges())[0]
  assert.is(incident.reason, 'venue_stop_loss_pct 5 -> 3, venue_take_profit_pct 10 -> null, stop_limit_offset_pct 1 -> 2, unprotected_action ALERT -> FLATTEN')

  // The new percentages re-place BTC's protection (a stop alone now); FLATTEN sells the unprotected LINK.
  const btc = await protectedAs(
    'BTC/USDT',
    'RESTING',
    (x) => x.protection.take_profit_price === null && x.protection.venue_order_ids.length === 1 && x.protection.stop_price > x.entry_price * 0.96,
  )
  near(btc.protection.stop_price, roundTo(btc.entry_price * 0.97, 0.01), 'stop = entry x (1 - 3%)')
  const flattened = await eventually(
    'LINK flattened',
    async () => ((await get('/api/v1/trades?status=CLOSED')) as any[]).find((x) => x.pair === 'LINK/USDT'),
    20_000,
  )
  assert.is(flattened.exit_reason, 'flatten')
  await show('overview')
  assert.equal(await positionsShown(), [['BTC/USDT', 'LIVE', fmt.protection(btc.protection)]])
  assert.match(fmt.protection(btc.protection), /^RESTING stop [\d,.]+; venue orders \d+$/)
  assert.is(await page.locator('#unprotected').count(), 0, 'nothing left unprotected')
  await show('orders')
  assert.equal(await tradesShown(), await tradesOfApi())
  assert.equal(
    (await tradesShown()).filter((r) => r[2] === 'CLOSED').map((r) => [r[0], r[4]]),
    // Newest opened first: ETH was bought after LINK.
    [
      ['ETH/USDT', 'Stop on the venue'],
      ['LINK/USDT', 'Flatten'],
    ],
  )
})

test("values out of the API's range are refused with its detail next to the form, the field marked and focused; nothing changes", async () => {
  const cases: [string, string, Record<string, unknown>][] = [
    ['Venue stop-loss (%)', '60', { venue_stop_loss_pct: 60 }],
    ['Venue take-profit (%)', '0.05', { venue_take_profit_pct: 0.05 }],
    ['Stop-limit offset (%)', '11', { stop_limit_offset_pct: 11 }],
    ['Stop-limit offset (%)', '', { stop_limit_offset_pct: null }],
  ]
  const before = await get('/api/v1/risk/profile')
  const trail = (await profileChanges()).length
  for (const [label, typed, body] of cases) {
    // A fresh form for each case.
    await show('risk')
    const refused = await api('PATCH', '/api/v1/risk/profile', { token: t.trader, body })
    assert.is(refused.status, 400, refused.text)
    const input = page.locator('#edit-profile').getByLabel(label)
    await input.fill(typed)
    await page.getByRole('button', { name: 'Save the profile' }).click()
    await page.waitForFunction(() => document.getElementById('edit-profile-error')?.textContent !== '')
    assert.is(await page.textContent('#edit-profile-error'), refused.json.detail, `${label} ${typed}`)
    assert.ok(refused.json.detail.length > 0)
    assert.is(await input.getAttribute('aria-invalid'), 'true', label)
    assert.ok(await input.evaluate((el) => el === document.activeElement), `${label} focused`)
  }
  assert.equal(await get('/api/v1/risk/profile'), before)
  assert.is((await profileChanges()).length, trail, 'no change recorded')
  assert.equal(await axeViolations(page), [], 'the form with a refusal shown')
  assert.equal(w.problems, [])
})

test.run()
