// Dates and date-times from every kind of input, through the real server and CLI: `since` on the
// list endpoints and `expires_at` with offsets up to 23:59 either way applied exactly, fractions,
// leap days and the ends of years 0000-9999; bad forms refused naming the field; `publish --date`
// and `prices import` refusing impossible dates and candles that have not closed yet.
// The expected instants come from this file's own calendar arithmetic, never from Date.parse.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { openTestDatabase } from '../support/database.ts'
import { cli, client, startServer, tempDir, tenantFixture, type CliResult, type Server, type TenantFixture } from '../support/harness.ts'
import { importSeries } from '../signals/fixtures.ts'

const test = suite('api: dates and date-times')
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture
let reader: string
let rows: { id: string; ms: number }[] = []
let first = 0 // created_at of the first publish's signals, in ms
let second = 0 // and of the second's

const DAY = 86_400_000

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468
}

/** The instant, in ms, of a wall time at `offset` minutes east of UTC. */
function instant(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number, offset: number): number {
  return ((daysFromCivil(y, mo, d) * 24 + h) * 60 + mi - offset) * 60_000 + s * 1000 + ms
}

/** ms of a stored YYYY-MM-DDTHH:MM:SS.sssZ, read with the same arithmetic. */
function storedMs(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/.exec(text)
  assert.ok(m, `stored form ${text}`)
  const [y, mo, d, h, mi, s, ms] = m!.slice(1).map(Number)
  return instant(y, mo, d, h, mi, s, ms, 0)
}

/** `ms` written as the wall time at `offset` minutes east of UTC, with extra fraction digits. */
function local(ms: number, offset: number, extraDigits = ''): string {
  const wall = new Date(ms + offset * 60_000).toISOString().slice(0, 23)
  const a = Math.abs(offset)
  return `${wall}${extraDigits}${offset < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`
}

const OFFSETS = [-(23 * 60 + 59), 23 * 60 + 59, -120, 0, 330]

async function signalIds(since: string, path = '/api/v1/signals'): Promise<string[]> {
  const res = await api('GET', `${path}?since=${encodeURIComponent(since)}`, { token: reader })
  assert.is(res.status, 200, `since=${since}: ${res.text}`)
  return res.json.map((r: any) => r.id).sort()
}

/** Rows created at or after an instant given as ms plus a sub-millisecond part in [0, 1). */
function expected(ms: number, below = 0): string[] {
  return rows
    .filter((r) => r.ms > ms || (r.ms === ms && below === 0))
    .map((r) => r.id)
    .sort()
}

test.before(async () => {
  server = await startServer({ args: ['--quiet'] })
  api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  const ws = await api('PUT', '/api/v1/workspace/models', { token: acme.jwt, body: { model_ids: ['trend-follower'] } })
  assert.is(ws.status, 200, ws.text)
  reader = await acme.key(['signals:read', 'trades:read'])
  // Two publishes by two CLI processes: two groups of signals with two created_at instants.
  await importSeries(server.dataDir, ['BTC/USDT', 'ETH/USDT', 'SOL/USDT', 'BNB/USDT', 'XRP/USDT'], '2025-07-01')
  for (const date of ['2025-07-01', '2025-07-02']) {
    const res = await cli(['publish', '--model', 'trend-follower', '--date', date], { dataDir: server.dataDir })
    assert.is(res.code, 0, res.stderr)
  }
  const all = await api('GET', '/api/v1/signals', { token: reader })
  rows = all.json.map((r: any) => ({ id: r.id, ms: storedMs(r.created_at) }))
  const times = [...new Set(rows.map((r) => r.ms))].sort((a, b) => a - b)
  assert.is(rows.length, 10)
  assert.is(times.length, 2, 'the two publishes have two created_at instants')
  ;[first, second] = times
})
test.after(async () => {
  await server.stop()
})

test("this file's own arithmetic reproduces the SPEC's example", () => {
  assert.is(local(instant(2026, 11, 23, 1, 0, 0, 0, 0), -120), '2026-11-22T23:00:00.000-02:00')
  assert.is(instant(2026, 11, 22, 23, 0, 0, 0, -120), instant(2026, 11, 23, 1, 0, 0, 0, 0))
  assert.is(daysFromCivil(1970, 1, 1), 0)
  assert.is(daysFromCivil(2000, 3, 1) - daysFromCivil(2000, 2, 28), 2, '2000 is a leap year')
  assert.is(daysFromCivil(2100, 3, 1) - daysFromCivil(2100, 2, 28), 1, '2100 is not')
})

