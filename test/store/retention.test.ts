// Retention (SPEC section 8), soaked: one real data dir through a simulated month, a real `serve`
// started once per simulated day with its wall clock set to that day (test/support/shifted-clock.mjs).
// Each day: many idempotent POSTs (webhook pings) delivered to a real HTTPS receiver on 127.0.0.1
// (SUCCEEDED and FAILED), and the purge that runs after every start; the last day also waits for the
// 03:30 UTC upkeep. After each day the test reads the file and checks every row against the rule with
// its own few lines, the log's counts against the rows that went, history untouched, and the pages in
// use after twice the requests for the same history kept.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { fileURLToPath } from 'node:url'
import { openTestDatabase, type TestDatabase } from '../support/database.ts'
import { cli, ENGINE, request, startServer, tempDir, tenantFixture, type Res, type Server } from '../support/harness.ts'
import { makeTestCa, startReceiver, waitUntil, type Receiver, type TestCa } from '../webhooks/receiver.ts'
import { addDays, importCsv, importSeries } from '../signals/fixtures.ts'
import { prng } from '../../src/shared/prng.ts'

const test = suite('store: retention')
// The clock preload needs Node's --import, which the executable does not take: always from source.
delete process.env.BULWARK_BIN
const CLOCK = fileURLToPath(new URL('../support/shifted-clock.mjs', import.meta.url))

const DAY = 86_400_000
// A simulated day lasts a minute longer than 24 h, so each start is past 24 h after every key of
// the day before, and no row is ever within a minute of a cutoff.
const STEP = DAY + 60_000
const LAST = 31 // days 0..31
const RETENTION = 10 // --retention-days from day 1 on (day 0 runs on the default, 30)
const X1 = 15,
  X2 = 31 // days 0..15 and 0..31: twice the requests, the same history kept
const PINGS_OK = 40 // per day, to an endpoint that answers 200
const PINGS_FLAKY = 4 // per day, to one that answers 200 to the day's first and 500 after
const SEED = 20_251_108
const rng = prng(SEED)

let ca: TestCa
let receiver: Receiver
let dataDir: string
let server: Server | undefined
let flakyOk = false

// The last day starts at 03:29:45 UTC, before the nightly upkeep even on a slow start.
const lastStart = (() => {
  const earliest = Date.now() + 5 * 60_000 + LAST * STEP
  const at = new Date(earliest)
  at.setUTCHours(3, 29, 45, 0)
  if (at.getTime() < earliest) at.setUTCDate(at.getUTCDate() + 1)
  return at.getTime()
})()
const dayStart = (day: number) => lastStart - (LAST - day) * STEP

function session(day: number, args: string[]): Promise<Server> {
  const options = [process.env.NODE_OPTIONS, `--import=${CLOCK}`].filter(Boolean).join(' ')
  return startServer({
    dataDir,
    args: ['--quiet', '--webhook-allow-cidr', '127.0.0.1/32', '--webhook-ca-file', ca.caFile, ...args],
    env: { NODE_OPTIONS: options, BULWARK_TEST_NOW: new Date(dayStart(day)).toISOString(), BULWARK_WEBHOOK_RETRY_SCALE: '0.000001' },
  })
}

async function readDb<T>(fn: (db: TestDatabase) => Promise<T>): Promise<T> {
  const db = await openTestDatabase(dataDir, { readonly: true })
  try {
    return await fn(db)
  } finally {
    await db.close()
  }
}

/** A random-looking Idempotency-Key, as clients make them (so the table's key order is not time order). */
const uuid = () => Array.from({ length: 32 }, () => Math.floor(rng() * 16).toString(16)).join('')

type Line = { level: string; reason: string; purged: Record<string, number>; retention_days: number; checkpoint?: unknown }
function upkeepLines(s: Server): Line[] {
  return s
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .filter((l) => String(l.msg).startsWith('maintenance'))
}

/** Every row of the tables retention touches, by key, with its creation time (ms). */
interface Snapshot {
  keys: Map<string, number>
  deliveries: Map<string, { at: number; status: string; event: string }>
  events: Map<string, number>
}
function snapshot(): Promise<Snapshot> {
  return readDb(async (db) => ({
    keys: new Map((await db.all('SELECT owner, key, created_at FROM idempotency_keys')).map((r) => [`${r.owner} ${r.key}`, r.created_at])),
    deliveries: new Map(
      (await db.all('SELECT id, created_at, status, event_id FROM webhook_deliveries')).map((r) => [
        r.id,
        { at: Date.parse(r.created_at), status: r.status, event: r.event_id },
      ]),
    ),
    events: new Map((await db.all('SELECT id, created_at FROM events')).map((r) => [r.id, Date.parse(r.created_at)])),
  }))
}

