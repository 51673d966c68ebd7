// Anchoring (SPEC 6): risk.* webhook deliveries carry their incident's hash, which a receiver keeps
// outside the data dir; `incidents verify --head` catches a rewrite or truncation made behind dropped
// triggers (a perfect one: every later hash recomputed), and says truthfully that an append after
// the anchor passes; `serve` puts missing, altered or foreign triggers on incidents back and reports it.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { copyDataDir, openTestDatabase, type TestDatabase } from '../support/database.ts'
import { cli, startServer, tenantFixture, type Server, type TenantFixture } from '../support/harness.ts'
import { checkedClient, importCloses } from '../trading/market.ts'
import { GENESIS, incidentHash } from '../support/incident-oracle.ts'
import { makeTestCa, startReceiver, waitUntil, type Receiver, type TestCa } from '../webhooks/receiver.ts'

const test = suite('risk: anchoring the incident chain')
let ca: TestCa
let receiver: Receiver
let server: Server
let dataDir: string
let acme: TenantFixture
let zeta: TenantFixture
const anchors: { breach?: any; engaged?: any; resumed?: any } = {}
let originalTriggers: { name: string; sql: string }[]

const serverArgs = () => ['--webhook-allow-cidr', '127.0.0.1/32', '--webhook-ca-file', ca.caFile]

const openDb = (dir: string, readonly = false) => openTestDatabase(dir, { readonly })

function chainIn(db: TestDatabase, slug: string): Promise<any[]> {
  return db.all('SELECT i.* FROM incidents i JOIN tenants t ON t.id = i.tenant_id WHERE t.slug = ? ORDER BY seq', [slug])
}

/** The triggers on incidents, name and definition, as the engine keeps them. */
function triggersOf(db: TestDatabase): Promise<{ name: string; sql: string }[]> {
  return db.all(
    db.engine === 'sqlite'
      ? "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'incidents' ORDER BY name"
      : "SELECT tgname AS name, pg_get_triggerdef(oid) AS sql FROM pg_trigger WHERE tgrelid = 'incidents'::regclass AND NOT tgisinternal ORDER BY tgname",
  )
}

/** DROP TRIGGER in the engine's words (PostgreSQL names the table). */
const dropTrigger = (db: TestDatabase, name: string) => db.exec(db.engine === 'sqlite' ? `DROP TRIGGER ${name}` : `DROP TRIGGER ${name} ON incidents`)

/** Rejects with a message matching `pattern`. */
async function rejects(work: Promise<unknown>, pattern: RegExp): Promise<void> {
  const error = await work.then(
    () => undefined,
    (e: Error) => e,
  )
  assert.ok(error, `expected a failure matching ${pattern}`)
  assert.match(error!.message, pattern)
}

/**
 * A copy of the stopped server's data dir, so that each tampering starts from the same database:
 * the files, and on PostgreSQL its database too (the copy's, made from the original as a template).
 */
async function copyOfData(): Promise<string> {
  return copyDataDir(dataDir, 'bulwark-tampered')
}

const verify = (dir: string, ...args: string[]) => cli(['incidents', 'verify', ...args], { dataDir: dir })

async function riskDelivery(type: string, incidentId: string): Promise<any> {
  const find = () => receiver.at('/risk').find((r) => r.body?.type === type && r.body.data.incident?.id === incidentId)
  await waitUntil(`the ${type} delivery of ${incidentId}`, () => find() !== undefined)
  return find()!.body
}

test.before(async () => {
  ca = makeTestCa('anchor')
  receiver = await startReceiver(ca)
  server = await startServer({ args: serverArgs() })
  dataDir = server.dataDir
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  zeta = await tenantFixture(server, 'zeta', 'EXECUTE')
  const db = await openDb(dataDir, true)
  try {
    originalTriggers = await triggersOf(db)
    // PostgreSQL also refuses TRUNCATE (incidents_no_truncate), which row triggers do not see.
    assert.is(originalTriggers.length, db.engine === 'sqlite' ? 2 : 3)
  } finally {
    await db.close()
  }
})
test.after(async () => {
  await server.stop()
  await receiver.close()
})

