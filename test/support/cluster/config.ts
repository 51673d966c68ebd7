// The configuration of SPEC section 15's failover cluster: the etcd command line, each member's
// Patroni file and HAProxy's. Pure functions of the ports and dirs chosen in index.ts.
import { basename, join } from 'node:path'
import { PG_BIN } from '../postgres.ts'

export interface MemberSpec {
  name: string
  /** Its own loopback address (127.0.0.1, .2, .3: all of 127/8 is loopback here), as if a machine. */
  host: string
  port: number
  restPort: number
  dir: string
}

export interface EtcdSpec {
  host: string
  clientPort: number
  peerPort: number
  dir: string
}

/**
 * Which etcd API Patroni uses. etcd3 (the default, SPEC 15's setting) is the only one etcd 3.4 serves
 * unless told; etcd2 turns its v2 API on for Patroni's `etcd:` section. Why offer it: Debian 12's
 * Patroni 3.0.2 writes the leader key of etcd3 unconditionally when it renews an expired lease, so a
 * primary frozen (SIGSTOP) past the ttl that resumes after a failover can take the leadership back
 * and the new primary's commits are lost (fixed upstream after 3.0.2: patroni/patroni#2689); its etcd2
 * code renews with a compare-and-swap and demotes instead.
 */
export type DcsApi = 'etcd3' | 'etcd2'

/** One etcd member on the given API. */
export function etcdArgs(etcd: EtcdSpec, api: DcsApi = 'etcd3'): string[] {
  const client = `http://${etcd.host}:${etcd.clientPort}`
  const peer = `http://${etcd.host}:${etcd.peerPort}`
  return [
    '--name=dcs',
    `--data-dir=${join(etcd.dir, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=dcs=${peer}`,
    '--initial-cluster-state=new',
    // Its own token: two clusters of parallel tests never mistake each other's peers.
    `--initial-cluster-token=${basename(etcd.dir)}`,
    '--log-level=warn',
    ...(api === 'etcd2' ? ['--enable-v2=true'] : []),
  ]
}

/**
 * A member's Patroni configuration. JSON is YAML, so Patroni reads it as is. The timings are the
 * SPEC's (ttl 20 >= loop_wait 5 + 2 x retry_timeout 5); strict synchronous mode is what makes an
 * acknowledged commit survive the primary's death: it is on a standby before the client hears of it.
 */
export function patroniConfig(scope: string, member: MemberSpec, etcd: EtcdSpec, api: DcsApi = 'etcd3'): string {
  const config = {
    scope,
    namespace: '/bulwark-test/',
    name: member.name,
    restapi: { listen: `${member.host}:${member.restPort}`, connect_address: `${member.host}:${member.restPort}` },
    [api === 'etcd3' ? 'etcd3' : 'etcd']: { hosts: [`${etcd.host}:${etcd.clientPort}`] },
    bootstrap: {
      dcs: {
        ttl: 20,
        loop_wait: 5,
        retry_timeout: 5,
        maximum_lag_on_failover: 1048576,
        synchronous_mode: true,
        synchronous_mode_strict: true,
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          parameters: { wal_level: 'replica', hot_standby: 'on', max_wal_senders: 10, max_replication_slots: 10, wal_keep_size: '128MB' },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { locale: 'C' }],
    },
    postgresql: {
      listen: `${member.host}:${member.port}`,
      connect_address: `${member.host}:${member.port}`,
      data_dir: join(member.dir, 'data'),
      bin_dir: PG_BIN,
      pgpass: join(member.dir, 'pgpass'),
      // Test clusters only: trust on loopback, as test/support/postgres.ts does.
      pg_hba: ['local all all trust', 'host all all 127.0.0.0/8 trust', 'host replication all 127.0.0.0/8 trust'],
      authentication: {
        superuser: { username: 'postgres', password: 'postgres' },
        replication: { username: 'replicator', password: 'replicator' },
      },
      parameters: {
        // Its socket in its own dir, not /var/run/postgresql (which may not exist).
        unix_socket_directories: member.dir,
        max_connections: 200,
      },
      // A rejoin that cannot rewind starts over from a base backup rather than staying out.
      remove_data_directory_on_rewind_failure: true,
      remove_data_directory_on_diverged_timelines: true,
    },
    // No /dev/watchdog in a container.
    watchdog: { mode: 'off' },
  }
  return `${JSON.stringify(config, null, 2)}\n`
}

/**
 * HAProxy sends each connection to the member whose Patroni answers 200 to GET /primary (only the
 * leader does), checked every second; two failed checks mark it down and cut its sessions at once
 * (on-marked-down shutdown-sessions), so clients of a dead primary see an error, not a hang.
 */
export function haproxyConfig(listen: { host: string; port: number }, members: MemberSpec[]): string {
  return [
    'global',
    '  maxconn 2000',
    '  nbthread 1',
    'defaults',
    '  mode tcp',
    '  timeout connect 2s',
    '  timeout client 30m',
    '  timeout server 30m',
    // A stopped (SIGSTOP) member's REST API accepts and never answers: the check gives up in 1 s.
    '  timeout check 1s',
    'listen primary',
    `  bind ${listen.host}:${listen.port}`,
    '  option httpchk GET /primary',
    '  http-check expect status 200',
    '  default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions',
    ...members.map((m) => `  server ${m.name} ${m.host}:${m.port} check port ${m.restPort}`),
    '',
  ].join('\n')
}
