// The dead man's switch through a real server: arm, heartbeat, re-arm, disarm and what each records;
// refusals and who may do what; a switch left without heartbeats firing the kill switch while the
// server runs (a heartbeated one beside it does not fire); and a server SIGKILLed before the
// deadline firing at once when it starts again after it.
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openTestDatabase } from '../support/database.ts'
import { request, startServer, tenantFixture, type Res, type Server, type TenantFixture } from '../support/harness.ts'
import { checkedClient, eventsOf, importCloses, settled } from '../trading/market.ts'

const test = suite("risk: dead man's switch")
const PATH = '/api/v1/risk/dead-man-switch'
const NEVER_ARMED = {
  status: 'DISARMED',
  timeout_seconds: null,
  action: null,
  model_id: null,
  armed_at: null,
  last_heartbeat_at: null,
  deadline: null,
  fired_at: null,
  incident_id: null,
}

let server: Server
let api: Awaited<ReturnType<typeof checkedClient>>
let acme: TenantFixture
let zeta: TenantFixture
let admin: string // acme: risk:admin
let bot: string // acme: orders:write (the trading bot)
let reader: string // acme: risk:read
let zetaAdmin: string
// The restart case: a second server, armed and SIGKILLed in before(), so its deadline passes while the other tests run.
let crashed: { dataDir: string; key: string; deadline: string }

/** timestamp + seconds, as an ISO instant: the oracle for every deadline. */
function plus(timestamp: string, seconds: number): string {
  return new Date(Date.parse(timestamp) + seconds * 1000).toISOString()
}

async function incidents(token: string, call = api): Promise<any[]> {
  const res = await call('GET', '/api/v1/risk/incidents', { token })
  assert.is(res.status, 200, res.text)
  return res.json
}

async function incident(token: string, id: string): Promise<any> {
  return (await incidents(token)).find((i) => i.id === id)
}

