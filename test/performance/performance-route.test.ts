// GET /api/v1/models/{id}/performance through a real server: seeded random-walk candles with gaps
// imported by the real CLI, signals published day by day by the real publisher, and the answer
// compared with the oracle's portfolio over the signals' export and the same candles.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cli, client, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { checkedClient, importCloses, type Close } from '../trading/market.ts'
import { prng } from '../../src/shared/prng.ts'
import { oracle } from './oracle.ts'
import { sameCurve, sameMetrics, samePositions } from './compare.ts'

const test = suite('performance: GET /api/v1/models/{id}/performance')
let server: Server
let api: Awaited<ReturnType<typeof checkedClient>>
let acme: TenantFixture

const MODEL = 'mean-reversion' // lookback 20, entry_z -1.5, exit_z 0
const PAIRS = ['ADA/USDT', 'DOGE/USDT', 'AVAX/USDT', 'LINK/USDT', 'DOT/USDT']
const FIRST_AS_OF = '2025-03-01'
const LAST_AS_OF = '2025-04-09'
const LAST_CANDLE = '2025-04-12' // three closes after the last signal: the curve runs on to them
const HISTORY = 30 // candles before the first as_of

const day = (date: string, n: number) => new Date(Date.parse(date) + n * 86_400_000).toISOString().slice(0, 10)
const span = (from: string, to: string) => Array.from({ length: (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1 }, (_, i) => day(from, i))

// Volatile random walks; inside the published window each pair misses a few candles (no candle:
// no signal that day, the close carries).
const closes = new Map<string, Map<string, number>>()
const rand = prng(20250301)
for (const pair of PAIRS) {
  const series = new Map<string, number>()
  let price = 1 + rand() * 50
  for (const date of span(day(FIRST_AS_OF, -HISTORY), LAST_CANDLE)) {
    price *= 1 + (rand() - 0.5) * 0.16
    if (date >= FIRST_AS_OF && date !== LAST_CANDLE && rand() < 0.07) continue
    series.set(date, price)
  }
  closes.set(pair, series)
}

const perf = (query = '', model = MODEL) => api('GET', `/api/v1/models/${model}/performance${query}`, { token: acme.jwt })

async function exportedSignals() {
  const res = await api('GET', `/api/v1/signals?model_id=${MODEL}&limit=1000`, { token: acme.jwt })
  assert.is(res.status, 200, res.text)
  assert.is(res.headers.get('link'), null, 'one page holds them all')
  return res.json as { pair: string; as_of: string; action: string }[]
}

/** The oracle's answer for signals with as_of in [from, to], the curve ending at the last close within to. */
async function expected(from: string, to: string) {
  const signals = (await exportedSignals()).filter((s) => s.as_of >= from && s.as_of <= to)
  const start = signals.map((s) => s.as_of).sort()[0]
  const end = to < LAST_CANDLE ? to : LAST_CANDLE
  return oracle({ dates: span(start, end), pairs: PAIRS, closes, signals, feeBps: 10, slippageBps: 5 })
}

test.before(async () => {
  server = await startServer({ args: ['--quiet'] })
  api = await checkedClient(server)
  acme = await tenantFixture(server, 'acme', 'SIGNAL')
  const res = await client(server)('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: [MODEL] } })
  assert.is(res.status, 200, res.text)
  const rows: Close[] = PAIRS.flatMap((pair) => [...closes.get(pair)!].map(([date, close]): Close => [pair, date, close]))
  await importCloses(server, rows)
  // A run dated D publishes as_of D-1.
  for (const asOf of span(FIRST_AS_OF, LAST_AS_OF)) {
    const run = await cli(['publish', '--date', day(asOf, 1), '--model', MODEL], { dataDir: server.dataDir })
    assert.ok(run.code === 0 || /still without prices/.test(run.stdout), run.stdout + run.stderr)
  }
})
test.after(async () => {
  await server.stop()
})

test('the whole forward record: the equity curve, positions and every metric equal the oracle over the export', async () => {
  const signals = await exportedSignals()
  assert.ok(signals.length > 150, `${signals.length} signals`)
  assert.ok(signals.some((s) => s.action === 'ENTER_LONG') && signals.some((s) => s.action === 'EXIT_LONG'), 'the walks make the rule enter and exit')
  const res = await perf()
  assert.is(res.status, 200, res.text)
  const body = res.json
  assert.equal([body.model_id, body.from, body.to], [MODEL, FIRST_AS_OF, LAST_CANDLE])
  const want = await expected(FIRST_AS_OF, LAST_CANDLE)
  assert.ok(
    want.positions.some((p) => p.exit_date !== null),
    'some position closed',
  )
  sameCurve(body.equity, want.curve)
  samePositions(body.positions, want.positions)
  sameMetrics(body.metrics, want.metrics)
  assert.is(body.metrics.days, span(FIRST_AS_OF, LAST_CANDLE).length - 1)
  // The same answer again, reused until the database changes.
  const again = await perf()
  assert.is(again.text, res.text)
})

test('a window: signals with as_of in [from, to], the portfolio starting flat at from', async () => {
  const from = '2025-03-15'
  const to = '2025-03-31'
  const res = await perf(`?from=${from}&to=${to}`)
  assert.is(res.status, 200, res.text)
  const want = await expected(from, to)
  assert.equal([res.json.from, res.json.to], [want.curve[0].date, to])
  sameCurve(res.json.equity, want.curve)
  samePositions(res.json.positions, want.positions)
  sameMetrics(res.json.metrics, want.metrics)
  // to past the last close: the curve stops at the last close.
  const open = await perf(`?from=${from}&to=2025-12-31`)
  assert.is(open.json.to, LAST_CANDLE)
  sameMetrics(open.json.metrics, (await expected(from, '2025-12-31')).metrics)
})

test('a model with no signal yet: an empty curve and null metrics', async () => {
  const res = await perf('', 'trend-follower')
  assert.is(res.status, 200, res.text)
  const { from, to, equity, positions, metrics } = res.json
  assert.equal([from, to, equity, positions], [null, null, [], []])
  assert.equal([metrics.total_return, metrics.sharpe, metrics.max_drawdown, metrics.trades, metrics.days], [null, null, null, 0, 0])
  assert.is(metrics.benchmark.cagr, null)
  // A window after every signal is empty too, and says which window it was.
  const later = await perf('?from=2025-06-01')
  assert.equal([later.json.from, later.json.to, later.json.equity], ['2025-06-01', null, []])
})

test('errors: 401 without a credential, 400 for a bad date or from after to, 404 for an unknown model', async () => {
  const anonymous = await client(server)('GET', `/api/v1/models/${MODEL}/performance`)
  assert.is(anonymous.status, 401)
  const cases: [string, RegExp][] = [
    ['?from=2025-02-30', /^from has day 30; 2025-02 has days 01-28$/],
    ['?to=2025-3-1', /^to must be a date YYYY-MM-DD$/],
    ['?from=2025-03-01T00:00:00Z', /^from must be a date YYYY-MM-DD$/],
    ['?from=2025-03-10&to=2025-03-09', /^from: must not be after to \(2025-03-10 > 2025-03-09\)$/],
    ['?since=2025-03-01', /unknown query parameter: since/],
  ]
  for (const [query, detail] of cases) {
    const res = await perf(query)
    assert.is(res.status, 400, `${query}: ${res.text}`)
    assert.is(res.headers.get('content-type'), 'application/problem+json', query)
    assert.match(res.json.detail, detail, `${query}: ${res.json.detail}`)
  }
  for (const model of ['no-such-model', 'RETIRED!']) {
    const res = await perf('', encodeURIComponent(model))
    assert.is(res.status, 404, res.text)
    assert.match(res.json.detail, /^model .+ not found$/)
  }
})

test.run()
