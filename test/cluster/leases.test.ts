// engines: own
// Two Bulwark nodes on one PostgreSQL database (SPEC 15): each background service runs on exactly
// one of them, under its lease, and /health says which; SIGKILL the node that holds the dead man's
// switch watch and the other takes the lease over within 10 s: an armed switch still fires, once,
// within 11 s of its deadline. Both nodes answer any request, and their incidents form one chain.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { client, type Server, startServer, tempDir, tenantFixture, type TenantFixture } from '../support/harness.ts'
import { GENESIS, incidentHash } from '../support/incident-oracle.ts'
import { sharedPostgres } from '../support/postgres.ts'

const test = suite('cluster: background services under leases')
let first: Server
let second: Server
let acme: TenantFixture
const PATH = '/api/v1/risk/dead-man-switch'

test.before(async () => {
  const pg = await sharedPostgres()
  // Every server and command this file starts (through the harness) uses the one database and secrets.
  process.env.BULWARK_DATABASE_URL = await pg.createDatabase()
  process.env.BULWARK_SECRETS_DIR = tempDir('bulwark-secrets')
  first = await startServer()
  await until('the first node holds every lease', async () => {
    const leases = (await client(first)('GET', '/api/v1/health')).json?.leases ?? {}
    return Object.keys(leases).length > 0 && Object.values(leases).every((s) => s === 'held') ? leases : undefined
  })
  second = await startServer()
  acme = await tenantFixture(first, 'acme', 'EXECUTE')
})
test.after(async () => {
  await first?.stop()
  await second?.stop()
})

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const found = await check()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

test('one node holds each lease, the other stands by; both answer every request', async () => {
  const [a, b] = await Promise.all([client(first)('GET', '/api/v1/health'), client(second)('GET', '/api/v1/health')])
  assert.is(a.status, 200, a.text)
  assert.is(b.status, 200, b.text)
  const names = Object.keys(a.json.leases).sort()
  assert.ok(names.includes('dead-man-switch') && names.includes('live-executor') && names.includes('webhook sender'), names.join())
  assert.equal(Object.keys(b.json.leases).sort(), names)
  for (const name of names) {
    assert.is(a.json.leases[name], 'held', name)
    assert.is(b.json.leases[name], 'standby', name)
  }
  // A change through the second node is read through the first at once: one database.
  const admin = await acme.key(['risk:admin'])
  const patched = await client(second)('PATCH', '/api/v1/risk/profile', { token: admin, body: { max_open_trades: 7 } })
  assert.is(patched.status, 200, patched.text)
  assert.is((await client(first)('GET', '/api/v1/risk/profile', { token: admin })).json.max_open_trades, 7)
})

test('20 writers on each node: one chain, no fork, every answered write in it', async () => {
  const admin = await acme.key(['risk:admin'])
  const before = (await client(first)('GET', '/api/v1/risk/incidents/export', { token: admin })).json.length as number
  const writes = Array.from({ length: 40 }, (_, i) =>
    // CANCEL_ORDERS changes no row the others change: only the chain's head orders them.
    client(i % 2 === 0 ? first : second)('POST', '/api/v1/risk/kill-switch', {
      token: admin,
      body: { action: 'CANCEL_ORDERS', pause: false, reason: `writer ${i}` },
    }),
  )
  const answers = await Promise.all(writes)
  for (const answer of answers) assert.is(answer.status, 200, answer.text)
  const exported = (await client(second)('GET', '/api/v1/risk/incidents/export', { token: admin })).json as Record<string, string>[]
  assert.is(exported.length, before + 40)
  // No fork: every record links to the one before it, and no two share a predecessor.
  assert.is(new Set(exported.map((i) => i.prev_hash)).size, exported.length)
  let prev = GENESIS
  for (const incident of exported) {
    assert.is(incident.prev_hash, prev)
    assert.is(incident.hash, incidentHash(prev, incident))
    prev = incident.hash
  }
})

test('SIGKILL the holder: the other node takes its leases within 10 s, and an armed switch fires once', async () => {
  const admin = await acme.key(['risk:admin'])
  const armed = await client(first)('PUT', PATH, { token: admin, body: { timeout_seconds: 10, action: 'CANCEL_AND_PAUSE' } })
  assert.is(armed.status, 200, armed.text)
  await first.stop('SIGKILL')
  const killedAt = Date.now()
  const took = await until(
    'the second node holds the dead man switch lease',
    async () => ((await client(second)('GET', '/api/v1/health')).json?.leases?.['dead-man-switch'] === 'held' ? Date.now() : undefined),
    20_000,
  )
  assert.ok(took - killedAt <= 10_000, `taken over ${took - killedAt} ms after the kill`)
  const fired = await until('the switch fires', async () => {
    const res = await client(second)('GET', PATH, { token: admin })
    return res.json.status === 'FIRED' ? res.json : undefined
  })
  const late = Date.parse(fired.fired_at) - Date.parse(fired.deadline)
  assert.ok(late >= 0 && late <= 11_000, `fired ${late} ms after its deadline`)
  // Once: one DEAD_MAN_SWITCH_FIRED incident, in one chain over both nodes' writes, as the oracle recomputes it.
  const exported = (await client(second)('GET', '/api/v1/risk/incidents/export', { token: admin })).json as Record<string, string>[]
  assert.is(exported.filter((i) => i.action === 'DEAD_MAN_SWITCH_FIRED').length, 1)
  assert.ok(
    exported.some((i) => i.action === 'RISK_PROFILE_UPDATED'),
    'the write through the second node is in the chain',
  )
  let prev = GENESIS
  for (const incident of exported) {
    assert.is(incident.prev_hash, prev)
    assert.is(incident.hash, incidentHash(prev, incident))
    prev = incident.hash
  }
  const verified = await client(second)('GET', '/api/v1/risk/incidents/verify', { token: admin })
  assert.equal([verified.status, verified.json.valid, verified.json.count], [200, true, exported.length])
})

test.run()
