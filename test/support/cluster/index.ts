// SPEC section 15's failover cluster on one machine: three PostgreSQL 15 members under Patroni
// (127.0.0.1, .2 and .3, each as if a machine of its own), one etcd, and HAProxy in front sending
// connections to whichever member is primary. Debian's packages (.ci/run installs them); Patroni and
// PostgreSQL run as the postgres user. Ports come from below the ephemeral range (freePort), so
// parallel test files never collide; everything lives in one temp dir, removed by stop(), at exit,
// or by the watchdog if the test process is killed. See /work/shared/notes/postgres.md for timings.
import type { ChildProcess } from 'node:child_process'
import { chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { freePort, PG_BIN, requireBinaries, serverTempDir, serverUser } from '../postgres.ts'
import { type DcsApi, type EtcdSpec, etcdArgs, haproxyConfig, type MemberSpec, patroniConfig } from './config.ts'
import { alive, clusterWatchdog, launch, logOf, postmasterPid, signalAll, waitGone, withDescendants } from './processes.ts'

export interface Member {
  name: string
  host: string
  /** PostgreSQL's port on the member's own address. */
  port: number
  /** Patroni's REST API port. */
  restPort: number
  /** A URL straight to this member (not through HAProxy). */
  url: string
}

export interface PatroniMember {
  name: string
  role: string
  state: string
  timeline?: number
  lag?: number | string
}

export interface Cluster {
  /** postgres:// through HAProxy: always the current primary, or refused while there is none. */
  url: string
  members: Member[]
  dir: string
  /** The leader as Patroni's REST API reports it (/cluster of the first member answering), if any. */
  primary(): Promise<string | undefined>
  /** Patroni's view of the members (/cluster of the first member answering). */
  status(): Promise<PatroniMember[]>
  /** Waits until a member other than `not` answers 200 to GET /primary (it leads and runs as primary); its name. */
  waitForLeader(options?: { not?: string; timeoutMs?: number }): Promise<string>
  /**
   * Signals the member's Patroni, its postmaster and the postmaster's children, as if the machine
   * died or froze. On etcd3, a SIGCONT of a primary frozen past the ttl can lose the new primary's
   * commits (Patroni 3.0.2's bug, see DcsApi in config.ts): use dcs 'etcd2' for that.
   */
  kill(member: string, signal: 'SIGKILL' | 'SIGSTOP' | 'SIGCONT'): void
  /** Starts a SIGKILLed member's Patroni again: it rejoins as a replica (pg_rewind). */
  restart(member: string): void
  /** Every process's log (etcd, HAProxy, each Patroni with its PostgreSQL), for failure messages. */
  logs(): string
  stop(): Promise<void>
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function rest(member: Member, path: string, timeoutMs = 1000): Promise<Response | undefined> {
  try {
    return await fetch(`http://${member.host}:${member.restPort}${path}`, { signal: AbortSignal.timeout(timeoutMs) })
  } catch {
    return undefined // down, refusing or frozen
  }
}

/** Starts the cluster and resolves once it has a leader, two replicas (one synchronous) and a commit through HAProxy succeeds. */
export async function startCluster(options: { timeoutMs?: number; dcs?: DcsApi } = {}): Promise<Cluster> {
  requireBinaries(['/usr/bin/patroni', '/usr/bin/etcd', '/usr/sbin/haproxy', join(PG_BIN, 'postgres')])
  const started = Date.now()
  const dir = serverTempDir('bulwark-cluster')
  const scope = dir.slice(dir.lastIndexOf('-') + 1)
  const etcd: EtcdSpec = { host: '127.0.0.1', clientPort: await freePort(), peerPort: await freePort(), dir }
  const specs: MemberSpec[] = []
  for (const [i, host] of ['127.0.0.1', '127.0.0.2', '127.0.0.3'].entries()) {
    specs.push({ name: `m${i + 1}`, host, port: await freePort(host), restPort: await freePort(host), dir: join(dir, `m${i + 1}`) })
  }
  const proxy = { host: '127.0.0.1', port: await freePort() }
  const members: Member[] = specs.map((s) => ({
    name: s.name,
    host: s.host,
    port: s.port,
    restPort: s.restPort,
    url: `postgres://postgres@${s.host}:${s.port}/postgres`,
  }))
  const { uid, gid } = serverUser()
  for (const spec of specs) {
    mkdirSync(spec.dir, { mode: 0o700 })
    writeFileSync(join(spec.dir, 'patroni.yml'), patroniConfig(scope, spec, etcd, options.dcs), { mode: 0o600 })
    for (const path of [spec.dir, join(spec.dir, 'patroni.yml')]) chownSync(path, uid, gid)
  }
  writeFileSync(join(dir, 'haproxy.cfg'), haproxyConfig(proxy, specs))
  clusterWatchdog(
    dir,
    specs.map((s) => join(s.dir, 'data')),
  )

  const patroni = new Map<string, ChildProcess>()
  const startPatroni = (spec: MemberSpec) => {
    // HOME and PGHOST: the PostgreSQL tools Patroni runs fall back on them; this member's, not root's.
    const child = launch(dir, spec.name, '/usr/bin/patroni', [join(spec.dir, 'patroni.yml')], { asPostgres: true, env: { HOME: spec.dir, PGHOST: spec.host } })
    patroni.set(spec.name, child)
  }
  const etcdProcess = launch(dir, 'etcd', '/usr/bin/etcd', etcdArgs(etcd, options.dcs))
  const others: ChildProcess[] = [etcdProcess]
  const logs = () => ['etcd', 'haproxy', ...specs.map((s) => s.name)].map((name) => `--- ${name}.log\n${logOf(dir, name)}`).join('\n')

  let stopped = false
  const dataDirs = specs.map((s) => join(s.dir, 'data'))
  const killEverything = () => {
    const roots = [...patroni.values(), ...others].map((c) => c.pid!).filter(Boolean)
    const postmasters = dataDirs.map(postmasterPid).filter((pid): pid is number => pid !== undefined)
    const pids = withDescendants([...roots, ...postmasters])
    signalAll(pids, 'SIGKILL')
    return pids
  }
  const stopSync = () => {
    if (stopped) return
    stopped = true
    killEverything()
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', stopSync)

  const cluster: Cluster = {
    url: `postgres://postgres@${proxy.host}:${proxy.port}/postgres`,
    members,
    dir,
    async status() {
      for (const member of members) {
        const res = await rest(member, '/cluster')
        if (res?.ok) return ((await res.json()) as { members: PatroniMember[] }).members
      }
      return []
    },
    async primary() {
      return (await cluster.status()).find((m) => m.role === 'leader')?.name
    },
    async waitForLeader({ not, timeoutMs = 60_000 } = {}) {
      const deadline = Date.now() + timeoutMs
      while (Date.now() < deadline) {
        const answers = await Promise.all(
          members.filter((m) => m.name !== not).map(async (m) => ((await rest(m, '/primary'))?.status === 200 ? m.name : undefined)),
        )
        const leader = answers.find(Boolean)
        if (leader) return leader
        await sleep(250)
      }
      throw new Error(`no leader${not ? ` other than ${not}` : ''} within ${timeoutMs} ms\n${logs()}`)
    },
    kill(name, signal) {
      const spec = specs.find((s) => s.name === name)
      if (!spec) throw new Error(`no member ${name}`)
      const roots = [patroni.get(name)?.pid, postmasterPid(join(spec.dir, 'data'))].filter((pid): pid is number => pid !== undefined)
      signalAll(withDescendants(roots), signal)
    },
    restart(name) {
      const spec = specs.find((s) => s.name === name)
      if (!spec) throw new Error(`no member ${name}`)
      const pid = patroni.get(name)?.pid
      if (pid && alive(pid)) throw new Error(`member ${name}'s Patroni is still running`)
      startPatroni(spec)
    },
    logs,
    async stop() {
      if (stopped) return
      stopped = true
      process.removeListener('exit', stopSync)
      // No graceful shutdown: nothing is kept, and SIGKILL ends even a stopped (SIGSTOP) member.
      await waitGone(killEverything(), 5000)
      rmSync(dir, { recursive: true, force: true })
    },
  }

  try {
    await waitFor(async () => (await fetch(`http://${etcd.host}:${etcd.clientPort}/health`, { signal: AbortSignal.timeout(1000) })).ok, 'etcd', 15_000)
    for (const spec of specs) startPatroni(spec)
    others.push(launch(dir, 'haproxy', '/usr/sbin/haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')]))
    const deadline = started + (options.timeoutMs ?? 90_000)
    await waitFor(
      async () => {
        for (const child of [...patroni.values(), ...others])
          if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${child.spawnfile} exited`)
        const view = await cluster.status()
        const running = (role: string) => view.filter((m) => m.role === role && (m.state === 'running' || m.state === 'streaming')).length
        return running('leader') === 1 && running('sync_standby') === 1 && running('replica') === 1
      },
      'a leader, a synchronous standby and a replica',
      deadline - Date.now(),
    )
    // A commit through HAProxy: routed to the primary and acknowledged by the synchronous standby.
    await waitFor(() => commitThrough(cluster.url), 'a commit through HAProxy', deadline - Date.now())
    return cluster
  } catch (error) {
    const message = `cluster did not form: ${(error as Error).message}\n${logs()}`
    await cluster.stop()
    throw new Error(message)
  }
}

async function commitThrough(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000, query_timeout: 5000 })
  client.on('error', () => {})
  try {
    await client.connect()
    const { rows } = await client.query('SELECT txid_current() AS xid, pg_is_in_recovery() AS standby')
    return rows[0].standby === false
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

/** Polls `check` (errors it throws end the wait) until it is true. */
async function waitFor(check: () => Promise<boolean>, what: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    let ok = false
    try {
      ok = await check()
    } catch (error) {
      if ((error as Error).message.endsWith('exited')) throw error
    }
    if (ok) return
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms`)
    await sleep(250)
  }
}