test('since: offsets of -23:59, +23:59, -02:00, +00:00 and +05:30 are applied exactly, at the millisecond', async () => {
  for (const offset of OFFSETS) {
    for (const at of [first, first + 1, second - 1, second, second + 1]) {
      const since = local(at, offset)
      assert.equal(await signalIds(since), expected(at), since)
    }
  }
  // the same instants written in Z
  assert.equal(await signalIds(new Date(second).toISOString()), expected(second))
  assert.equal(await signalIds(new Date(second + 1).toISOString()), expected(second + 1))
})

test('since: fractions of any length; digits below the millisecond count', async () => {
  for (const offset of [-(23 * 60 + 59), 23 * 60 + 59]) {
    // one nanosecond before `second`: its rows are after it, the earlier ones are not
    assert.equal(await signalIds(local(second - 1, offset, '999999')), expected(second - 1, 0.999999))
    // exactly `second`, with trailing zeros
    assert.equal(await signalIds(local(second, offset, '000000')), expected(second))
    // one nanosecond after `second`: nothing created at `second` is at or after it
    assert.equal(await signalIds(local(second, offset, '000001')), expected(second, 0.000001))
  }
  const tenths = `${new Date(second - (second % 1000)).toISOString().slice(0, 19)}.5Z`
  assert.equal(await signalIds(tenths), expected(second - (second % 1000) + 500))
})

test('since: leap days, dates alone, and the first and last instants of years 0000-9999', async () => {
  const cases: [string, number][] = [
    ['2024-02-29T23:59:59.999-23:59', instant(2024, 2, 29, 23, 59, 59, 999, -(23 * 60 + 59))],
    ['2096-02-28T23:00:00-02:00', instant(2096, 2, 28, 23, 0, 0, 0, -120)], // 2096-02-29T01:00Z
    ['2096-03-01T00:30:00+01:00', instant(2096, 3, 1, 0, 30, 0, 0, 60)], // 2096-02-29T23:30Z
    ['2000-02-29', instant(2000, 2, 29, 0, 0, 0, 0, 0)],
    ['2096-02-29', instant(2096, 2, 29, 0, 0, 0, 0, 0)],
    ['0000-01-01T23:59:00+23:59', instant(0, 1, 1, 0, 0, 0, 0, 0)],
    ['0050-06-01T00:00:00Z', instant(50, 6, 1, 0, 0, 0, 0, 0)],
    ['9999-12-31T00:00:00-23:59', instant(9999, 12, 31, 23, 59, 0, 0, 0)],
    ['9999-12-31T23:59:59.999Z', instant(9999, 12, 31, 23, 59, 59, 999, 0)],
    ['2026-11-22T23:00:00-02:00', instant(2026, 11, 23, 1, 0, 0, 0, 0)],
    ['2026-11-22T23:00:00-00:00', instant(2026, 11, 22, 23, 0, 0, 0, 0)],
  ]
  for (const [since, ms] of cases) assert.equal(await signalIds(since), expected(ms), since)
  // the same filter on the other lists
  for (const path of ['/api/v1/trades', '/api/v1/orders']) assert.equal(await signalIds('9999-12-31T00:00:00-23:59', path), [])
})

const BAD: [string, RegExp][] = [
  ['2026-11-22T24:00:00Z', /hour 24/],
  ['2026-11-22T23:00:00-24:00', /offset -24:00/],
  ['2026-11-22T23:00:00+23:60', /offset \+23:60/],
  ['2026-11-22T23:60:00Z', /minute 60/],
  ['2026-11-22T23:59:60Z', /leap second/],
  ['2026-02-30T00:00:00Z', /day 30/],
  ['2026-02-29T00:00:00Z', /day 29/],
  ['2100-02-29T00:00:00Z', /day 29/],
  ['2026-13-01T00:00:00Z', /month 13/],
  ['10000-01-01T00:00:00Z', /four-digit year/],
  ['2026-11-22T23:00:00', /no offset/],
  ['2026-11-22t23:00:00z', /uppercase T/],
  ['2026-11-22 23:00:00Z', /uppercase T/],
  ['2026-11-22T23:00:00z', /uppercase Z/],
  ['2026-11-22T23:00Z', /RFC 3339/],
  ['2026-11-22T23:00:00+0200', /RFC 3339/],
  ['9999-12-31T23:00:00-23:59', /outside the years 0000-9999/],
  ['0000-01-01T00:00:00+23:59', /outside the years 0000-9999/],
  ['2026-11-22T23:00:00.Z', /RFC 3339/],
  ['2026-11-22T23:00:00,5Z', /RFC 3339/],
]

