// engines: own
// The PostgreSQL test infrastructure proves itself, with the pg client and no Bulwark code: the
// throwaway server of test/support/postgres.ts gives separate databases, and the Patroni cluster of
// test/support/cluster/ (SPEC section 15) loses no acknowledged commit when its primary is
// SIGKILLed, elects a new leader and acknowledges commits again within 40 s, and takes the killed
// member back as a replica. Timings are printed, not asserted beyond the SPEC's 40 s.
import { existsSync } from 'node:fs'
import pg from 'pg'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { startCluster } from '../support/cluster/index.ts'
import { startPostgres } from '../support/postgres.ts'

const test = suite('cluster: the PostgreSQL test infrastructure')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

async function connect(url: string): Promise<pg.Client> {
  // Client-side limits: a connection or a commit to a dead primary fails instead of hanging.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000, query_timeout: 5000 })
  client.on('error', () => {}) // a connection cut by HAProxy fails the query in flight; that is enough
  await client.connect()
  return client
}

async function query<T extends pg.QueryResultRow = any>(url: string, sql: string, values?: unknown[]): Promise<T[]> {
  const client = await connect(url)
  try {
    return (await client.query<T>(sql, values)).rows
  } finally {
    await client.end()
  }
}

test('postgres: a server as the postgres user on 127.0.0.1, two databases that are separate, all gone after stop', async () => {
  const started = Date.now()
  const server = await startPostgres()
  const startMs = Date.now() - started
  try {
    const a = await server.createDatabase()
    const b = await server.createDatabase('second')
    assert.ok(a.startsWith(`postgres://postgres@127.0.0.1:${server.port}/`), a)
    assert.is(new URL(b).pathname, '/second')
    await query(a, 'CREATE TABLE only_in_a (id int)')
    await query(a, 'INSERT INTO only_in_a VALUES (1)')
    assert.equal(await query(a, 'SELECT id FROM only_in_a'), [{ id: 1 }])
    const inB = await query(b, "SELECT to_regclass('only_in_a') AS t, current_database() AS db, current_user AS who")
    assert.equal(inB, [{ t: null, db: 'second', who: 'postgres' }])
    const [{ server_version }] = await query(a, 'SHOW server_version')
    assert.match(server_version, /^15\./)
    console.log(`postgres: started in ${startMs} ms (data dir + pg_ctl start)`)
  } finally {
    await server.stop()
  }
  assert.not.ok(existsSync(server.dir), 'the temp dir is removed')
})

test('failover: every INSERT acknowledged through HAProxy survives a SIGKILL of the primary; a new leader commits within 40 s', async () => {
  const t0 = Date.now()
  const cluster = await startCluster()
  const formedMs = Date.now() - t0
  try {
    await query(cluster.url, 'CREATE TABLE acked (id int PRIMARY KEY, writer int NOT NULL)')
    const old = await cluster.primary()
    assert.ok(old, 'a leader before the kill')

    // Four writers, each on its own connection through HAProxy, inserting ids nobody else uses.
    // An id counts once its INSERT is acknowledged; on an error the writer reconnects and goes on.
    const acked: { id: number; sent: number; at: number }[] = []
    let failures = 0
    let next = 0
    let writing = true
    const writer = async (n: number) => {
      let client: pg.Client | undefined
      while (writing) {
        try {
          client ??= await connect(cluster.url)
          const id = ++next
          const sent = Date.now()
          await client.query('INSERT INTO acked (id, writer) VALUES ($1, $2)', [id, n])
          acked.push({ id, sent, at: Date.now() })
        } catch {
          failures++
          client?.end().catch(() => {})
          client = undefined
          await sleep(100)
        }
      }
      await client?.end().catch(() => {})
    }
    const writers = [1, 2, 3, 4].map(writer)

    await sleep(2000)
    const killedAt = Date.now()
    const before = acked.length
    cluster.kill(old, 'SIGKILL')
    const leader = await cluster.waitForLeader({ not: old, timeoutMs: 60_000 })
    const leaderMs = Date.now() - killedAt
    // Until an INSERT sent after the kill is acknowledged (by the new primary), then a little longer.
    const deadline = killedAt + 60_000
    const afterKill = () => acked.find((a) => a.sent > killedAt)
    while (!afterKill() && Date.now() < deadline) await sleep(100)
    const firstAfter = afterKill()
    await sleep(1000)
    writing = false
    await Promise.all(writers)

    assert.ok(before > 0, 'commits were acknowledged before the kill')
    assert.ok(firstAfter, `a commit acknowledged after the kill (within 60 s)\n${cluster.logs()}`)
    const ackMs = firstAfter.at - killedAt
    assert.ok(ackMs < 40_000, `commits acknowledged again ${seconds(ackMs)} after the kill (SPEC: 40 s)`)
    assert.is.not(leader, old)
    assert.is(await cluster.primary(), leader)

    // Read back through HAProxy, which now reaches the new leader: every acknowledged id is there.
    const member = cluster.members.find((m) => m.name === leader)!
    const [where] = await query(cluster.url, 'SELECT host(inet_server_addr()) AS host, inet_server_port() AS port, pg_is_in_recovery() AS standby')
    assert.equal(where, { host: member.host, port: member.port, standby: false })
    const present = new Set((await query<{ id: number }>(cluster.url, 'SELECT id FROM acked')).map((r) => r.id))
    const lost = acked.filter((a) => !present.has(a.id)).map((a) => a.id)
    assert.equal(lost, [], `acknowledged but missing on the new primary: ${lost.join(', ')}`)

    // The killed member comes back as a replica of the new leader (pg_rewind, or a fresh copy).
    const restartedAt = Date.now()
    cluster.restart(old)
    let rejoined = false
    while (!rejoined && Date.now() - restartedAt < 45_000) {
      // From the new primary's side: the old one streams from it (Patroni names each standby's
      // connection after its member), and is in recovery itself.
      const streaming = await query(cluster.url, "SELECT 1 FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'", [old]).catch(() => [])
      const oldMember = cluster.members.find((m) => m.name === old)!
      rejoined = streaming.length === 1 && (await query(oldMember.url, 'SELECT pg_is_in_recovery() AS r').catch(() => []))[0]?.r === true
      if (!rejoined) await sleep(250)
    }
    assert.ok(rejoined, `${old} rejoined as a replica\n${cluster.logs()}`)
    const rejoinMs = Date.now() - restartedAt
    console.log(
      `cluster: formed in ${seconds(formedMs)}; ${old} SIGKILLed after ${before} commits; ${leader} led after ${seconds(leaderMs)}, ` +
        `first commit acknowledged after ${seconds(ackMs)}; ${acked.length} acknowledged, ${present.size} rows, ${failures} failed attempts; ` +
        `${old} rejoined in ${seconds(rejoinMs)}`,
    )
  } finally {
    await cluster.stop()
  }
  assert.not.ok(existsSync(cluster.dir), 'the temp dir is removed')
})

test.run()
