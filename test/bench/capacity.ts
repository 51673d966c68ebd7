// One node's capacity (SPEC 15 "Speed"): what one `bulwark serve` (the built executable, copied
// first) carries on this machine, on SQLite or on a throwaway local PostgreSQL 15 (--engine).
//   1. Tenants and bots: --tenants EXECUTE tenants (1,000) with --keys API keys each (10: 10,000
//      bots), written through the domain functions before the server starts (timed).
//   2. Orders at saturation: bots placing a LIMIT BUY (POST /api/v1/orders, it stays PENDING) and
//      canceling it (DELETE, so every tenant's book stays the same size), each order from a bot
//      drawn at random among all 10,000, with --connections (8,32,128) orders in flight, --seconds
//      each; orders/s and the POST's p50 and p99 as the client sees them, and the CPU time the
//      server (and PostgreSQL's processes) spent per order. Baseline in the same run: the same
//      load on a node holding only one tenant with one key per order in flight (128), each loop
//      always the same bot, so no two orders of a tenant wait on each other there; sides
//      alternating in --rounds rounds, both servers up. Rate limits lifted on both (--rate-limit),
//      as a bot placing 1,000 orders a minute would otherwise be refused.
//   3. Webhook deliveries: every tenant has one HTTPS endpoint on a local receiver (test CA, a child
//      process). For each shape of --deliveries (1000x10: 10 webhook.ping events for each of 1,000
//      endpoints; then 10x1000 and 1x10000), the events are recorded with the node stopped, then
//      the node starts and delivers them (the real sender, signed, keep-alive): deliveries/s from
//      the first arrival to the last, and the node's CPU per delivery. Baseline in the same run: a
//      bare node:https client posting the same signed bodies to the same paths, one serial lane
//      (agent) per endpoint and at most 512 in flight, as the sender is built.
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/capacity.ts [--bin dist/bulwark] [--engine sqlite|postgres] [--tenants 1000] [--keys 10] [--connections 8,32,128] [--seconds 8] [--rounds 2] [--deliveries 1000x10,10x1000,1x10000]
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { Agent, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createWebhook } from '../../src/webhooks/endpoints.ts'
import { recordEvent } from '../../src/webhooks/events.ts'
import { signDelivery } from '../../src/webhooks/signing.ts'
import type { PostgresServer } from '../support/postgres.ts'
import { makeTestCa, type TestCa } from '../support/test-ca.ts'
import { runAsScript, stopChild } from './script.ts'
import {
  copiedBin,
  cpuMeter,
  flag,
  fmt,
  freshTarget,
  machine,
  median,
  orderBody,
  percentile,
  seedCandles,
  seedTarget,
  seedTenants,
  serveTarget,
  startBenchPostgres,
  type EngineName,
} from './store-postgres.ts'

const ENGINE = flag('engine', 'sqlite') as EngineName
const TENANTS = Number(flag('tenants', '1000'))
const KEYS = Number(flag('keys', '10'))
const CONNECTIONS = flag('connections', '8,32,128')!.split(',').map(Number)
const SECONDS = Number(flag('seconds', '8'))
const ROUNDS = Number(flag('rounds', '2'))
// Deliveries as ENDPOINTSxEACH: 1000x10 is ten events for each of the 1,000 tenants' endpoints.
const SHAPES = flag('deliveries', '1000x10,10x1000,1x10000')!.split(',')
const SERVE_FLAGS = ['--rate-limit', '1000000000']

// ---- the bots: place an order, cancel it, again ------------------------------------------------------

interface Bot {
  key: string
}

interface BotLoad {
  ordersPerSecond: number
  p50: number
  p99: number
  failures: number
  /** CPU the server used per order placed and canceled, and PostgreSQL's (0 on SQLite), in ms; the server's share of one core. */
  cpu?: { node: number; postgres: number; share: number }
}

