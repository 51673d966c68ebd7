// The risk profile's numbers have sensible bounds: money at least a cent, percentages at least a
// hundredth, nothing subnormal (5e-324) anywhere, at most what the other 1e12 bounds allow. Every
// numeric field of PATCH /api/v1/risk/profile is taken from the served OpenAPI document and sent
// the values that once slipped through; each is 400 naming it, and nothing is half applied: the
// profile and the incident trail stay as they were. `tenant create` keeps the same bounds.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cli, client, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'

const test = suite('risk: profile bounds')
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture
let fields: [string, { type: string; minimum?: number; maximum?: number }][]

/** Tiny, subnormal, negative and huge: each refused by every numeric field of the profile. */
const REFUSED = [5e-324, -5e-324, 1e-310, -0.5, 1e13, 1e300]
/** Positive but below a cent or a hundredth of a percent: refused by the money and percentage fields. */
const TOO_SMALL = [0, 1e-300, 1e-9, 0.001, 0.0099]

async function snapshot(): Promise<[unknown, number]> {
  const profile = (await api('GET', '/api/v1/risk/profile', { token: acme.jwt })).json
  const incidents = (await api('GET', '/api/v1/risk/incidents?limit=1000', { token: acme.jwt })).json.length
  return [profile, incidents]
}

test.before(async () => {
  server = await startServer()
  api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  const doc = (await api('GET', '/api/v1/openapi.json')).json
  const schema = doc.paths['/api/v1/risk/profile'].patch.requestBody.content['application/json'].schema
  fields = Object.entries<any>(schema.properties).filter(([, s]) => [s.type].flat().some((t: string) => t === 'number' || t === 'integer'))
})
test.after(async () => {
  await server.stop()
})

test('every numeric field has a minimum and a maximum; money and percentages start at 0.01 (SPEC 13 protections at 0.1)', () => {
  assert.ok(fields.length >= 13, fields.map(([name]) => name).join(', '))
  const protection = ['venue_stop_loss_pct', 'venue_take_profit_pct', 'stop_limit_offset_pct']
  for (const [name, schema] of fields) {
    assert.type(schema.minimum, 'number', `${name} has a minimum`)
    assert.type(schema.maximum, 'number', `${name} has a maximum`)
    if (/_usd$|_pct$/.test(name)) assert.is(schema.minimum, protection.includes(name) ? 0.1 : 0.01, name)
  }
})

test("SPEC 13's protection fields: their ranges, null turns a percentage off, the offset and the action take no null", async () => {
  const before = await snapshot()
  for (const [body, field] of [
    [{ venue_stop_loss_pct: 0.09 }, 'venue_stop_loss_pct'],
    [{ venue_stop_loss_pct: 50.01 }, 'venue_stop_loss_pct'],
    [{ venue_take_profit_pct: 1000.5 }, 'venue_take_profit_pct'],
    [{ stop_limit_offset_pct: 10.01 }, 'stop_limit_offset_pct'],
    [{ stop_limit_offset_pct: null }, 'stop_limit_offset_pct'],
    [{ unprotected_action: 'SELL' }, 'unprotected_action'],
    [{ unprotected_action: null }, 'unprotected_action'],
  ] as const) {
    const res = await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body })
    assert.is(res.status, 400, `${JSON.stringify(body)}: ${res.text}`)
    assert.match(res.json.detail, new RegExp(`^${field} must`), JSON.stringify(body))
  }
  assert.equal(await snapshot(), before, 'nothing changed')
  const set = await api('PATCH', '/api/v1/risk/profile', {
    token: acme.jwt,
    body: { venue_stop_loss_pct: 50, venue_take_profit_pct: 0.1, stop_limit_offset_pct: 10, unprotected_action: 'FLATTEN' },
  })
  assert.is(set.status, 200, set.text)
  const off = await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { venue_stop_loss_pct: null, venue_take_profit_pct: null } })
  assert.equal(
    [off.json.venue_stop_loss_pct, off.json.venue_take_profit_pct, off.json.stop_limit_offset_pct, off.json.unprotected_action],
    [null, null, 10, 'FLATTEN'],
  )
})

test('tiny, subnormal, negative and huge values are 400 naming the field, alone or beside a good change; nothing changes', async () => {
  const before = await snapshot()
  for (const [name, schema] of fields) {
    const values = [...REFUSED, ...(/_usd$|_pct$/.test(name) ? TOO_SMALL : []), ...(schema.type === 'integer' ? [1.5, 0] : [])]
    for (const value of values) {
      const good = name === 'fee_bps' ? { slippage_bps: 3 } : { fee_bps: 12 }
      for (const body of [{ [name]: value }, { ...good, [name]: value }]) {
        const res = await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body })
        const label = `${JSON.stringify(body)}`
        assert.is(res.status, 400, `${label}: ${res.text}`)
        assert.is(res.json.code, 'validation_failed', label)
        assert.ok(
          res.json.errors.some((e: { field: string }) => e.field === name),
          `${label}: ${res.text}`,
        )
        assert.match(res.json.detail, new RegExp(`^${name} must`), label)
      }
    }
  }
  assert.equal(await snapshot(), before, 'no field changed and no incident was recorded')
})

test('the smallest and largest values allowed are taken; the smallest capital keeps equity and drawdown sane', async () => {
  const res = await api('PATCH', '/api/v1/risk/profile', {
    token: acme.jwt,
    body: { capital_usd: 0.01, max_exposure_usd: 0.01, max_daily_loss_usd: 0.01, max_drawdown_pct: 0.01, price_band_pct: 0.01, fee_bps: 0 },
  })
  assert.is(res.status, 200, res.text)
  assert.is(res.json.capital_usd, 0.01)
  const equity = (await api('GET', '/api/v1/risk/equity', { token: acme.jwt })).json
  assert.is(equity.equity_usd, 0.01)
  assert.ok(equity.drawdown_pct >= 0 && Number.isFinite(equity.drawdown_pct), JSON.stringify(equity))
  const big = await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { capital_usd: 1e12, max_exposure_usd: 1e12 } })
  assert.is(big.status, 200, big.text)
})

test('tenant create keeps the same bounds: a usage error naming the flag (exit 2, one line)', async () => {
  for (const [flag, value, message] of [
    ['--max-exposure-usd', '5e-324', /^error: --max-exposure-usd must be >= 0\.01$/],
    ['--max-exposure-usd', '0.001', /^error: --max-exposure-usd must be >= 0\.01$/],
    ['--max-exposure-usd', '1e13', /^error: --max-exposure-usd must be <= 1000000000000$/],
    ['--max-open-trades', '20000', /^error: --max-open-trades must be <= 10000$/],
  ] as const) {
    const res = await cli(['tenant', 'create', 'tiny', '--plan', 'EXECUTE', flag, value], { dataDir: server.dataDir })
    assert.is(res.code, 2, `${flag} ${value}: ${res.stderr}`)
    const lines = res.stderr.trimEnd().split('\n')
    assert.is(lines.length, 2, res.stderr)
    assert.match(lines[0], message)
  }
  const made = await cli(['tenant', 'create', 'tiny', '--plan', 'EXECUTE', '--max-exposure-usd', '0.01'], { dataDir: server.dataDir })
  assert.is(made.code, 0, made.stderr)
})

test.run()
