// The incident trail: an export recomputed by an independent few-line implementation of SPEC 6,
// UPDATE and DELETE refused by the table, and rows edited or removed behind the server's back named
// by /verify and by `bulwark incidents verify`.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { incidentHash } from '../support/incident-oracle.ts'
import { cli, login, startServer, tenantFixture, type Res, type Server, type TenantFixture } from '../support/harness.ts'
import { checkedClient, withDb } from '../trading/market.ts'

const test = suite('risk: incident trail')
let server: Server
let api: Awaited<ReturnType<typeof checkedClient>>
let acme: TenantFixture
let zeta: TenantFixture
let beta: TenantFixture

// SPEC 6, written again from the text alone (test/support/incident-oracle.ts).
function recompute(chain: any[]): { ok: boolean; head: string; broken?: string } {
  let prev = '0'.repeat(64)
  for (const i of chain) {
    const hash = incidentHash(prev, i)
    if (i.prev_hash !== prev || i.hash !== hash) return { ok: false, head: prev, broken: i.id }
    prev = hash
  }
  return { ok: true, head: prev }
}

function kill(token: string, body: Record<string, unknown>): Promise<Res> {
  return api('POST', '/api/v1/risk/kill-switch', { token, body })
}

test.before(async () => {
  server = await startServer()
  api = await checkedClient(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  zeta = await tenantFixture(server, 'zeta', 'EXECUTE')
  beta = await tenantFixture(server, 'beta', 'SIGNAL')
  for (const t of [acme, zeta, beta]) {
    await kill(t.jwt, { action: 'CANCEL_AND_PAUSE', pause: true, reason: 'café "quoted" \\ back\u2028slash ✓' })
    await api('PATCH', '/api/v1/risk/profile', { token: t.jwt, body: { max_open_trades: 7 } })
    await kill(t.jwt, { action: 'PAUSE', pause: true, model_id: 'trend-follower' })
    await kill(t.jwt, { action: 'RESUME', pause: false })
  }
  const cliKill = await cli(['kill-switch', '--all', '--actor', 'oncall@example.com'], { dataDir: server.dataDir })
  assert.is(cliKill.code, 0, cliKill.stderr)
  for (let i = 0; i < 4; i++) await kill(acme.jwt, { action: 'CANCEL_ORDERS', pause: false, reason: `sweep ${i}` })
})
test.after(async () => {
  await server.stop()
})

test('the export recomputes, by an independent implementation, to the head that /verify reports', async () => {
  for (const t of [acme, zeta, beta]) {
    const key = await t.key(['risk:read'])
    const exported = (await api('GET', '/api/v1/risk/incidents/export', { token: key })).json
    assert.ok(exported.length >= 5)
    const ids = exported.map((i: any) => i.id)
    assert.equal(ids, [...ids].sort(), 'oldest first')
    const mine = await api('GET', '/api/v1/workspace', { token: key })
    assert.ok(exported.every((i: any) => i.tenant_id === mine.json.tenant_id))
    const result = recompute(exported)
    assert.ok(result.ok, `broken at ${result.broken}`)
    const verify = (await api('GET', '/api/v1/risk/incidents/verify', { token: key })).json
    assert.equal(verify, { valid: true, count: exported.length, head_hash: result.head })
    assert.is(exported[0].prev_hash, '0'.repeat(64))
  }
})

test('the trail lists newest first in cursor pages, with the fields SPEC 6 adds', async () => {
  const all = (await api('GET', '/api/v1/risk/incidents/export', { token: acme.jwt })).json.reverse()
  const seen: any[] = []
  let path: string | null = '/api/v1/risk/incidents?limit=3'
  while (path) {
    const res = await api('GET', path, { token: acme.jwt })
    seen.push(...res.json)
    const link = res.headers.get('link')
    path = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : null
  }
  assert.equal(
    seen.map((i) => i.id),
    all.map((i: any) => i.id),
  )
  const first = all[all.length - 1]
  assert.is(first.action, 'EMERGENCY_KILL_SWITCH_ENGAGED')
  assert.is(first.status, 'ENGAGED')
  assert.is(first.actor, acme.ownerEmail)
  assert.match(first.timestamp, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/)
  assert.ok(all.some((i: any) => i.actor === 'oncall@example.com'))
})

test('who may read: risk:read or risk:admin keys and any session role; each tenant only its own', async () => {
  const other = (await api('GET', '/api/v1/risk/incidents', { token: zeta.jwt })).json.map((i: any) => i.id)
  const mine = (await api('GET', '/api/v1/risk/incidents', { token: acme.jwt })).json.map((i: any) => i.id)
  assert.ok(!other.some((id: string) => mine.includes(id)))
  for (const path of ['/api/v1/risk/incidents', '/api/v1/risk/incidents/verify', '/api/v1/risk/incidents/export']) {
    assert.is((await api('GET', path, { token: await acme.key(['risk:admin']) })).status, 200)
    const denied = await api('GET', path, { token: await acme.key(['trades:read']) })
    assert.is(denied.status, 403)
    assert.is(denied.json.code, 'insufficient_scope')
    assert.is((await api('GET', path)).status, 401)
  }
  await cli(['user', 'create', 'viewer@acme.test', '--tenant', 'acme', '--role', 'viewer', '--password-stdin'], {
    dataDir: server.dataDir,
    input: 'viewer-password-123',
  })
  const viewer = await login(server, 'viewer@acme.test', 'viewer-password-123')
  assert.is((await api('GET', '/api/v1/risk/incidents/export', { token: viewer })).status, 200)
})

test('the table itself refuses UPDATE and DELETE', async () => {
  await withDb(
    server,
    async (db) => {
      const refused = async (sql: string) => {
        const error = await db.run(sql).then(
          () => undefined,
          (e: Error) => e,
        )
        assert.ok(error, `${sql}: accepted`)
        assert.match(error.message, /immutable/)
      }
      await refused("UPDATE incidents SET reason = 'nothing happened'")
      await refused('DELETE FROM incidents')
    },
    false,
  )
})

test('CLI incidents verify: exit 0 while intact', async () => {
  const res = await cli(['incidents', 'verify'], { dataDir: server.dataDir })
  assert.is(res.code, 0, res.stdout + res.stderr)
  assert.equal(
    res.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(':')[0]),
    ['acme', 'zeta', 'beta'],
  )
})

