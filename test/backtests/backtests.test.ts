// Backtests over a real server, on seeded synthetic candles imported through `bulwark prices
// import`: a backtest SUCCEEDS with metrics, an equity curve and the trades its actions imply;
// on every day both cover its actions are the signals `bulwark publish --date` published (a
// missing candle included); the same backtest gives the same result_hash, another fee another
// one; and every refusal is a precise 4xx.
import { createHash } from 'node:crypto'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { syntheticCandles } from '../../src/signals/synthetic-prices.ts'
import { cli, client, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { addDays, day, eventually, importCsv, query } from '../signals/fixtures.ts'

const test = suite('backtests: API, actions, hash')
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture
let beta: TenantFixture

const PAIRS = [
  'BTC/USDT',
  'ETH/USDT',
  'SOL/USDT',
  'BNB/USDT',
  'XRP/USDT',
  'ADA/USDT',
  'DOGE/USDT',
  'AVAX/USDT',
  'LINK/USDT',
  'DOT/USDT',
  'LTC/USDT',
  'TRX/USDT',
]
const MODELS = ['trend-follower', 'mean-reversion', 'breakout-momentum']
const FIRST = '2024-01-01'
const LAST = '2025-06-30'
/** A candle that never arrived: the publisher gives DOT/USDT no signal that day, and reads past the gap after. */
const GAP = { pair: 'DOT/USDT', date: '2025-06-03' }
/** Run dates published through the CLI: as_of 2025-05-31 to 2025-06-07. */
const RUN_DATES = Array.from({ length: 8 }, (_, i) => addDays('2025-06-01', i))
const LETTER: Record<string, string> = { ENTER_LONG: 'E', HOLD: 'H', EXIT_LONG: 'X' }
const closes = new Map<string, number>()

type Backtest = Record<string, any>

/** RFC 8785 for the values a backtest holds: sorted keys, JSON.stringify's numbers and strings. */
function jcs(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jcs).join(',')}]`
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  const record = value as Record<string, unknown>
  return `{${Object.keys(record)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${jcs(record[k])}`)
    .join(',')}}`
}

async function finished(token: string, id: string, include = ''): Promise<Backtest> {
  return eventually(async () => {
    const res = await api('GET', `/api/v1/backtests/${id}${include}`, { token })
    assert.is(res.status, 200, res.text)
    return res.json.status === 'SUCCEEDED' || res.json.status === 'FAILED' ? res.json : undefined
  }, `backtest ${id} to finish`)
}

async function backtest(token: string, body: Record<string, unknown>, include = ''): Promise<Backtest> {
  const res = await api('POST', '/api/v1/backtests', { token, body })
  assert.is(res.status, 200, res.text)
  assert.is(res.json.status, 'QUEUED')
  const done = await finished(token, res.json.id, include)
  assert.is(done.status, 'SUCCEEDED', done.error)
  return done
}

test.before(async () => {
  server = await startServer({ args: ['--quiet'] })
  api = client(server)
  acme = await tenantFixture(server, 'acme')
  beta = await tenantFixture(server, 'beta', 'SIGNAL')
  const lines = ['pair,date,open,high,low,close,volume']
  for (const pair of PAIRS) {
    for (const c of syntheticCandles(pair, 11, FIRST, LAST)) {
      if (pair === GAP.pair && c.date === GAP.date) continue
      closes.set(`${pair} ${c.date}`, c.close)
      lines.push(`${pair},${c.date},${c.open},${c.high},${c.low},${c.close},${c.volume}`)
    }
  }
  await importCsv(server.dataDir, `${lines.join('\n')}\n`)
})
test.after(async () => {
  await server.stop()
})

test('a backtest is QUEUED, then SUCCEEDS with metrics, a daily equity curve and the trades its actions imply', async () => {
  const done = await backtest(acme.jwt, { model_id: 'trend-follower', from: '2025-01-01', to: '2025-06-30', fee_bps: 0, slippage_bps: 0 }, '?include=actions')
  assert.equal(done.parameters, { fast_ema: 20, slow_ema: 50, band_pct: 0.5 })
  assert.ok(done.started_at <= done.finished_at)
  assert.match(done.result_hash, /^[0-9a-f]{64}$/)
  assert.is(done.equity.length, 181)
  assert.equal(
    done.equity.map((p: Backtest) => p.date),
    Array.from({ length: 181 }, (_, i) => addDays('2025-01-01', i)),
  )
  assert.is(done.equity[0].equity, 1)
  assert.ok(Math.abs(done.metrics.total_return - (done.equity[180].equity - 1)) < 1e-12)
  assert.is(done.metrics.days, 180)
  // The oracle: flat until an E, held until an X, entered and left at that day's close.
  const expected: Backtest[] = []
  for (const [pair, letters] of Object.entries(done.actions as Record<string, string>)) {
    assert.is(letters.length, 181)
    let open: Backtest | undefined
    for (let i = 0; i < letters.length; i++) {
      const date = addDays('2025-01-01', i)
      if (letters[i] === 'E' && !open) {
        open = { pair, entry_date: date, entry_price: closes.get(`${pair} ${date}`), exit_date: null, exit_price: null }
        expected.push(open)
      } else if (letters[i] === 'X' && open) {
        Object.assign(open, { exit_date: date, exit_price: closes.get(`${pair} ${date}`) })
        open = undefined
      }
    }
  }
  const key = (t: Backtest) => `${t.entry_date} ${t.pair}`
  const trades = done.trades.map(({ pair, entry_date, entry_price, exit_date, exit_price }: Backtest) => ({
    pair,
    entry_date,
    entry_price,
    exit_date,
    exit_price,
  }))
  assert.ok(expected.length >= 5, `${expected.length} trades`)
  assert.equal(
    trades.sort((a: Backtest, b: Backtest) => key(a).localeCompare(key(b))),
    expected.sort((a, b) => key(a).localeCompare(key(b))),
  )
  assert.is(done.metrics.trades, expected.length)
  // Without include=actions there are none; the list shows it, without its result.
  const plain = await api('GET', `/api/v1/backtests/${done.id}`, { token: acme.jwt })
  assert.is(plain.json.actions, undefined)
  assert.is(plain.json.result_hash, done.result_hash)
  const list = await api('GET', '/api/v1/backtests', { token: acme.jwt })
  assert.is(list.status, 200, list.text)
  assert.is(list.json[0].id, done.id)
  assert.is(list.json[0].metrics, undefined)
})

test('on every day both cover, the backtest actions are the signals the publisher published (a missing candle too)', async () => {
  for (const date of RUN_DATES) {
    const res = await cli(['publish', '--date', date], { dataDir: server.dataDir })
    assert.is(res.code, 0, res.stderr)
  }
  const signals = await query<{ model_id: string; pair: string; action: string; as_of: string }>(
    server.dataDir,
    'SELECT model_id, pair, action, as_of FROM signals',
  )
  const published = new Map(signals.map((s) => [`${s.model_id} ${s.pair} ${s.as_of}`, LETTER[s.action]]))
  const from = '2025-05-20'
  let compared = 0
  const seen = new Set<string>()
  for (const model of MODELS) {
    const done = await backtest(beta.jwt, { model_id: model, from, to: '2025-06-20' }, '?include=actions')
    for (const [pair, letters] of Object.entries(done.actions as Record<string, string>)) {
      for (const date of RUN_DATES) {
        const asOf = addDays(date, -1)
        const letter = letters[Math.round((Date.parse(asOf) - Date.parse(from)) / 86_400_000)]
        assert.is(letter, published.get(`${model} ${pair} ${asOf}`) ?? '-', `${model} ${pair} as of ${asOf}`)
        seen.add(letter)
        compared++
      }
    }
  }
  assert.is(compared, 3 * 5 * RUN_DATES.length)
  assert.is(published.get(`mean-reversion ${GAP.pair} ${GAP.date}`), undefined, 'the gap got no signal')
  assert.ok(seen.has('-') && seen.size >= 3, `letters compared: ${[...seen]}`)
})

test('result_hash is sha256 of the canonical JSON of inputs and results; the same backtest twice gives the same, another fee another', async () => {
  const body = { model_id: 'breakout-momentum', from: '2025-02-01', to: '2025-04-30', parameters: { entry_lookback: 15 } }
  const first = await backtest(acme.jwt, body, '?include=actions')
  const { model_id, from, to, parameters, fee_bps, slippage_bps, metrics, equity, trades, actions } = first
  const hashed = { model_id, from, to, parameters, fee_bps, slippage_bps, metrics, equity, trades, actions }
  assert.is(first.result_hash, createHash('sha256').update(jcs(hashed)).digest('hex'))
  const again = await backtest(acme.jwt, body)
  assert.is.not(first.id, again.id)
  assert.is(again.result_hash, first.result_hash)
  assert.equal(again.metrics, first.metrics)
  assert.equal(first.parameters, { entry_lookback: 15, exit_lookback: 10 })
  // The defaults are the risk profile's: 10 and 5 bps for a new workspace.
  assert.is(first.fee_bps, 10)
  assert.is(first.slippage_bps, 5)
  const dearer = await backtest(acme.jwt, { ...body, fee_bps: 25 })
  assert.is.not(dearer.result_hash, first.result_hash)
  assert.ok(dearer.metrics.total_return < first.metrics.total_return)
})

test('refusals: 400 for bad dates, ranges, fees and fields; 404 for an unknown model or another workspace; 422 for parameters; 401', async () => {
  const ok = { model_id: 'trend-follower', from: '2025-01-01', to: '2025-02-01' }
  const cases: [Record<string, unknown>, number, string, RegExp][] = [
    [{ ...ok, from: '2025-02-30' }, 400, 'validation_failed', /^from has day 30; 2025-02 has days 01-28$/],
    [{ ...ok, to: '2025/02/01' }, 400, 'validation_failed', /^to must be a date YYYY-MM-DD$/],
    [{ ...ok, from: '2025-03-01' }, 400, 'validation_failed', /from: 2025-03-01 is after to 2025-02-01/],
    [{ ...ok, to: day(0) }, 400, 'validation_failed', new RegExp(`to: must be before today \\(${day(0)} UTC\\)`)],
    [{ ...ok, from: '1990-01-01' }, 400, 'validation_failed', /to: the range is 12816 days; a backtest covers at most 10000/],
    [{ ...ok, fee_bps: 1001 }, 400, 'validation_failed', /fee_bps/],
    [{ ...ok, slippage_bps: -1 }, 400, 'validation_failed', /slippage_bps/],
    [{ ...ok, parameters: { fast_ema: 'fast' } }, 400, 'validation_failed', /parameters\.fast_ema/],
    [
      { ...ok, parameters: { lookback: 20 } },
      400,
      'validation_failed',
      /parameters\.lookback: is not a parameter of ema_cross, which takes fast_ema, slow_ema, band_pct/,
    ],
    [{ ...ok, colour: 'red' }, 400, 'unknown_field', /colour/],
    [{ ...ok, model_id: 'no-such-model' }, 404, 'not_found', /model no-such-model/],
    [{ ...ok, parameters: { fast_ema: 60 } }, 422, 'invalid_parameters', /fast_ema must be shorter than slow_ema/],
    [{ ...ok, parameters: { slow_ema: 1.5 } }, 422, 'invalid_parameters', /fast_ema and slow_ema must be integers from 2 to 1000/],
  ]
  for (const [body, status, code, detail] of cases) {
    const res = await api('POST', '/api/v1/backtests', { token: acme.jwt, body })
    assert.is(res.status, status, `${JSON.stringify(body)}: ${res.text}`)
    assert.is(res.json.code, code)
    assert.match(res.json.detail, detail, res.json.detail)
  }
  assert.is((await api('POST', '/api/v1/backtests', { body: ok })).status, 401)
  assert.is((await api('GET', '/api/v1/backtests', {})).status, 401)
  const mine = await api('GET', '/api/v1/backtests', { token: acme.jwt })
  const other = await api('GET', `/api/v1/backtests/${mine.json[0].id}`, { token: beta.jwt })
  assert.is(other.status, 404, other.text)
  assert.match(other.json.detail, /^backtest bt_\w+ not found$/)
  assert.ok(
    (await api('GET', '/api/v1/backtests', { token: beta.jwt })).json.every((b: Backtest) => b.model_id && !mine.json.some((m: Backtest) => m.id === b.id)),
    "a workspace's list holds only its own",
  )
  // An Idempotency-Key replays the first answer: one backtest queued, not two.
  const keyed = { token: acme.jwt, body: { ...ok, fee_bps: 7 }, headers: { 'idempotency-key': 'bt-once' } }
  const once = await api('POST', '/api/v1/backtests', keyed)
  const twice = await api('POST', '/api/v1/backtests', keyed)
  assert.is(twice.status, 200, twice.text)
  assert.is(twice.json.id, once.json.id)
  assert.is(twice.headers.get('idempotent-replayed'), 'true')
  assert.is((await query(server.dataDir, 'SELECT count(*) AS n FROM backtests WHERE fee_bps = 7'))[0].n, 1)
  // Nothing refused was queued: only the keyed one is there.
  const queued = (await query(server.dataDir, "SELECT count(*) AS n FROM backtests WHERE from_date = '2025-01-01' AND to_date = '2025-02-01'"))[0].n
  assert.is(queued, 1, 'the keyed one only')
})

test.run()