function send(agent: Agent, base: URL, method: string, path: string, key: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method,
        path,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (d) => (text += d))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * `connections` loops, each placing an order and canceling it, for `seconds`: from a bot drawn at
 * random (`spread`), or loop i always from bot i (one tenant per loop: no two orders of a tenant in
 * flight, which PostgreSQL would queue on the tenant's row lock).
 */
export async function botLoad(url: string, bots: Bot[], limits: number[], connections: number, seconds: number, spread: boolean): Promise<BotLoad> {
  const base = new URL(url)
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const latencies: number[] = []
  let failures = 0
  let n = 0
  const started = performance.now()
  const until = started + seconds * 1000
  const loop = async (_: unknown, index: number) => {
    while (performance.now() < until) {
      const bot = spread ? bots[Math.floor(Math.random() * bots.length)] : bots[index]
      const t0 = performance.now()
      const placed = await send(agent, base, 'POST', '/api/v1/orders', bot.key, orderBody(n++, limits))
      const ms = performance.now() - t0
      if (placed.status !== 200) {
        failures++
        continue
      }
      latencies.push(ms)
      const canceled = await send(agent, base, 'DELETE', `/api/v1/orders/${JSON.parse(placed.text).id}`, bot.key)
      if (canceled.status !== 200) failures++
    }
  }
  await Promise.all(Array.from({ length: connections }, loop))
  const elapsed = (performance.now() - started) / 1000
  agent.destroy()
  return { ordersPerSecond: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), failures }
}

function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
}

// ---- the receiver: an HTTPS server in a child process that counts arrivals ----------------------------

const RECEIVER = `const https = require('node:https')
const ca = JSON.parse(process.env.BENCH_CA)
let count = 0, first = 0, last = 0, expect = Infinity
const paths = new Set()
const server = https.createServer({ key: ca.key, cert: ca.cert, keepAliveTimeout: 30000 }, (req, res) => {
  req.resume()
  req.on('end', () => {
    const now = Date.now()
    if (count === 0) first = now
    count++; last = now; paths.add(req.url)
    res.writeHead(200); res.end('ok')
    if (count >= expect) { process.send({ count, first, last, paths: paths.size }); expect = Infinity }
  })
})
server.keepAliveTimeout = 30000
process.on('message', (m) => { if (m.expect) { count = 0; first = 0; last = 0; paths.clear(); expect = m.expect } })
server.listen(0, '127.0.0.1', () => process.send({ url: 'https://127.0.0.1:' + server.address().port }))`

interface Arrivals {
  count: number
  first: number
  last: number
  paths: number
}