test("a row edited behind the server's back is named by /verify and by the CLI; other tenants stay intact", async () => {
  const chain = (await api('GET', '/api/v1/risk/incidents/export', { token: acme.jwt })).json
  const victim = chain[2]
  await withDb(
    server,
    async (db) => {
      await db.exec(`DROP TRIGGER incidents_no_update${db.engine === 'postgres' ? ' ON incidents' : ''}`)
      await db.run("UPDATE incidents SET actor = 'someone-else@example.com' WHERE id = ?", [victim.id])
    },
    false,
  )
  const verify = (await api('GET', '/api/v1/risk/incidents/verify', { token: acme.jwt })).json
  assert.equal(verify, { valid: false, count: 2, broken_at: victim.id })
  assert.is(recompute((await api('GET', '/api/v1/risk/incidents/export', { token: acme.jwt })).json).broken, victim.id, 'the independent check agrees')

  const one = await cli(['incidents', 'verify', '--tenant', 'acme'], { dataDir: server.dataDir })
  assert.is(one.code, 1)
  assert.match(one.stdout, new RegExp(`^acme: BROKEN at ${victim.id} `))
  const every = await cli(['incidents', 'verify'], { dataDir: server.dataDir })
  assert.is(every.code, 1)
  assert.match(every.stdout, new RegExp(`acme: BROKEN at ${victim.id}`))
  assert.match(every.stdout, /^zeta: intact/m)
  assert.is((await cli(['incidents', 'verify', '--tenant', 'zeta'], { dataDir: server.dataDir })).code, 0)
  assert.is((await api('GET', '/api/v1/risk/incidents/verify', { token: zeta.jwt })).json.valid, true)
})

test("a row deleted behind the server's back breaks the chain at the row after it", async () => {
  const chain = (await api('GET', '/api/v1/risk/incidents/export', { token: beta.jwt })).json
  await withDb(
    server,
    async (db) => {
      await db.exec(`DROP TRIGGER incidents_no_delete${db.engine === 'postgres' ? ' ON incidents' : ''}`)
      await db.run('DELETE FROM incidents WHERE id = ?', [chain[1].id])
    },
    false,
  )
  assert.equal((await api('GET', '/api/v1/risk/incidents/verify', { token: beta.jwt })).json, { valid: false, count: 1, broken_at: chain[2].id })
  const res = await cli(['incidents', 'verify', '--tenant', 'beta'], { dataDir: server.dataDir })
  assert.is(res.code, 1)
  assert.match(res.stdout, new RegExp(`BROKEN at ${chain[2].id}`))
})

test('CLI incidents verify: bad usage is exit 2, an unknown tenant exit 1', async () => {
  assert.is((await cli(['incidents', 'verify', '--tenant'], { dataDir: server.dataDir })).code, 2)
  assert.is((await cli(['incidents', 'verify', 'extra'], { dataDir: server.dataDir })).code, 2)
  assert.is((await cli(['incidents', 'verify', '--tenant', 'nobody'], { dataDir: server.dataDir })).code, 1)
})

test.run()
