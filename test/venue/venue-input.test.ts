// What an exchange connection is given, refused before anything reaches the venue: an exchange id
// is one of ccxt's own (never a name every object inherits: `constructor`, `toString`, ...), and a
// key, secret or passphrase holds only what an HTTP header may carry. Through PUT /api/v1/venue,
// `bulwark venue connect`, `bulwark prices fetch` and `serve --market-data`, with the test venue
// counting the requests that reached it.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cli, startServer, tempDir, tenantFixture, type CliResult, type Server, type TenantFixture } from '../support/harness.ts'
import { startVenue, venueKey, type Venue } from '../support/venue/index.ts'
import { checkedClient } from '../trading/market.ts'

const test = suite('venue: input refused before the venue is called')
let venue: Venue
let server: Server
let api: Awaited<ReturnType<typeof checkedClient>>
let acme: TenantFixture
const good = venueKey('acme', 'acme')

/** Every name a plain object (ccxt's table of exchanges) inherits. */
const INHERITED = Object.getOwnPropertyNames(Object.prototype)

/** Characters no HTTP header may carry, or no exchange key holds: controls, DEL, beyond ASCII. */
const BAD_CHARACTERS = ['\n', '\r', '\r\n', '\t', '\u0001', '\u001b', '\u007f', 'é', 'ключ', '🔑', '\u2028', '\u00a0']

function connect(body: Record<string, unknown>) {
  return api('PUT', '/api/v1/venue', { token: acme.jwt, body })
}

/** Runs `run` over `items`, `width` at a time. */
async function batched<T, R>(items: readonly T[], width: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = []
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(run))))
  return out
}

/** A usage error as the CLI reports every bad flag: exit 2, one error line, then the usage. */
function assertUsageError(res: CliResult, message: RegExp, label: string): void {
  assert.is(res.code, 2, `${label}: ${res.stderr}`)
  const lines = res.stderr.trimEnd().split('\n')
  assert.is(lines.length, 2, `${label}: ${res.stderr}`)
  assert.match(lines[0], message, label)
  assert.match(lines[1], /^usage: bulwark /, label)
  assert.not.match(res.stderr, /TypeError|at .*\.ts:\d+/, label)
}

test.before(async () => {
  venue = await startVenue()
  await venue.addKey({ ...good, restrictions: { enableWithdrawals: false } })
  await venue.setBalances({ USDT: 10_000 }, 'acme')
  server = await startServer({ args: ['--venue-url', venue.url, '--ca-file', venue.caFile] })
  api = await checkedClient(server)
  acme = await tenantFixture(server, 'acme')
})
test.after(async () => {
  await server.stop()
  await venue.close()
})

test('PUT /venue: a name every object inherits is no exchange (400 naming exchange); the venue hears nothing', async () => {
  await venue.clearRequests()
  for (const exchange of [...INHERITED, 'prototype', 'notanexchange']) {
    const res = await connect({ exchange, api_key: good.apiKey, api_secret: good.secret })
    assert.is(res.status, 400, `${exchange}: ${res.text}`)
    assert.is(res.json.code, 'validation_failed', exchange)
    assert.equal(
      res.json.errors.map((e: { field: string }) => e.field),
      ['exchange'],
      exchange,
    )
  }
  assert.equal(await venue.requests(), [])
  assert.is((await api('GET', '/api/v1/venue', { token: acme.jwt })).json.status, 'DISCONNECTED')
})

test('PUT /venue: a key, secret or passphrase with a character no header may carry is 400 naming it; the venue hears nothing', async () => {
  await venue.clearRequests()
  const base = { exchange: 'binance', api_key: good.apiKey, api_secret: good.secret, password: 'pass phrase' }
  for (const field of ['api_key', 'api_secret', 'password'] as const) {
    const values = [...BAD_CHARACTERS.map((c) => `${base[field].slice(0, 4)}${c}${base[field].slice(4)}`), ` ${base[field]}`, `${base[field]} `]
    if (field !== 'password') values.push(`${base[field].slice(0, 4)} ${base[field].slice(4)}`)
    for (const value of values) {
      const res = await connect({ ...base, [field]: value })
      const label = `${field} ${JSON.stringify(value)}`
      assert.is(res.status, 400, `${label}: ${res.text}`)
      assert.is(res.json.code, 'validation_failed', label)
      assert.equal(
        res.json.errors.map((e: { field: string }) => e.field),
        [field],
        label,
      )
      assert.match(res.json.detail, new RegExp(`^${field} `), label)
    }
  }
  assert.equal(await venue.requests(), [])
  assert.is((await api('GET', '/api/v1/venue', { token: acme.jwt })).json.status, 'DISCONNECTED')
  // A passphrase may hold spaces inside, as a header value may.
  const made = await connect(base)
  assert.is(made.status, 200, made.text)
  assert.is((await api('DELETE', '/api/v1/venue', { token: acme.jwt })).status, 200)
})

