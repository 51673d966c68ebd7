// Another process holding the write lock (as a sqlite3 shell's BEGIN IMMEDIATE would): the server
// keeps answering reads and health, writes wait asynchronously with the kill switch first in line,
// and a write that waited 5 s is refused with 503 database_busy, nothing of it written.
// SQLite's whole-database write lock: PostgreSQL has none (its writes wait on row locks).
// engines: sqlite
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { client, ROOT, startServer, tenantFixture, type Res, type Server, type TenantFixture } from '../support/harness.ts'

const test = suite('store: a write lock held by another process')
let server: Server
let api: ReturnType<typeof client>
let acme: TenantFixture
let admin: string

/** A separate Node process that takes the write lock, says so, holds it `ms`, then commits. */
function holdWriteLock(ms: number): Promise<{ child: ChildProcess; released: Promise<void>; isReleased: () => boolean }> {
  const script = `
    const Database = require('better-sqlite3')
    const db = new Database(${JSON.stringify(join(server.dataDir, 'bulwark.db'))})
    db.pragma('busy_timeout = 5000')
    db.exec('BEGIN IMMEDIATE')
    process.stdout.write('locked\\n')
    setTimeout(() => { db.exec('COMMIT'); db.close(); process.stdout.write('released\\n') }, ${ms})`
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  let output = ''
  let released = false
  const releasedPromise = new Promise<void>((resolve) =>
    child.stdout!.on('data', (d) => {
      output += d
      if (output.includes('released')) {
        released = true
        resolve()
      }
    }),
  )
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', () => {
      if (output.includes('locked')) resolve({ child, released: releasedPromise, isReleased: () => released })
    })
    child.on('exit', (code) => {
      if (!output.includes('locked')) reject(new Error(`lock holder exited ${code}`))
    })
  })
}

async function incidentActions(): Promise<string[]> {
  const res = await api('GET', '/api/v1/risk/incidents', { token: admin })
  return res.json.map((i: { action: string }) => i.action).reverse() // oldest first
}

test.before(async () => {
  server = await startServer()
  api = client(server)
  acme = await tenantFixture(server, 'acme', 'EXECUTE')
  admin = await acme.key(['risk:admin', 'signals:read'])
})
test.after(async () => {
  await server.stop()
})

test('while another process writes, reads and health answer, and the kill switch goes first', async () => {
  const lock = await holdWriteLock(2000)
  // Sent while locked: a profile change first, then the kill switch.
  const patch = api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 9 } })
  await new Promise((r) => setTimeout(r, 100))
  const kill = api('POST', '/api/v1/risk/kill-switch', { token: admin, body: { action: 'CANCEL_AND_PAUSE', pause: true, reason: 'busy test' } })
  const health = await api('GET', '/api/v1/health')
  const signals = await api('GET', '/api/v1/signals', { token: admin })
  assert.not.ok(lock.isReleased(), 'health and signals answered while the lock was held')
  assert.is(health.status, 200)
  assert.is(health.json.database, 'busy')
  assert.is(health.json.status, 'HEALTHY', 'a lock held for a moment is not a degraded service')
  assert.is(signals.status, 200)
  const [patched, killed] = await Promise.all([patch, kill])
  assert.ok(lock.isReleased(), 'the writes completed only after the lock was released')
  assert.is(patched.status, 200, patched.text)
  assert.is(killed.status, 200, killed.text)
  // The kill switch was sent second but committed first: it was first in line for the lock.
  const actions = await incidentActions()
  assert.equal(actions.slice(-2), ['EMERGENCY_KILL_SWITCH_ENGAGED', 'RISK_PROFILE_UPDATED'])
  assert.is((await api('GET', '/api/v1/health')).json.database, 'ok')
  await api('POST', '/api/v1/risk/kill-switch', { token: admin, body: { action: 'RESUME', pause: false } })
})

test('a write that waited 5 s is 503 database_busy with Retry-After, nothing written; the loop never froze', async () => {
  const before = await incidentActions()
  const profileBefore = (await api('GET', '/api/v1/risk/profile', { token: admin })).json
  const lock = await holdWriteLock(8000)
  const patch = api('PATCH', '/api/v1/risk/profile', { token: acme.jwt, body: { max_open_trades: 3 } })
  const kill = api('POST', '/api/v1/risk/kill-switch', { token: admin, body: { action: 'PAUSE', pause: true } })
  // Health polled one request after another while the lock is held: each answers in turn.
  const polls: Res[] = []
  while (!lock.isReleased()) {
    const res = await api('GET', '/api/v1/health')
    if (!lock.isReleased()) polls.push(res)
    await new Promise((r) => setTimeout(r, 50))
  }
  const [patched, killed] = await Promise.all([patch, kill])
  for (const refused of [patched, killed]) {
    assert.is(refused.status, 503, refused.text)
    assert.is(refused.headers.get('content-type'), 'application/problem+json')
    assert.is(refused.json.code, 'database_busy')
    assert.match(refused.json.detail, /locked by another process/)
    assert.ok(Number(refused.headers.get('retry-after')) >= 1)
  }
  // A server whose loop froze for 5 s answers a handful of polls in 8 s; one that never blocks
  // for long answers them all, dozens.
  assert.ok(polls.length >= 20, `only ${polls.length} health answers while the lock was held`)
  assert.ok(polls.every((p) => p.json.database === 'busy'))
  assert.is(polls[0].status, 200)
  const late = polls.filter((p) => p.status === 503)
  assert.ok(late.length > 0, 'after 5 s of a taken lock, health says DEGRADED')
  assert.ok(late.every((p) => p.json.status === 'DEGRADED'))
  // Nothing of either refused write exists.
  assert.equal(await incidentActions(), before)
  assert.equal((await api('GET', '/api/v1/risk/profile', { token: admin })).json, profileBefore)
  const after = await api('GET', '/api/v1/health')
  assert.equal([after.status, after.json.status, after.json.database], [200, 'HEALTHY', 'ok'])
})

test.run()