class Receiver {
  private waiter: ((a: Arrivals) => void) | undefined
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.on('message', (m: any) => {
      if (m.count !== undefined) this.waiter?.(m)
    })
  }
  static async start(ca: TestCa): Promise<Receiver> {
    const child = spawn(process.execPath, ['-e', RECEIVER], {
      env: { ...process.env, BENCH_CA: JSON.stringify(ca) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    const url = await new Promise<string>((resolve) => child.once('message', (m: any) => resolve(m.url)))
    return new Receiver(child, url)
  }
  /** Counting starts afresh; resolves once `count` requests have arrived. */
  expect(count: number): Promise<Arrivals> {
    const arrived = new Promise<Arrivals>((resolve) => (this.waiter = resolve))
    this.child.send({ expect: count })
    return arrived
  }
}

/** The bare client: the same signed bodies to the same paths, one serial lane per endpoint, at most 512 in flight. */
async function bareDeliveries(receiver: Receiver, ca: TestCa, endpoints: { path: string; secret: string }[], perEndpoint: number): Promise<number> {
  const caPem = readFileSync(ca.caFile, 'utf8')
  const target = new URL(receiver.url)
  const arrived = receiver.expect(endpoints.length * perEndpoint)
  let inFlight = 0
  const waiting: (() => void)[] = []
  const slot = async () => {
    if (inFlight < 512) {
      inFlight++
      return
    }
    await new Promise<void>((resolve) => waiting.push(resolve))
  }
  const free = () => {
    const next = waiting.shift()
    if (next) next()
    else inFlight--
  }
  const agents: HttpsAgent[] = []
  await Promise.all(
    endpoints.map(async (endpoint, e) => {
      const agent = new HttpsAgent({ keepAlive: true, maxSockets: 1, ca: caPem })
      agents.push(agent)
      for (let i = 0; i < perEndpoint; i++) {
        const sentAt = new Date()
        const id = `evt_bare${e}x${i}`
        const body = JSON.stringify({
          id,
          type: 'webhook.ping',
          created_at: sentAt.toISOString(),
          sent_at: sentAt.toISOString(),
          attempt: 1,
          tenant_id: 'ten_bare',
          data: {},
        })
        const headers = {
          'X-Service-Event': 'webhook.ping',
          'X-Service-Delivery': `dlv_bare${e}x${i}`,
          ...signDelivery({ secret: endpoint.secret, messageId: id, sentAt, body }),
        }
        await slot()
        try {
          await new Promise<void>((resolve, reject) => {
            const req = httpsRequest(
              {
                agent,
                host: target.hostname,
                port: target.port,
                method: 'POST',
                path: endpoint.path,
                headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
              },
              (res) => {
                res.resume()
                res.on('end', resolve)
              },
            )
            req.on('error', reject)
            req.end(body)
          })
        } finally {
          free()
        }
      }
    }),
  )
  const got = await arrived
  for (const agent of agents) agent.destroy()
  if (got.paths !== endpoints.length) throw new Error(`the bare client reached ${got.paths} endpoints`)
  return got.count / (Math.max(1, got.last - got.first) / 1000)
}

// ---- the run ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-capacity-'))
  let pgServer: PostgresServer | undefined
  let receiver: Receiver | undefined
  const servers: ChildProcess[] = []
  const loadBefore = loadavg()
  const started = performance.now()
  try {
    const bin = copiedBin(work)
    if (ENGINE === 'postgres') pgServer = await startBenchPostgres()
    const ca = makeTestCa('capacity')
    receiver = await Receiver.start(ca)

    // 1. The node's tenants and bots, and the baseline node's one.
    const node = await freshTarget(ENGINE, work, pgServer, 'capacity')
    const setupStarted = performance.now()
    const { limits, bots, endpoints } = await seedTarget(node, async (store) => {
      const limits = await seedCandles(store)
      const tenants = await seedTenants(store, 'bot-tenant', TENANTS, KEYS, ['orders:write'])
      const endpoints: { tenantId: string; webhookId: string; path: string; secret: string }[] = []
      for (let start = 0; start < tenants.length; start += 100) {
        await store.write(async (tx) => {
          for (const [i, tenant] of tenants.slice(start, start + 100).entries()) {
            const path = `/t/${start + i}`
            const made = await createWebhook(tx, tenant.id, { url: `${receiver!.url}${path}`, events: ['webhook.ping'], description: null }, new Date())
            endpoints.push({ tenantId: tenant.id, webhookId: made.webhook.id, path, secret: made.secret })
          }
        })
      }
      return { limits, bots: tenants.flatMap((t) => t.keys.map((key) => ({ key }))), endpoints }
    })
    const setupSeconds = (performance.now() - setupStarted) / 1000
    const baseline = await freshTarget(ENGINE, work, pgServer, 'baseline')
    const baselineBots = await seedTarget(baseline, async (store) => {
      await seedCandles(store)
      return (await seedTenants(store, 'one', Math.max(...CONNECTIONS), 1, ['orders:write'])).map((t) => ({ key: t.keys[0] }))
    })
    console.error(`${TENANTS} tenants, ${bots.length} API keys and ${endpoints.length} webhook endpoints written in ${setupSeconds.toFixed(1)} s`)

    // 2. Orders at saturation, alternating with the baseline node.
    const nodeServer = await serveTarget(node, bin, SERVE_FLAGS)
    servers.push(nodeServer)
    const baseServer = await serveTarget(baseline, bin, SERVE_FLAGS)
    servers.push(baseServer)
    await botLoad(nodeServer.url, bots, limits, 8, 2, true) // warm-up
    await botLoad(baseServer.url, baselineBots, limits, 8, 2, false)
    const runs = new Map<number, { node: BotLoad[]; base: BotLoad[] }>(CONNECTIONS.map((c) => [c, { node: [], base: [] }]))
    let rss = 0
    for (let round = 0; round < ROUNDS; round++) {
      for (const connections of CONNECTIONS) {
        for (const side of round % 2 ? (['base', 'node'] as const) : (['node', 'base'] as const)) {
          const meter = cpuMeter((side === 'node' ? nodeServer : baseServer).pid!, pgServer)
          const r =
            side === 'node'
              ? await botLoad(nodeServer.url, bots, limits, connections, SECONDS, true)
              : await botLoad(baseServer.url, baselineBots, limits, connections, SECONDS, false)
          const used = meter()
          const orders = r.ordersPerSecond * used.wall
          r.cpu = { node: (used.node * 1000) / orders, postgres: (used.postgres * 1000) / orders, share: used.node / used.wall }
          if (r.failures > 0) throw new Error(`${side}, ${connections} connections: ${r.failures} requests failed`)
          runs.get(connections)![side].push(r)
          if (side === 'node') rss = Math.max(rss, rssMb(nodeServer.pid!))
          console.error(
            `round ${round + 1}/${ROUNDS} ${connections} connections ${side}: ${r.ordersPerSecond.toFixed(0)} orders/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms; CPU per order: node ${r.cpu.node.toFixed(2)} ms, PostgreSQL ${r.cpu.postgres.toFixed(2)} ms; node at ${(r.cpu.share * 100).toFixed(0)}% of a core`,
          )
        }
      }
    }
    await stopChild(baseServer)
    await stopChild(nodeServer)

    // 3. Webhook deliveries, shape by shape: the backlog recorded with the node stopped, delivered when it starts.
    const delivered: { shape: string; deliveries: number; endpoints: number; seconds: number; rate: number; bare: number; node: number; postgres: number }[] =
      []
    for (const shape of SHAPES) {
      const [count, each] = shape.split('x').map(Number)
      const lanes = endpoints.slice(0, count)
      const deliveries = lanes.length * each
      const recordStarted = performance.now()
      await seedTarget(node, async (store) => {
        for (let start = 0; start < deliveries; start += 1000) {
          await store.write(async (tx) => {
            for (let i = start; i < Math.min(deliveries, start + 1000); i++) {
              const endpoint = lanes[i % lanes.length]
              await recordEvent(tx, endpoint.tenantId, 'webhook.ping', { webhook_id: endpoint.webhookId }, new Date())
            }
          })
        }
      })
      console.error(`${shape}: ${deliveries} deliveries queued in ${((performance.now() - recordStarted) / 1000).toFixed(1)} s`)
      const bare = await bareDeliveries(receiver, ca, lanes, each) // first: its cold TLS handshakes as the sender's
      const arrived = receiver.expect(deliveries)
      const sender = await serveTarget(node, bin, [...SERVE_FLAGS, '--webhook-allow-cidr', '127.0.0.0/8', '--webhook-ca-file', ca.caFile])
      servers.push(sender)
      const senderMeter = cpuMeter(sender.pid!, pgServer)
      const got = await arrived
      const used = senderMeter()
      await stopChild(sender)
      if (got.paths !== lanes.length) throw new Error(`the node reached ${got.paths} endpoints`)
      const seconds = Math.max(1, got.last - got.first) / 1000
      delivered.push({
        shape,
        deliveries,
        endpoints: lanes.length,
        seconds,
        rate: got.count / seconds,
        bare,
        node: (used.node * 1e6) / deliveries,
        postgres: (used.postgres * 1e6) / deliveries,
      })
      console.error(`${shape}: ${(got.count / seconds).toFixed(0)}/s, bare ${bare.toFixed(0)}/s`)
    }

    // The report.
    const loadAfter = loadavg()
    console.log(
      `One node's capacity on ${ENGINE === 'postgres' ? 'PostgreSQL 15 (127.0.0.1, same machine, fsync on)' : 'SQLite'}: ${machine()}, ${flag('bin', 'dist/bulwark')}, ${ROUNDS} rounds alternating with the baseline node, ${SECONDS} s per load, in ${((performance.now() - started) / 60_000).toFixed(1)} min`,
    )
    console.log(
      `  carried: ${TENANTS} tenants, ${bots.length} API keys (bots), ${endpoints.length} webhook endpoints; written in ${setupSeconds.toFixed(1)} s; RSS under load ${rss.toFixed(0)} MB`,
    )
    console.log('  each order is canceled by its bot after its answer: the node answers twice as many requests as orders')
    console.log('')
    console.log(
      `| orders in flight | orders/s, ${TENANTS} tenants x ${KEYS} bots | p50 ms | p99 ms | CPU ms per order: node, PostgreSQL | node's share of a core | orders/s, a tenant and bot per order in flight | p50 ms | p99 ms | CPU ms per order | ratio of orders/s | node runs | baseline runs |`,
    )
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|')
    for (const [connections, s] of runs) {
      const m = (xs: BotLoad[], f: (r: BotLoad) => number) => median(xs.map(f))
      const rate = (xs: BotLoad[]) => m(xs, (r) => r.ordersPerSecond)
      const ms = (xs: BotLoad[], f: (r: BotLoad) => number) => fmt(m(xs, f), 'ms')
      const cpu = (xs: BotLoad[]) => `${ms(xs, (r) => r.cpu!.node)}${pgServer ? `, ${ms(xs, (r) => r.cpu!.postgres)}` : ''}`
      const cells = [
        connections,
        fmt(rate(s.node), '/s'),
        ms(s.node, (r) => r.p50),
        ms(s.node, (r) => r.p99),
        cpu(s.node),
        `${(m(s.node, (r) => r.cpu!.share) * 100).toFixed(0)}%`,
        fmt(rate(s.base), '/s'),
        ms(s.base, (r) => r.p50),
        ms(s.base, (r) => r.p99),
        cpu(s.base),
        `**${(rate(s.node) / rate(s.base)).toFixed(2)}**`,
        s.node.map((r) => fmt(r.ordersPerSecond, '/s')).join(', '),
        s.base.map((r) => fmt(r.ordersPerSecond, '/s')).join(', '),
      ]
      console.log(`| ${cells.join(' | ')} |`)
    }
    console.log('')
    console.log(
      `| webhook deliveries | deliveries/s (first to last arrival) | bare node:https, same bodies and lanes | ratio | CPU µs per delivery: node${pgServer ? ', PostgreSQL' : ''} |`,
    )
    console.log('|---|---|---|---|---|')
    for (const d of delivered)
      console.log(
        `| ${d.deliveries} to ${d.endpoints} endpoints | ${d.rate.toFixed(0)} (${d.seconds.toFixed(2)} s) | ${d.bare.toFixed(0)} | **${(d.rate / d.bare).toFixed(2)}** | ${d.node.toFixed(0)}${pgServer ? `, ${d.postgres.toFixed(0)}` : ''} |`,
      )
    console.log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after: ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`)
  } finally {
    for (const server of servers) await stopChild(server)
    receiver?.child.kill()
    await pgServer?.stop()
    rmSync(work, { recursive: true, force: true })
  }
}

runAsScript(import.meta.url, main)