test('venue connect and prices fetch: an inherited name is a usage error (exit 2, one line), never a TypeError', async () => {
  const flags = ['--venue-url', venue.url, '--ca-file', venue.caFile]
  const runs = INHERITED.flatMap((name) => [
    { name, args: ['venue', 'connect', '--tenant', 'acme', '--exchange', name, '--api-key', good.apiKey, ...flags], input: `${good.secret}\n` },
    { name, args: ['prices', 'fetch', '--exchange', name, ...flags], input: '' },
  ])
  await venue.clearRequests()
  const results = await batched(runs, 4, (run) => cli(run.args, { dataDir: server.dataDir, input: run.input }))
  results.forEach((res, i) => {
    assertUsageError(res, /^error: --exchange (must be a ccxt exchange id|"\w+" is not an exchange ccxt [\d.]+ knows)/, runs[i].args.slice(0, 4).join(' '))
  })
  assert.match(results[INHERITED.indexOf('constructor') * 2].stderr, /^error: --exchange "constructor" is not an exchange ccxt [\d.]+ knows\n/)
  assert.equal(await venue.requests(), [])
})

test('venue connect: a key, secret or passphrase no header may carry is a usage error naming where it came from', async () => {
  const flags = ['--exchange', 'binance', '--venue-url', venue.url, '--ca-file', venue.caFile]
  const cases: [string, string, RegExp][] = [
    [`${good.apiKey.slice(0, 4)}\u0001${good.apiKey.slice(4)}`, `${good.secret}\n`, /^error: --api-key must match /],
    [`${good.apiKey}é`, `${good.secret}\n`, /^error: --api-key must match /],
    [good.apiKey, `${good.secret}\u0007x\n`, /^error: the API secret \(stdin, first line\) must match /],
    [good.apiKey, `${good.secret}ключ\n`, /^error: the API secret \(stdin, first line\) must match /],
    [good.apiKey, `${good.secret}\npass\u0000phrase\n`, /^error: the passphrase \(stdin, second line\) /],
    [good.apiKey, `${good.secret}\n pass\n`, /^error: the passphrase \(stdin, second line\) must match /],
  ]
  await venue.clearRequests()
  const results = await batched(cases, 3, ([key, input]) =>
    cli(['venue', 'connect', '--tenant', 'acme', '--api-key', key, ...flags], { dataDir: server.dataDir, input }),
  )
  results.forEach((res, i) => {
    assertUsageError(res, cases[i][2], JSON.stringify(cases[i].slice(0, 2)))
  })
  assert.equal(await venue.requests(), [])
  assert.is((await api('GET', '/api/v1/venue', { token: acme.jwt })).json.status, 'DISCONNECTED')
})

test('serve --market-data with an exchange ccxt does not know exits 2 before it listens', async () => {
  for (const name of ['constructor', 'notanexchange']) {
    const dataDir = tempDir()
    const res = await Promise.race([
      cli(['serve', '--port', '0', '--market-data', name, '--venue-url', venue.url, '--ca-file', venue.caFile], { dataDir }),
      new Promise<CliResult>((resolve) => setTimeout(() => resolve({ code: -1, stdout: 'still running after 30 s', stderr: '' }), 30_000)),
    ])
    assertUsageError(res, new RegExp(`^error: --market-data "${name}" is not an exchange ccxt [\\d.]+ knows$`), name)
    assert.not.match(res.stdout, /serving/, name)
  }
})

test.run()