test('every risk.* delivery carries its incident {id, hash, prev_hash}; the hash recomputes from the export', async () => {
  const api = await checkedClient(server)
  const hooks = await acme.key(['webhooks:write'])
  const created = await api('POST', '/api/v1/webhooks', {
    token: hooks,
    body: { url: `${receiver.url}/risk`, events: ['risk.kill_switch.engaged', 'risk.trading.resumed', 'risk.limit.breached'] },
  })
  assert.is(created.status, 200, created.text)
  assert.is((await api('GET', '/api/v1/health')).json.incident_triggers, 'ok')

  await importCloses(server, [['BTC/USDT', '2025-05-01', 100]])
  await api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_exposure_usd: 50 } })
  const refused = await api('POST', '/api/v1/orders', { token: acme.jwt, body: { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 1 } })
  assert.is(refused.status, 422, refused.text)
  const breachId = /incident (inc_\w+) recorded/.exec(refused.json.detail)![1]
  const engaged = await api('POST', '/api/v1/risk/kill-switch', {
    token: acme.jwt,
    body: { action: 'CANCEL_AND_PAUSE', pause: true, reason: 'feed "stale" — café ✓' },
  })
  assert.is(engaged.status, 200, engaged.text)
  const resumed = await api('POST', '/api/v1/risk/kill-switch', { token: acme.jwt, body: { action: 'RESUME', pause: false } })
  assert.is(resumed.status, 200, resumed.text)

  anchors.breach = (await riskDelivery('risk.limit.breached', breachId)).data
  anchors.engaged = (await riskDelivery('risk.kill_switch.engaged', engaged.json.incident_id)).data
  anchors.resumed = (await riskDelivery('risk.trading.resumed', resumed.json.incident_id)).data
  const exported: any[] = (await api('GET', '/api/v1/risk/incidents/export', { token: acme.jwt })).json
  assert.equal(
    exported.map((i) => i.action),
    ['RISK_PROFILE_UPDATED', 'RISK_LIMIT_BREACHED', 'EMERGENCY_KILL_SWITCH_ENGAGED', 'TRADING_RESUMED'],
  )
  for (const [data, position] of [
    [anchors.breach, 1],
    [anchors.engaged, 2],
    [anchors.resumed, 3],
  ] as const) {
    assert.equal(Object.keys(data.incident), ['id', 'hash', 'prev_hash'])
    assert.is(data.incident_id, data.incident.id, 'incident_id stays, for receivers written before')
    const record = exported[position]
    assert.is(record.id, data.incident.id)
    assert.is(data.incident.prev_hash, exported[position - 1].hash)
    assert.is(data.incident.hash, incidentHash(data.incident.prev_hash, record), 'recomputed by the test from the exported record')
  }
  assert.is(incidentHash(GENESIS, exported[0]), exported[0].hash)

  for (const anchor of [anchors.breach, anchors.engaged, anchors.resumed]) {
    const res = await verify(dataDir, '--tenant', 'acme', '--head', anchor.incident.hash)
    assert.is(res.code, 0, res.stdout + res.stderr)
    assert.match(
      res.stdout,
      new RegExp(`^acme: intact, 4 incidents, head ${anchors.resumed.incident.hash}, contains head ${anchor.incident.hash} \\(${anchor.incident.id}\\)$`, 'm'),
    )
  }
  const anyTenant = await verify(dataDir, '--head', anchors.engaged.incident.hash.toUpperCase())
  assert.is(anyTenant.code, 0, 'without --tenant the head may be in any chain; hex case does not matter')
  assert.match(anyTenant.stdout, /^zeta: intact, 0 incidents/m)

  const key = await acme.key(['risk:read'])
  const viaApi = await api('GET', `/api/v1/risk/incidents/verify?head=${anchors.engaged.incident.hash}`, { token: key })
  assert.equal(viaApi.json, {
    valid: true,
    count: 4,
    head_hash: anchors.resumed.incident.hash,
    anchor: { hash: anchors.engaged.incident.hash, found: true, incident_id: anchors.engaged.incident.id },
  })
  const elsewhere = await api('GET', `/api/v1/risk/incidents/verify?head=${anchors.engaged.incident.hash}`, { token: zeta.jwt })
  assert.equal(elsewhere.json, { valid: false, count: 0, head_hash: GENESIS, anchor: { hash: anchors.engaged.incident.hash, found: false, incident_id: null } })
  const bad = await api('GET', '/api/v1/risk/incidents/verify?head=nope', { token: key })
  assert.is(bad.status, 400)
  assert.match(bad.json.detail, /head/)
  const usage = await verify(dataDir, '--head', 'abc')
  assert.is(usage.code, 2)
  assert.match(usage.stderr, /--head must be an incident hash/)
})