test('since: bad forms are 400 validation_failed naming since, on every list', async () => {
  for (const path of ['/api/v1/signals', '/api/v1/trades', '/api/v1/orders']) {
    for (const [since, why] of [...BAD, ['2026-02-30', /day 30/] as [string, RegExp], ['2026-1-2', /date YYYY-MM-DD or/] as [string, RegExp]]) {
      const res = await api('GET', `${path}?since=${encodeURIComponent(since)}`, { token: reader })
      assert.is(res.status, 400, `${path} since=${since}: ${res.text}`)
      assert.is(res.json.code, 'validation_failed', since)
      assert.equal(
        res.json.errors.map((e: any) => e.field),
        ['since'],
        since,
      )
      assert.match(res.json.detail, why, `${since}: ${res.json.detail}`)
    }
  }
})

async function createToken(expiresAt: unknown) {
  return api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'dated', scopes: ['signals:read'], expires_at: expiresAt } })
}

test('expires_at: offsets, fractions and leap days are stored and echoed as the right Z instant', async () => {
  const cases: [string, number][] = [
    ['2030-06-15T23:30:00-23:59', instant(2030, 6, 15, 23, 30, 0, 0, -(23 * 60 + 59))],
    ['2030-06-15T00:10:00+23:59', instant(2030, 6, 15, 0, 10, 0, 0, 23 * 60 + 59)],
    ['2096-02-28T23:00:00-02:00', instant(2096, 2, 28, 23, 0, 0, 0, -120)],
    ['2096-03-01T00:30:00+01:00', instant(2096, 3, 1, 0, 30, 0, 0, 60)],
    ['2030-01-01T00:00:00.123456789+05:30', instant(2030, 1, 1, 0, 0, 0, 123, 330)],
    ['9999-12-31T00:00:00-23:59', instant(9999, 12, 31, 23, 59, 0, 0, 0)],
  ]
  const listed = async () => (await api('GET', '/api/v1/auth/api-tokens', { token: acme.jwt })).json as any[]
  for (const [given, ms] of cases) {
    const res = await createToken(given)
    assert.is(res.status, 200, `${given}: ${res.text}`)
    assert.is(storedMs(res.json.expires_at), ms, `${given} -> ${res.json.expires_at}`)
    assert.is(res.json.expires_at, new Date(ms).toISOString())
    assert.is((await listed()).find((t) => t.id === res.json.id).expires_at, res.json.expires_at)
    // the key works: it is not read as expired
    assert.is((await api('GET', '/api/v1/signals?limit=1', { token: res.json.token })).status, 200, given)
  }
})

test('expires_at: in the past once its offset is applied, or a bad form, is 400 naming expires_at', async () => {
  // An hour ago, written at +23:59: the wall clock reads nearly a day ahead, the instant is past.
  const past = local(Date.now() - 3_600_000, 23 * 60 + 59)
  const res = await createToken(past)
  assert.is(res.status, 400, res.text)
  assert.equal(
    res.json.errors.map((e: any) => e.field),
    ['expires_at'],
  )
  assert.match(res.json.detail, /in the future/)
  for (const [given, why] of [...BAD, ['2030-01-01', /RFC 3339/] as [string, RegExp]]) {
    const bad = await createToken(given)
    assert.is(bad.status, 400, `${given}: ${bad.text}`)
    assert.is(bad.json.code, 'validation_failed', given)
    assert.equal(
      bad.json.errors.map((e: any) => e.field),
      ['expires_at'],
      given,
    )
    assert.match(bad.json.detail, why, `${given}: ${bad.json.detail}`)
  }
})

// ---------------------------------------------------------------- the CLI

const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10)