function history(): Promise<Record<string, string[]>> {
  return readDb(async (db) => {
    const ids: Record<string, string[]> = {}
    for (const table of ['signals', 'orders', 'trades', 'incidents']) {
      ids[table] = (await db.all<{ id: string }>(`SELECT id FROM ${table} ORDER BY id`)).map((r) => r.id)
    }
    return ids
  })
}

/**
 * The pages in use: on SQLite the file's pages less its free list (freed pages are reused, the file
 * never shrinks); on PostgreSQL, whose freed space only autovacuum would reclaim (whenever it
 * runs), the 8 kB pages of every table, its indexes and TOAST once VACUUM FULL has compacted them
 * to what is kept (the server is stopped: nothing waits on its locks).
 */
function usedPages(): Promise<number> {
  if (ENGINE === 'sqlite') {
    return readDb(async (db) => (await db.get('SELECT page_count - freelist_count AS n FROM pragma_page_count(), pragma_freelist_count()')).n)
  }
  return (async () => {
    const db = await openTestDatabase(dataDir)
    try {
      await db.exec('VACUUM FULL')
      const { bytes } = await db.get(
        "SELECT sum(pg_total_relation_size(c.oid)) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = current_schema()",
      )
      return Number(bytes) / 8192
    } finally {
      await db.close()
    }
  })()
}

const gone = <K, V>(before: Map<K, V>, after: Map<K, V>) => [...before.keys()].filter((k) => !after.has(k))

test.before(async () => {
  ca = makeTestCa('retention')
  receiver = await startReceiver(ca)
  receiver.behave('/ok', () => ({ status: 200 }))
  receiver.behave('/flaky', () => {
    if (!flakyOk) return { status: 500 }
    flakyOk = false
    return { status: 200 }
  })
  receiver.behave('/stuck', () => ({ hang: true }))
  dataDir = tempDir('bulwark-retention')
})
test.after(async () => {
  await server?.stop()
  await receiver.close()
})

test('serve --retention-days takes an integer 1-3650 and nothing else (exit 2, one line)', async () => {
  for (const bad of ['0', 'abc', '3651', '1.5', '-3', '']) {
    const res = await cli(['serve', '--port', '0', '--retention-days', bad], { dataDir: tempDir() })
    assert.is(res.code, 2, bad)
    assert.is(res.stderr.split('\n')[0], 'error: --retention-days must be an integer 1-3650', bad)
  }
})

