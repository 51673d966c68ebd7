// `bulwark publish` on designed candles: the rule's answer per pair, the close it used, idempotency
// per model and date, pairs without prices (no signal, a warning, completed later), too little
// history, signal.published events per subscribed tenant, and no orders for a past date.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cli, client, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { ALL_PAIRS, DIRECTION, EXPECTED, addDays, day, importSeries, lastClose, query } from './fixtures.ts'

const test = suite('signals: the publisher')
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture
let solo: TenantFixture

// A fixed past run date: candles end the day before it.
const DATE = '2025-07-01'
const AS_OF = '2025-06-30'

const publish = (...args: string[]) => cli(['publish', ...args], { dataDir: server.dataDir })
const signalRows = (date = AS_OF) => query(server.dataDir, 'SELECT * FROM signals WHERE as_of = ? ORDER BY model_id, pair', date)

test.before(async () => {
  server = await startServer({ args: ['--quiet'] })
  api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  solo = await tenantFixture(server, 'solo', 'SIGNAL')
  let res = await api('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: ['trend-follower', 'mean-reversion', 'breakout-momentum'] } })
  assert.is(res.status, 200, res.text)
  res = await api('PUT', '/api/v1/workspace/models', { token: solo.jwt, body: { model_ids: ['mean-reversion'] } })
  assert.is(res.status, 200, res.text)
  // Every pair but DOT/USDT, which arrives later.
  await importSeries(
    server.dataDir,
    ALL_PAIRS.filter((p) => p !== 'DOT/USDT'),
    AS_OF,
  )
})
test.after(async () => {
  await server.stop()
})

test('bad flags are usage errors (exit 2); an unknown model fails (exit 1); nothing is written', async () => {
  for (const args of [['--date', '2025-02-30'], ['--date', '20250701'], ['--date', day(1)], ['extra'], ['--model'], ['--when', 'now']]) {
    const res = await publish(...args)
    assert.is(res.code, 2, `${args.join(' ')}: ${res.stderr}`)
    assert.match(res.stderr, /usage: bulwark publish/)
  }
  const unknown = await publish('--model', 'no-such-model')
  assert.is(unknown.code, 1)
  assert.match(unknown.stderr, /no model no-such-model; models: breakout-momentum, mean-reversion, trend-follower/)
  assert.is((await query(server.dataDir, 'SELECT count(*) AS n FROM publish_runs WHERE date = ?', DATE))[0].n, 0)
})

test("one signal per pair with the rule's answer, the close it used and as_of; a pair without prices gets none and a warning", async () => {
  const res = await publish('--date', DATE)
  assert.is(res.code, 0, res.stderr)
  assert.match(
    res.stdout,
    /trend-follower 2025-07-01 \(as of 2025-06-30\): 5 signals written \(ENTER_LONG 2, HOLD 1, EXIT_LONG 2\); a past date: no orders placed/,
  )
  assert.match(res.stdout, /mean-reversion 2025-07-01 \(as of 2025-06-30\): 4 signals written .*1 pair still without prices/)
  assert.match(res.stderr, /warning: mean-reversion DOT\/USDT: no signal: no candle dated 2025-06-30/)
  const rows = await signalRows()
  assert.is(rows.length, 14)
  for (const row of rows) {
    assert.is(row.action, EXPECTED[row.model_id][row.pair], `${row.model_id} ${row.pair}`)
    assert.is(row.direction, DIRECTION[row.action])
    assert.is(row.entry_price, lastClose(row.pair), `entry_price of ${row.pair} is its close of ${AS_OF}`)
    assert.is(row.as_of, AS_OF)
    assert.match(row.id, /^sig_[0-9A-Z]{26}$/)
  }
  assert.not.ok(
    rows.some((r) => r.pair === 'DOT/USDT'),
    'no made-up price for DOT/USDT',
  )
})

test('the same run again is idempotent: nothing written, announced or placed twice', async () => {
  const events = (await query(server.dataDir, "SELECT count(*) AS n FROM events WHERE type = 'signal.published'"))[0].n
  const res = await publish('--date', DATE)
  assert.is(res.code, 0, res.stderr)
  assert.match(res.stdout, /trend-follower 2025-07-01 \(as of 2025-06-30\): already published, nothing to do/)
  assert.match(res.stdout, /breakout-momentum 2025-07-01 \(as of 2025-06-30\): already published/)
  assert.match(res.stdout, /mean-reversion .*: 0 signals written .*1 pair still without prices/)
  assert.is((await signalRows()).length, 14)
  assert.is((await query(server.dataDir, "SELECT count(*) AS n FROM events WHERE type = 'signal.published'"))[0].n, events)
})

test('a late pair completes its run: only the missing signal is written, then the run is final', async () => {
  await importSeries(server.dataDir, ['DOT/USDT'], AS_OF)
  let res = await publish('--date', DATE, '--model', 'mean-reversion')
  assert.is(res.code, 0, res.stderr)
  assert.match(res.stdout, /^mean-reversion 2025-07-01 \(as of 2025-06-30\): 1 signal written \(ENTER_LONG 1, HOLD 0, EXIT_LONG 0\)/)
  assert.not.match(res.stdout, /trend-follower/)
  assert.is((await signalRows()).length, 15)
  res = await publish('--date', DATE)
  for (const model of ['trend-follower', 'mean-reversion', 'breakout-momentum']) assert.match(res.stdout, new RegExp(`${model} 2025-07-01 .*already published`))
  const runs = await query(server.dataDir, 'SELECT model_id, as_of, signals, missing_pairs FROM publish_runs WHERE date = ? ORDER BY model_id', DATE)
  assert.equal(runs, [
    { model_id: 'breakout-momentum', as_of: AS_OF, signals: 5, missing_pairs: 0 },
    { model_id: 'mean-reversion', as_of: AS_OF, signals: 5, missing_pairs: 0 },
    { model_id: 'trend-follower', as_of: AS_OF, signals: 5, missing_pairs: 0 },
  ])
})

test('signal.published: one event per model run per tenant with the model active, with its signals', async () => {
  const events = (
    await query(
      server.dataDir,
      `SELECT e.data, t.slug FROM events e JOIN tenants t ON t.id = e.tenant_id
    WHERE e.type = 'signal.published' ORDER BY e.id`,
    )
  ).map((e) => ({ slug: e.slug, ...JSON.parse(e.data) }))
  const runs = events.map((e) => `${e.slug} ${e.model_id} ${e.signals.length}`).sort()
  assert.equal(runs, [
    'acme breakout-momentum 5',
    'acme mean-reversion 1',
    'acme mean-reversion 4',
    'acme trend-follower 5',
    'solo mean-reversion 1',
    'solo mean-reversion 4',
  ])
  const first = events.find((e) => e.slug === 'acme' && e.model_id === 'trend-follower')
  assert.equal(Object.keys(first).sort(), [
    'as_of',
    'date',
    'model_hash',
    'model_id',
    'model_name',
    'model_version',
    'published_at',
    'signal_chain',
    'signals',
    'slug',
  ])
  assert.is(first.model_hash, 'b370e8211a8d0ca4c29effb6667f134fa0c6c4a52ecc486fa9b50b770861cf78')
  assert.equal(
    first.signals.find((s: any) => s.pair === 'BTC/USDT'),
    { id: first.signals[0].id, pair: 'BTC/USDT', action: 'ENTER_LONG', direction: 'LONG', entry_price: lastClose('BTC/USDT') },
  )
})

test('a past date places no orders, even for an EXECUTE tenant with the model active', async () => {
  assert.is((await query(server.dataDir, 'SELECT count(*) AS n FROM orders'))[0].n, 0)
})

test("GET /api/v1/signals serves the published signals of the caller's active models only", async () => {
  const key = await solo.key(['signals:read'])
  let res = await api('GET', `/api/v1/signals?since=${DATE}`, { token: key })
  assert.is(res.status, 200)
  assert.is(res.json.length, 5)
  assert.ok(res.json.every((s: any) => s.model_id === 'mean-reversion' && s.as_of === AS_OF))
  res = await api('GET', '/api/v1/signals?model_id=trend-follower', { token: key })
  assert.is(res.status, 404)
  res = await api('GET', '/api/v1/signals?pair=BTC/USDT', { token: acme.jwt })
  assert.equal(res.json.map((s: any) => `${s.model_id} ${s.action} ${s.entry_price}`).sort(), [
    'breakout-momentum ENTER_LONG 359',
    'trend-follower ENTER_LONG 359',
  ])
})

test('too little history: no signal and a warning naming what the rule needs', async () => {
  // The series start 259 days before 2025-06-30, on 2024-10-14: on 2025-01-10 there are 88 candles,
  // enough for the 20-day rules, not for the trend follower's 250.
  const res = await publish('--date', '2025-01-10')
  assert.is(res.code, 0, res.stderr)
  assert.match(res.stderr, /warning: trend-follower BTC\/USDT: no signal: needs 250 daily candles up to 2025-01-09, has 88/)
  assert.match(res.stdout, /trend-follower 2025-01-10 \(as of 2025-01-09\): 0 signals written .*5 pairs still without prices/)
  assert.match(res.stdout, /breakout-momentum 2025-01-10 \(as of 2025-01-09\): 5 signals written/)
  assert.match(res.stdout, /mean-reversion 2025-01-10 \(as of 2025-01-09\): 5 signals written/)
  assert.is((await query(server.dataDir, "SELECT count(*) AS n FROM signals WHERE model_id = 'trend-follower' AND as_of = '2025-01-09'"))[0].n, 0)
})

test('a date before any candle: every pair is missing, nothing is invented', async () => {
  const res = await publish('--date', '2020-01-01', '--model', 'breakout-momentum')
  assert.is(res.code, 0)
  assert.match(res.stdout, /0 signals written .*5 pairs still without prices/)
  assert.equal(
    (res.stderr.match(/^warning: breakout-momentum [A-Z]+\/USDT: no signal: no candle dated 2019-12-31 \(latest is 2025-06-30\)$/gm) ?? []).length,
    5,
  )
  assert.is((await query(server.dataDir, 'SELECT count(*) AS n FROM signals WHERE as_of = ?', addDays('2020-01-01', -1)))[0].n, 0)
})

test.run()