async function pricesOf(pair: string): Promise<string[]> {
  const db = await openTestDatabase(server.dataDir, { readonly: true })
  try {
    return (await db.all<{ date: string }>('SELECT date FROM prices WHERE pair = ? ORDER BY date', [pair])).map((row) => row.date)
  } finally {
    await db.close()
  }
}

async function importText(text: string) {
  const file = join(tempDir('dates-csv'), 'candles.csv')
  writeFileSync(file, text)
  return cli(['prices', 'import', file], { dataDir: server.dataDir })
}

/** Imports one candle dated `daysBack` before today (UTC), again if midnight passed meanwhile. */
async function importDay(pair: string, daysBack: number): Promise<[string, CliResult]> {
  for (;;) {
    const today = utcDate(Date.now())
    const date = utcDate(Date.parse(`${today}T00:00:00Z`) - daysBack * DAY)
    const res = await importText(`pair,date,open,high,low,close,volume\n${pair},${date},10,11,9,10,1\n`)
    if (utcDate(Date.now()) === today) return [date, res]
  }
}

test('publish --date: an impossible date is one error line naming --date, the usage, exit 2', async () => {
  for (const [date, why] of [
    ['2026-13-01', /month 13/],
    ['2026-02-29', /day 29/],
    ['2026-04-31', /day 31/],
    ['0000-00-00', /month 00/],
    ['10000-01-01', /four-digit year/],
    ['2026-11-22T00:00:00Z', /YYYY-MM-DD/],
  ] as [string, RegExp][]) {
    const res = await cli(['publish', '--date', date], { dataDir: server.dataDir })
    assert.is(res.code, 2, `${date}: ${res.stderr}`)
    assert.is(res.stdout, '')
    const lines = res.stderr.trimEnd().split('\n')
    assert.is(lines.length, 2, res.stderr)
    assert.match(lines[0], /^error: --date /)
    assert.match(lines[0], why)
    assert.match(lines[1], /^usage: bulwark publish/)
  }
  const leap = await cli(['publish', '--model', 'trend-follower', '--date', '2024-02-29'], { dataDir: server.dataDir })
  assert.is(leap.code, 0, `a real leap day is a date: ${leap.stderr}`)
})

test('prices import: candles dated tomorrow and in 2099 refuse the whole file, naming their lines', async () => {
  const yesterday = utcDate(Date.now() - DAY)
  const res = await importText(
    `${[
      'pair,date,open,high,low,close,volume',
      `DTA/USDT,${yesterday},10,11,9,10,1`,
      `DTA/USDT,${utcDate(Date.now() + DAY)},10,11,9,10,1`,
      'DTA/USDT,2099-01-02,10,11,9,10,1',
    ].join('\n')}\n`,
  )
  assert.is(res.code, 1, res.stderr)
  assert.match(res.stderr, /line 3: DTA\/USDT \d{4}-\d{2}-\d{2} is not closed yet/)
  assert.match(res.stderr, /line 4: DTA\/USDT 2099-01-02 is not closed yet/)
  assert.not.match(res.stderr, /line 2:/)
  assert.match(res.stderr, /nothing was imported/)
  assert.equal(await pricesOf('DTA/USDT'), [], 'the good line 2 was not imported either')
})

test('prices import: a candle dated today (UTC) is refused; yesterday is imported', async () => {
  const [today, refused] = await importDay('DTB/USDT', 0)
  assert.is(refused.code, 1, refused.stderr)
  assert.match(refused.stderr, new RegExp(`line 2: DTB/USDT ${today} is not closed yet \\(today is ${today} UTC\\)`))
  assert.not.ok((await pricesOf('DTB/USDT')).includes(today))
  const [yesterday, accepted] = await importDay('DTB/USDT', 1)
  assert.is(accepted.code, 0, accepted.stderr)
  assert.ok((await pricesOf('DTB/USDT')).includes(yesterday))
  const bad = await importText('pair,date,open,high,low,close,volume\nDTC/USDT,2024-02-30,10,11,9,10,1\nDTC/USDT,2024-02-29,10,11,9,10,1\n')
  assert.is(bad.code, 1)
  assert.match(bad.stderr, /line 2: date "2024-02-30" has day 30/)
  assert.equal(await pricesOf('DTC/USDT'), [])
})

test.run()