test('with the server stopped and the triggers dropped: a perfect rewrite is intact to a plain verify, and --head catches it', async () => {
  assert.is(await server.stop(), 0)
  const dir = await copyOfData()
  const db = await openDb(dir)
  await dropTrigger(db, 'incidents_no_update')
  await dropTrigger(db, 'incidents_no_delete')
  const chain = await chainIn(db, 'acme')
  const victim = chain.findIndex((i) => i.id === anchors.engaged.incident.id)
  chain[victim].reason = 'CANCEL_AND_PAUSE, 0 pending orders canceled: routine drill'
  for (let i = victim; i < chain.length; i++) {
    chain[i].prev_hash = chain[i - 1].hash
    chain[i].hash = incidentHash(chain[i].prev_hash, chain[i])
    const { changes } = await db.run('UPDATE incidents SET reason = ?, prev_hash = ?, hash = ? WHERE id = ?', [
      chain[i].reason,
      chain[i].prev_hash,
      chain[i].hash,
      chain[i].id,
    ])
    assert.is(changes, 1)
  }
  await db.close()

  const plain = await verify(dir, '--tenant', 'acme')
  assert.is(plain.code, 0, 'a perfect rewrite recomputes cleanly: the chain alone cannot tell')
  assert.match(plain.stdout, /^acme: intact, 4 incidents/)
  for (const anchor of [anchors.engaged, anchors.resumed]) {
    const res = await verify(dir, '--tenant', 'acme', '--head', anchor.incident.hash)
    assert.is(res.code, 1, res.stdout)
    assert.match(res.stderr, new RegExp(`head ${anchor.incident.hash} not found in the chain of acme: truncated or rewritten`))
  }
  const untouched = await verify(dir, '--tenant', 'acme', '--head', anchors.breach.incident.hash)
  assert.is(untouched.code, 0, 'the records before the rewrite are still the anchored ones')
  assert.is((await verify(dir, '--head', anchors.resumed.incident.hash)).code, 1, "in no tenant's chain either")
})

test('a truncated chain (rows deleted behind dropped triggers) fails --head', async () => {
  const dir = await copyOfData()
  const db = await openDb(dir)
  await dropTrigger(db, 'incidents_no_delete')
  assert.is((await db.run('DELETE FROM incidents WHERE id = ?', [anchors.resumed.incident.id])).changes, 1)
  await db.close()
  const plain = await verify(dir, '--tenant', 'acme')
  assert.is(plain.code, 0)
  assert.match(plain.stdout, new RegExp(`^acme: intact, 3 incidents, head ${anchors.engaged.incident.hash}$`, 'm'))
  const res = await verify(dir, '--tenant', 'acme', '--head', anchors.resumed.incident.hash)
  assert.is(res.code, 1)
  assert.match(res.stderr, /not found in the chain of acme: truncated or rewritten/)
})