function expectProblem(res: Res, status: number, code: string, field?: string): void {
  assert.is(res.status, status, res.text)
  assert.is(res.json.code, code, res.text)
  if (field) assert.equal(res.json.errors?.[0]?.field, field, res.text)
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const started = Date.now()
  for (;;) {
    const found = await probe()
    if (found !== undefined) return found
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`)
    await sleep(100)
  }
}

test.before(async () => {
  const doomed = await startServer()
  const phoenix = await tenantFixture(doomed, 'phoenix')
  const key = await phoenix.key(['risk:admin'])
  const armed = await request(doomed.url, 'PUT', PATH, { token: key, body: { timeout_seconds: 10, action: 'CANCEL_AND_PAUSE' } })
  assert.is(armed.status, 200, armed.text)
  await doomed.stop('SIGKILL')
  crashed = { dataDir: doomed.dataDir, key, deadline: armed.json.deadline }

  server = await startServer()
  api = await checkedClient(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  zeta = await tenantFixture(server, 'zeta', 'EXECUTE')
  admin = await acme.key(['risk:admin'])
  bot = await acme.key(['orders:write'])
  reader = await acme.key(['risk:read'])
  zetaAdmin = await zeta.key(['risk:admin'])
  // A price, so that the bot's order is accepted and waits, PENDING, for the next one.
  await importCloses(server, [['BTC/USDT', '2025-04-01', 100]])
})
test.after(async () => {
  assert.is(await server.stop(), 0, 'SIGTERM stops the watch with the rest, cleanly')
})

test('never armed: GET answers DISARMED with nulls', async () => {
  const res = await api('GET', PATH, { token: reader })
  assert.is(res.status, 200, res.text)
  assert.equal(res.json, NEVER_ARMED)
})

test('arm, heartbeat, re-arm, disarm: deadlines from the timeout, an incident for each but the heartbeat', async () => {
  const armed = await api('PUT', PATH, { token: admin, body: { timeout_seconds: 3600, action: 'CANCEL_AND_PAUSE' } })
  assert.is(armed.status, 200, armed.text)
  assert.is(armed.json.status, 'ARMED')
  assert.is(armed.json.timeout_seconds, 3600)
  assert.is(armed.json.action, 'CANCEL_AND_PAUSE')
  assert.is(armed.json.model_id, 'all')
  assert.is(armed.json.last_heartbeat_at, null)
  assert.is(armed.json.fired_at, null)
  assert.is(armed.json.deadline, plus(armed.json.armed_at, 3600))
  assert.equal((await api('GET', PATH, { token: reader })).json, armed.json)
  const arming = await incident(reader, armed.json.incident_id)
  assert.is(arming.action, 'DEAD_MAN_SWITCH_ARMED')
  assert.is(arming.status, 'RECORDED')
  assert.is(arming.actor, acme.ownerEmail)
  assert.is(arming.model_id, 'all')
  assert.is(arming.reason, `CANCEL_AND_PAUSE after 3600 s without a heartbeat; deadline ${armed.json.deadline}`)

  const before = (await incidents(reader)).length
  const beat = await api('POST', `${PATH}/heartbeat`, { token: bot })
  assert.is(beat.status, 200, beat.text)
  assert.is(beat.json.status, 'ARMED')
  assert.ok(beat.json.last_heartbeat_at >= armed.json.armed_at)
  assert.is(beat.json.deadline, plus(beat.json.last_heartbeat_at, 3600))
  assert.is(beat.json.armed_at, armed.json.armed_at)
  assert.is(beat.json.incident_id, armed.json.incident_id)
  const again = await api('POST', `${PATH}/heartbeat`, { token: admin })
  assert.is(again.status, 200, again.text)
  assert.ok(again.json.deadline >= beat.json.deadline)
  assert.is((await incidents(reader)).length, before, 'heartbeats record no incident')

  const rearmed = await api('PUT', PATH, { token: acme.jwt, body: { timeout_seconds: 600, action: 'FLATTEN', model_id: 'trend-follower' } })
  assert.is(rearmed.status, 200, rearmed.text)
  assert.equal(
    { ...rearmed.json, armed_at: 'x', incident_id: 'x' },
    {
      ...NEVER_ARMED,
      status: 'ARMED',
      timeout_seconds: 600,
      action: 'FLATTEN',
      model_id: 'trend-follower',
      armed_at: 'x',
      incident_id: 'x',
      deadline: plus(rearmed.json.armed_at, 600),
    },
  )
  const rearming = await incident(reader, rearmed.json.incident_id)
  assert.is(rearming.model_id, 'trend-follower')
  assert.match(rearming.reason, /^re-armed, replacing CANCEL_AND_PAUSE after 3600 s without a heartbeat/)
  assert.ok(rearming.reason.endsWith(`FLATTEN after 600 s without a heartbeat; deadline ${rearmed.json.deadline}`), rearming.reason)

  const disarmed = await api('DELETE', PATH, { token: admin })
  assert.is(disarmed.status, 200, disarmed.text)
  assert.is(disarmed.json.status, 'DISARMED')
  assert.is(disarmed.json.deadline, null)
  assert.is(disarmed.json.timeout_seconds, 600, 'the last settings stay visible')
  const disarming = await incident(reader, disarmed.json.incident_id)
  assert.is(disarming.action, 'DEAD_MAN_SWITCH_DISARMED')
  assert.is(disarming.status, 'RECORDED')
  assert.match(disarming.reason, new RegExp(`deadline was ${rearmed.json.deadline.replace(/\./g, '\\.')}`))

  const count = (await incidents(reader)).length
  const twice = await api('DELETE', PATH, { token: admin })
  assert.equal(twice.json, disarmed.json, 'disarming a disarmed switch answers it unchanged')
  assert.is((await incidents(reader)).length, count, '... and records nothing')
  const late = await api('POST', `${PATH}/heartbeat`, { token: bot })
  expectProblem(late, 409, 'dead_man_switch_not_armed')
  assert.match(late.json.detail, /is DISARMED .*arm it with PUT \/api\/v1\/risk\/dead-man-switch/)
})

test('bad input is 400 naming the field, a heartbeat of a switch never armed is 409; nothing is recorded', async () => {
  const never = await api('POST', `${PATH}/heartbeat`, { token: await zeta.key(['orders:write']) })
  expectProblem(never, 409, 'dead_man_switch_not_armed')
  assert.match(never.json.detail, /was never armed: arm it with PUT \/api\/v1\/risk\/dead-man-switch/)
  const put = (body: unknown) => api('PUT', PATH, { token: zetaAdmin, body })
  expectProblem(await put({ timeout_seconds: 9, action: 'CANCEL_AND_PAUSE' }), 400, 'validation_failed', 'timeout_seconds')
  expectProblem(await put({ timeout_seconds: 86401, action: 'CANCEL_AND_PAUSE' }), 400, 'validation_failed', 'timeout_seconds')
  expectProblem(await put({ timeout_seconds: 10.5, action: 'CANCEL_AND_PAUSE' }), 400, 'validation_failed', 'timeout_seconds')
  expectProblem(await put({ timeout_seconds: '60', action: 'CANCEL_AND_PAUSE' }), 400, 'validation_failed', 'timeout_seconds')
  expectProblem(await put({ action: 'CANCEL_AND_PAUSE' }), 400, 'validation_failed', 'timeout_seconds')
  expectProblem(await put({ timeout_seconds: 60, action: 'PAUSE' }), 400, 'validation_failed', 'action')
  expectProblem(await put({ timeout_seconds: 60 }), 400, 'validation_failed', 'action')
  const unknownModel = await put({ timeout_seconds: 60, action: 'FLATTEN', model_id: 'no-such-model' })
  expectProblem(unknownModel, 400, 'validation_failed', 'model_id')
  assert.match(unknownModel.json.detail, /unknown model "no-such-model"; use a model id from GET \/api\/v1\/models, or all/)
  expectProblem(await put({ timeout_seconds: 60, action: 'FLATTEN', grace: 5 }), 400, 'unknown_field')
  const edges = [10, 86400]
  for (const timeout_seconds of edges) assert.is((await put({ timeout_seconds, action: 'CANCEL_AND_PAUSE' })).status, 200)
  assert.is((await api('DELETE', PATH, { token: zetaAdmin })).status, 200)
  assert.is((await incidents(zetaAdmin)).length, 3, 'two armings and a disarm, no refusal recorded')
})

test('who may: no credential 401, a revoked key 401, wrong scopes 403, a bot heartbeats but cannot arm, tenants apart', async () => {
  for (const [method, path] of [
    ['GET', PATH],
    ['PUT', PATH],
    ['POST', `${PATH}/heartbeat`],
    ['DELETE', PATH],
  ]) {
    expectProblem(await api(method, path, {}), 401, 'unauthenticated')
    expectProblem(await api(method, path, { token: await acme.key(['trades:read']) }), 403, 'insufficient_scope')
  }
  const arm = { timeout_seconds: 3600, action: 'CANCEL_AND_PAUSE' }
  expectProblem(await api('PUT', PATH, { token: bot, body: arm }), 403, 'insufficient_scope')
  expectProblem(await api('DELETE', PATH, { token: bot }), 403, 'insufficient_scope')
  expectProblem(await api('PUT', PATH, { token: reader, body: arm }), 403, 'insufficient_scope')
  expectProblem(await api('POST', `${PATH}/heartbeat`, { token: reader }), 403, 'insufficient_scope')

  const created = await api('POST', '/api/v1/auth/api-tokens', { token: acme.jwt, body: { name: 'doomed', scopes: ['risk:admin'] } })
  assert.is((await api('GET', PATH, { token: created.json.token })).status, 200)
  assert.is((await api('DELETE', `/api/v1/auth/api-tokens/${created.json.id}`, { token: acme.jwt })).status, 200)
  expectProblem(await api('PUT', PATH, { token: created.json.token, body: arm }), 401, 'unauthenticated')

  // zeta armed: acme sees its own switch only, and its heartbeat and disarm touch only its own.
  const theirs = await api('PUT', PATH, { token: zetaAdmin, body: arm })
  assert.is(theirs.status, 200, theirs.text)
  assert.is((await api('GET', PATH, { token: reader })).json.status, 'DISARMED')
  expectProblem(await api('POST', `${PATH}/heartbeat`, { token: bot }), 409, 'dead_man_switch_not_armed')
  assert.is((await api('DELETE', PATH, { token: admin })).json.status, 'DISARMED')
  assert.equal((await api('GET', PATH, { token: zetaAdmin })).json, theirs.json)
  assert.is((await api('DELETE', PATH, { token: zetaAdmin })).json.status, 'DISARMED')
})

test('no heartbeat by the deadline: the kill switch fires (a heartbeated switch beside it does not)', async () => {
  const order = await api('POST', '/api/v1/orders', { token: bot, body: { pair: 'BTC/USDT', side: 'BUY', type: 'MARKET', quantity: 1 } })
  assert.is(order.status, 200, order.text)
  const armed = await api('PUT', PATH, { token: admin, body: { timeout_seconds: 10, action: 'CANCEL_AND_PAUSE' } })
  assert.is(armed.status, 200, armed.text)
  const alive = await api('PUT', PATH, { token: zetaAdmin, body: { timeout_seconds: 10, action: 'CANCEL_AND_PAUSE' } })
  assert.is(alive.status, 200, alive.text)
  let beats = 0
  const fired = await until('the switch fires', async () => {
    // zeta's bot keeps its switch alive, once a second, a tenth of its timeout.
    if (Date.now() - Date.parse((await api('GET', PATH, { token: zetaAdmin })).json.last_heartbeat_at ?? alive.json.armed_at) >= 1000) {
      assert.is((await api('POST', `${PATH}/heartbeat`, { token: zetaAdmin })).status, 200)
      beats++
    }
    const res = await api('GET', PATH, { token: reader })
    return res.json.status === 'FIRED' ? res.json : undefined
  })
  assert.is(fired.deadline, armed.json.deadline)
  assert.ok(fired.fired_at >= fired.deadline, `fired at ${fired.fired_at}, not before the deadline ${fired.deadline}`)
  assert.match(fired.incident_id, /^inc_/)
  const zetaNow = (await api('GET', PATH, { token: zetaAdmin })).json
  assert.is(zetaNow.status, 'ARMED', `heartbeated ${beats} times, still armed`)
  assert.ok(zetaNow.deadline > fired.fired_at)

  const inc = await incident(reader, fired.incident_id)
  assert.is(inc.action, 'DEAD_MAN_SWITCH_FIRED')
  assert.is(inc.status, 'ENGAGED')
  assert.is(inc.actor, 'dead-man-switch@localhost')
  assert.is(inc.model_id, 'all')
  assert.is(
    inc.reason,
    `no heartbeat by the deadline ${fired.deadline} (timeout 10 s, no heartbeat since arming, armed at ${armed.json.armed_at} by ${acme.ownerEmail}); CANCEL_AND_PAUSE, 1 pending order canceled`,
  )
  assert.is((await api('GET', '/api/v1/risk/profile', { token: reader })).json.trading_paused, true)
  await settled(server)
  const trader = await acme.key(['trades:read'])
  assert.is((await api('GET', `/api/v1/orders/${order.json.id}`, { token: trader })).json.status, 'CANCELED')
  const event = (await eventsOf(server, 'risk.dead_man_switch.fired')).find((e) => e.incident_id === fired.incident_id)
  assert.ok(event, 'risk.dead_man_switch.fired recorded')
  assert.equal(event.incident, { id: inc.id, hash: inc.hash, prev_hash: inc.prev_hash })
  assert.equal([event.deadline, event.timeout_seconds, event.action, event.model_id], [fired.deadline, 10, 'CANCEL_AND_PAUSE', 'all'])
  assert.ok((await eventsOf(server, 'risk.kill_switch.engaged')).some((e) => e.incident_id === fired.incident_id))

  const after = await api('POST', `${PATH}/heartbeat`, { token: bot })
  expectProblem(after, 409, 'dead_man_switch_not_armed')
  assert.match(after.json.detail, new RegExp(`is FIRED: .*\\(incident ${fired.incident_id}\\)`))
  assert.equal((await api('GET', '/api/v1/risk/incidents/verify', { token: reader })).json.valid, true)
  assert.is((await api('DELETE', PATH, { token: zetaAdmin })).status, 200)
})

test("a heartbeat held up past the deadline by another process's write lock rescues nothing: the switch fires, the heartbeat is 409", async () => {
  const zetaBot = await zeta.key(['orders:write'])
  const armed = await api('PUT', PATH, { token: zetaAdmin, body: { timeout_seconds: 10, action: 'CANCEL_AND_PAUSE' } })
  assert.is(armed.status, 200, armed.text)
  const deadline = Date.parse(armed.json.deadline)
  await sleep(deadline - 1000 - Date.now())
  // Neither the watch nor the heartbeat can write until the lock goes: whichever gets it first, the
  // deadline has passed, so the switch fires and the heartbeat is refused. SQLite's lock is the
  // database's; on PostgreSQL, where writes wait on row locks, it is the lock on zeta's switch.
  const db = await openTestDatabase(server.dataDir)
  if (db.engine === 'sqlite') await db.exec('BEGIN IMMEDIATE')
  else {
    await db.exec('BEGIN')
    const locked = await db.all("SELECT tenant_id FROM dead_man_switches WHERE tenant_id = (SELECT id FROM tenants WHERE slug = 'zeta') FOR UPDATE")
    assert.is(locked.length, 1)
  }
  let beat: Promise<Res>
  try {
    await sleep(deadline + 300 - Date.now())
    beat = api('POST', `${PATH}/heartbeat`, { token: zetaBot })
    await sleep(200)
  } finally {
    await db.exec('ROLLBACK')
    await db.close()
  }
  const refused = await beat
  expectProblem(refused, 409, 'dead_man_switch_not_armed')
  assert.match(refused.json.detail, new RegExp(`is FIRED: no heartbeat by its deadline ${armed.json.deadline.replace(/\./g, '\\.')}`))
  const now = (await api('GET', PATH, { token: zetaAdmin })).json
  assert.equal([now.status, now.deadline, now.last_heartbeat_at], ['FIRED', armed.json.deadline, null])
  const firings = (await incidents(zetaAdmin)).filter((i) => i.action === 'DEAD_MAN_SWITCH_FIRED')
  assert.equal(
    firings.map((i) => i.id),
    [now.incident_id],
  )
  assert.is((await api('GET', '/api/v1/risk/profile', { token: zetaAdmin })).json.trading_paused, true)
})

test('SIGKILLed before the deadline, started again after it: fires at once, exactly once, the chain intact', async () => {
  await until('the deadline of the killed server passes', async () => (Date.now() > Date.parse(crashed.deadline) ? true : undefined))
  const again = await startServer({ dataDir: crashed.dataDir })
  try {
    const call = await checkedClient(again)
    const fired = await until('the switch fires after the restart', async () => {
      const res = await call('GET', PATH, { token: crashed.key })
      return res.json.status === 'FIRED' ? res.json : undefined
    })
    assert.is(fired.deadline, crashed.deadline)
    assert.ok(fired.fired_at >= fired.deadline)
    const firings = (await incidents(crashed.key, call)).filter((i) => i.action === 'DEAD_MAN_SWITCH_FIRED')
    assert.is(firings.length, 1)
    assert.is(firings[0].id, fired.incident_id)
    assert.is(firings[0].actor, 'dead-man-switch@localhost')
    assert.is((await call('GET', '/api/v1/risk/profile', { token: crashed.key })).json.trading_paused, true)
    const verify = await call('GET', '/api/v1/risk/incidents/verify', { token: crashed.key })
    assert.equal([verify.json.valid, verify.json.count], [true, 2], 'armed, then fired')
  } finally {
    await again.stop()
  }
})

test.run()