test('a simulated month: what expires is purged in each start and nightly upkeep, history and pending work stay, size follows what is kept', async () => {
  // Candles up to the day before yesterday (real time: the CLI runs unshifted), the signals of
  // yesterday from them, and yesterday's candle later to fill an order.
  const yesterday = addDays(new Date().toISOString().slice(0, 10), -1)
  const pairs = ['BTC/USDT', 'ETH/USDT', 'SOL/USDT', 'BNB/USDT', 'XRP/USDT']
  await importSeries(dataDir, pairs, addDays(yesterday, -1))
  const published = await cli(['publish', '--model', 'trend-follower', '--date', yesterday], { dataDir })
  assert.is(published.code, 0, published.stderr)

  let day = 0,
    token = '',
    tenantId = ''
  const keysOf: Set<string>[] = []
  const hooks: Record<string, string> = {}
  const post = async (path: string, body?: unknown, as = token): Promise<Res> => {
    const key = uuid()
    const res = await request(server!.url, 'POST', path, { token: as, body, headers: { 'Idempotency-Key': key } })
    assert.is(res.status, 200, `${path}: ${res.text}`)
    keysOf[day].add(key)
    return res
  }
  const pings = async () => {
    flakyOk = true // the day's first arrival at /flaky succeeds, so that endpoint is never disabled
    for (let i = 0; i < PINGS_FLAKY; i++) await post(`/api/v1/webhooks/${hooks.flaky}/test`)
    const first = await post(`/api/v1/webhooks/${hooks.ok}/test`)
    for (let i = 1; i < PINGS_OK; i++) await post(`/api/v1/webhooks/${hooks.ok}/test`)
    // The same key again is a replay: no new row.
    const replay = await request(server!.url, 'POST', `/api/v1/webhooks/${hooks.ok}/test`, { token, headers: { 'Idempotency-Key': [...keysOf[day]].at(-1)! } })
    assert.is(replay.headers.get('idempotent-replayed'), 'true')
    return first.json as { id: string; event_id: string }
  }
  const settle = async () => {
    const open = () =>
      readDb(async (db) => (await db.get("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'PENDING' AND webhook_id <> ?", [hooks.stuck])).n)
    await waitUntil(`day ${day}: every delivery SUCCEEDED or FAILED`, async () => (await open()) === 0, 60_000)
    await waitUntil(`day ${day}: the purge after start`, () => upkeepLines(server!).some((l) => l.reason === 'start'))
  }

  // ---- Day 0: tenants, endpoints, history, and three deliveries that stay PENDING ---------------
  keysOf[0] = new Set()
  server = await session(0, [])
  const acme = await tenantFixture(server, 'acme')
  const zeta = await tenantFixture(server, 'zeta')
  token = await acme.key(['webhooks:write'])
  tenantId = await readDb(async (db) => (await db.get("SELECT id FROM tenants WHERE slug = 'acme'")).id)
  for (const [name, events] of [
    ['ok', ['*']],
    ['flaky', ['webhook.ping']],
    ['stuck', ['webhook.ping']],
  ] as const) {
    hooks[name] = (await post('/api/v1/webhooks', { url: `${receiver.url}/${name}`, events })).json.id
  }
  const order = (await post('/api/v1/orders', { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 1 }, acme.jwt)).json
  await importCsv(dataDir, `pair,date,open,high,low,close,volume\nBTC/USDT,${yesterday},300,301,299,300,1000\n`) // fills it
  await post('/api/v1/risk/kill-switch', { action: 'CANCEL_AND_PAUSE', pause: true, reason: 'soak' }, acme.jwt)
  await post('/api/v1/risk/kill-switch', { action: 'RESUME', pause: false }, acme.jwt)
  await post('/api/v1/risk/kill-switch', { action: 'PAUSE', pause: true }, zeta.jwt) // an event with no endpoint at all
  const redeliverLater = await pings()
  // The first of these hangs at the receiver and the other two wait behind it; the endpoint is then
  // disabled, so all three stay PENDING for good (SIGTERM abandons the one in flight).
  for (let i = 0; i < 3; i++) await post(`/api/v1/webhooks/${hooks.stuck}/test`)
  await waitUntil('the stuck delivery to hang', () => receiver.open() === 1)
  const disabled = await request(server.url, 'PATCH', `/api/v1/webhooks/${hooks.stuck}`, { token, body: { status: 'DISABLED' } })
  assert.is(disabled.status, 200, disabled.text)
  await settle()
  await server.stop()
  assert.equal(
    upkeepLines(server).map((l) => [l.reason, l.retention_days, l.purged]),
    [['start', 30, { idempotency_keys: 0, webhook_deliveries: 0, events: 0, gateway_signatures: 0, alerts: 0 }]],
  )
  server = undefined

  const kept = await history()
  assert.equal(kept.signals.length, 5, 'the published signals')
  assert.ok(kept.orders.includes(order.id))
  assert.is(kept.trades.length, 1, 'the filled order opened a trade')
  assert.is(kept.incidents.length, 3)
  let before = await snapshot()
  const pending = [...before.deliveries].filter(([, d]) => d.status === 'PENDING')
  assert.is(pending.length, 3)
  assert.ok(pending.every(([, d]) => before.events.has(d.event)))
  assert.ok(
    [...before.deliveries.values()].some((d) => d.status === 'FAILED'),
    'the flaky endpoint FAILED some deliveries',
  )
  const purgedTotal = { idempotency_keys: 0, webhook_deliveries: 0, events: 0 },
    pages = [await usedPages()]
  const seen = { deliveries: new Map(before.deliveries), events: new Map(before.events) }

  // ---- Days 1..LAST ------------------------------------------------------------------------------
  for (day = 1; day <= LAST; day++) {
    keysOf[day] = new Set()
    server = await session(day, ['--retention-days', String(RETENTION)])
    await pings()
    if (day === 3) await post(`/api/v1/webhooks/${hooks.ok}/deliveries/${redeliverLater.id}/redeliver`)
    await settle()
    if (day === LAST) await waitUntil('the 03:30 UTC upkeep', () => upkeepLines(server!).some((l) => l.reason === 'nightly'))
    await server.stop()
    const lines = upkeepLines(server)
    server = undefined

    const after = await snapshot()
    for (const [id, d] of after.deliveries) seen.deliveries.set(id, d)
    for (const [id, at] of after.events) seen.events.set(id, at)
    assert.equal(
      lines.filter((l) => l.level !== 'info'),
      [],
      `day ${day}: no failed upkeep`,
    )
    assert.equal(lines.map((l) => l.reason).sort(), day === LAST ? ['nightly', 'start'] : ['start'], `day ${day}`)
    // The nightly line reports SQLite's checkpoint; PostgreSQL's round has none (its checkpointer does that).
    assert.ok(lines.every((l) => l.retention_days === RETENTION && (ENGINE === 'sqlite' && l.reason === 'nightly') === Boolean(l.checkpoint)))
    // Each line's counts are the rows that went (nothing made today is ever old enough to go today).
    const sum = (kind: string) => lines.reduce((n, l) => n + l.purged[kind], 0)
    assert.is(sum('idempotency_keys'), gone(before.keys, after.keys).length, `day ${day}: keys`)
    assert.is(sum('webhook_deliveries'), gone(before.deliveries, after.deliveries).length, `day ${day}: deliveries`)
    assert.is(sum('events'), gone(before.events, after.events).length, `day ${day}: events`)
    for (const kind of Object.keys(purgedTotal) as (keyof typeof purgedTotal)[]) purgedTotal[kind] += sum(kind)

    // Keys: exactly today's (every earlier one was used more than 24 h before this start).
    assert.equal([...after.keys.keys()].sort(), [...keysOf[day]].map((k) => `${tenantId} ${k}`).sort(), `day ${day}: keys of the last 24 h`)
    // Deliveries and events, against the rule: older than the retention at this start is gone unless
    // PENDING (or, for an event, still referred to); younger is there. The minute either side of the
    // cutoff is left out: the purge runs a moment after the start.
    const cutoff = dayStart(day) - RETENTION * DAY
    for (const [id, d] of seen.deliveries) {
      if (d.at < cutoff && d.status !== 'PENDING') assert.not.ok(after.deliveries.has(id), `day ${day}: delivery ${id} outlived the retention`)
      if (d.at > cutoff + 60_000 || d.status === 'PENDING') assert.ok(after.deliveries.has(id), `day ${day}: delivery ${id} purged too early`)
    }
    const referred = new Set([...after.deliveries.values()].map((d) => d.event))
    for (const [id, at] of seen.events) {
      if (at < cutoff && !referred.has(id)) assert.not.ok(after.events.has(id), `day ${day}: event ${id} outlived the retention`)
      if (at > cutoff + 60_000 || referred.has(id)) assert.ok(after.events.has(id), `day ${day}: event ${id} purged too early`)
    }
    if (day === RETENTION) {
      assert.not.ok(after.deliveries.has(redeliverLater.id), 'the first delivery of the redelivered event is gone')
      assert.ok(after.events.has(redeliverLater.event_id), 'but its event stays while its redelivery does')
    }
    if (day === RETENTION + 3) assert.not.ok(after.events.has(redeliverLater.event_id), 'and goes with it')
    assert.equal(await history(), kept, `day ${day}: signals, orders, trades and incidents are never pruned`)
    pages[day] = await usedPages()
    before = after
  }

  // The end of the month: the last RETENTION days of deliveries (each day's pings, SUCCEEDED or
  // FAILED) and their events, the three PENDING ones with theirs, and every row that went was counted.
  const finished = [...before.deliveries.values()].filter((d) => d.status !== 'PENDING')
  assert.is(finished.length, RETENTION * (PINGS_OK + PINGS_FLAKY))
  assert.is(finished.filter((d) => d.status === 'FAILED').length, RETENTION * (PINGS_FLAKY - 1))
  assert.equal([...before.deliveries.keys()].filter((id) => before.deliveries.get(id)!.status === 'PENDING').sort(), pending.map(([id]) => id).sort())
  assert.is(before.events.size, RETENTION * (PINGS_OK + PINGS_FLAKY) + 3)
  assert.is(
    purgedTotal.idempotency_keys,
    keysOf.slice(0, LAST).reduce((n, k) => n + k.size, 0),
  )
  assert.is(purgedTotal.webhook_deliveries, seen.deliveries.size - before.deliveries.size)
  assert.is(purgedTotal.events, seen.events.size - before.events.size)

  // Size: twice the requests served, the same history kept, about the same pages in use; without
  // retention each day would add what the first RETENTION days added on average.
  const perDay = (pages[RETENTION] - pages[0]) / RETENTION
  console.log(
    `  pages in use: day 0 ${pages[0]}, day ${RETENTION} ${pages[RETENTION]}, day ${X1} ${pages[X1]}, day ${X2} ${pages[X2]} (${perDay.toFixed(1)} a day before the first purge)`,
  )
  assert.ok(perDay > 2, 'a day of requests takes pages')
  assert.ok(pages[X2] - pages[X1] <= Math.max(2 * perDay, pages[X1] * 0.05), `day ${X2} uses ${pages[X2]} pages, day ${X1} ${pages[X1]}`)
})

test.run()