test('a forged row appended with a correct hash passes the old anchor; the next delivery shows the gap', async () => {
  const dir = await copyOfData()
  const db = await openDb(dir) // INSERT was never refused: an append needs no trigger dropped
  const last = (await chainIn(db, 'acme')).at(-1)
  const { seq: _seq, ...rest } = last
  const forged: any = {
    ...rest,
    id: 'inc_01ZZZZZZZZZZZZZZZZZZZZZZZZ',
    action: 'RISK_PROFILE_UPDATED',
    status: 'RECORDED',
    reason: 'max_exposure_usd 50 -> 1000000',
    prev_hash: last.hash,
  }
  forged.hash = incidentHash(forged.prev_hash, forged)
  const columns = ['id', 'tenant_id', 'action', 'actor', 'status', 'timestamp', 'model_id', 'reason', 'prev_hash', 'hash']
  await db.run(
    `INSERT INTO incidents (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    columns.map((c) => forged[c]),
  )
  await db.close()

  const res = await verify(dir, '--tenant', 'acme', '--head', anchors.resumed.incident.hash)
  assert.is(res.code, 0, 'an anchor vouches for what came before it, never for what came after')
  assert.match(res.stdout, new RegExp(`intact, 5 incidents, head ${forged.hash}, contains head`))

  // The next risk.* event chains onto the forged row: its prev_hash is not the head the receiver
  // holds, which tells it that records it never received lie in between, to be read in the export.
  const copy = await startServer({ dataDir: dir, args: serverArgs() })
  try {
    const api = await checkedClient(copy)
    const engaged = await api('POST', '/api/v1/risk/kill-switch', { token: acme.jwt, body: { action: 'PAUSE', pause: true } })
    assert.is(engaged.status, 200, engaged.text)
    const next = (await riskDelivery('risk.kill_switch.engaged', engaged.json.incident_id)).data
    assert.is(next.incident.prev_hash, forged.hash)
    assert.is.not(next.incident.prev_hash, anchors.resumed.incident.hash)
    const between = (await api('GET', '/api/v1/risk/incidents/export', { token: acme.jwt })).json.map((i: any) => i.id)
    assert.equal(between.slice(between.indexOf(anchors.resumed.incident.id) + 1, between.indexOf(next.incident.id)), [forged.id])
  } finally {
    assert.is(await copy.stop(), 0)
  }
})

test('serve puts missing, altered and foreign triggers back, logs it, says so in /health and records it on every chain', async () => {
  const db = await openDb(dataDir)
  // One missing, one altered to let deletes through, one foreign that makes kill switches vanish.
  if (db.engine === 'sqlite') {
    await db.exec(`DROP TRIGGER incidents_no_update;
      DROP TRIGGER incidents_no_delete;
      CREATE TRIGGER incidents_no_delete BEFORE DELETE ON incidents BEGIN SELECT 1; END;
      CREATE TRIGGER incidents_swallow BEFORE INSERT ON incidents WHEN NEW.action = 'EMERGENCY_KILL_SWITCH_ENGAGED' BEGIN SELECT RAISE(IGNORE); END;`)
  } else {
    await db.exec(`DROP TRIGGER incidents_no_update ON incidents;
      DROP TRIGGER incidents_no_delete ON incidents;
      CREATE FUNCTION let_through() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN OLD; END; $$;
      CREATE TRIGGER incidents_no_delete BEFORE DELETE ON incidents FOR EACH ROW EXECUTE FUNCTION let_through();
      CREATE FUNCTION swallow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END; $$;
      CREATE TRIGGER incidents_swallow BEFORE INSERT ON incidents FOR EACH ROW WHEN (NEW.action = 'EMERGENCY_KILL_SWITCH_ENGAGED') EXECUTE FUNCTION swallow();`)
  }
  await db.close()

  server = await startServer({ dataDir, args: serverArgs() })
  const api = await checkedClient(server)
  const line = server
    .output()
    .split('\n')
    .find((l) => l.includes('incident immutability triggers restored'))
  assert.ok(line, server.output())
  const logged = JSON.parse(line!)
  assert.is(logged.level, 'error')
  assert.equal([logged.missing, logged.altered, logged.unexpected], [['incidents_no_update'], ['incidents_no_delete'], ['incidents_swallow']])
  assert.is((await api('GET', '/api/v1/health')).json.incident_triggers, 'restored')

  const check = await openDb(dataDir)
  try {
    assert.equal(await triggersOf(check), originalTriggers)
    await rejects(check.run("UPDATE incidents SET reason = 'nothing happened'"), /immutable/)
    await rejects(check.run('DELETE FROM incidents'), /immutable/)
    for (const slug of ['acme', 'zeta']) {
      const chain = await chainIn(check, slug)
      const restored = chain.at(-1)
      assert.is(restored.action, 'INTEGRITY_TRIGGERS_RESTORED')
      assert.is(restored.status, 'RECORDED')
      assert.is(restored.actor, 'integrity-check@localhost')
      assert.match(
        restored.reason,
        /incidents_no_update missing, recreated, incidents_no_delete altered, recreated, unexpected trigger incidents_swallow dropped/,
      )
      let prev = GENESIS
      for (const i of chain) {
        assert.is(i.prev_hash, prev)
        assert.is(i.hash, incidentHash(prev, i))
        prev = i.hash
      }
    }
    assert.is((await chainIn(check, 'zeta')).length, 1, 'a tenant without incidents gets the record as its first')
  } finally {
    await check.close()
  }
  const res = await verify(dataDir, '--head', anchors.resumed.incident.hash)
  assert.is(res.code, 0, res.stdout + res.stderr)
  assert.match(res.stdout, /^acme: intact, 5 incidents, .*contains head/m)
  assert.is((await api('GET', '/api/v1/risk/incidents/verify', { token: acme.jwt })).json.valid, true)

  // Nothing left to repair at the next start: no log line, no incident, health ok.
  assert.is(await server.stop(), 0)
  server = await startServer({ dataDir, args: serverArgs() })
  assert.ok(!server.output().includes('triggers restored'))
  assert.is((await (await checkedClient(server))('GET', '/api/v1/health')).json.incident_triggers, 'ok')
  assert.is((await verify(dataDir, '--tenant', 'zeta')).stdout.trim().split(', ')[1], '1 incident')
})

test.run()
