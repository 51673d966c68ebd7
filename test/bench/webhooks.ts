// Webhook sender figures, each against a baseline measured the same way in the same run:
//   1. throughput: N signed deliveries to one local HTTPS receiver (keep-alive), against a bare
//      node:https client posting the same signed bodies one at a time over one keep-alive socket
//      (the floor for in-order delivery to one endpoint);
//   2. fan-out: one event to 200 endpoints (cold: new TLS connections; warm: reused), against
//      200 bare node:https agents posting at once;
//   3. what the outbox adds to the transaction of the change that causes an event: the change with
//      recordEvent (events row + one delivery row per subscribed endpoint) against the change alone.
// The sender runs in this process exactly as `serve` runs it (same modules, same service); the
// receiver runs in a child process, so the two do not share an event loop.
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/webhooks.ts [--n 5000] [--endpoints 200] [--rounds 3]
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { Agent, request } from 'node:https'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { query } from '../../src/store/store.ts'
import { createTenant } from '../../src/tenants/tenants.ts'
import { recordEvent } from '../../src/webhooks/events.ts'
import { createWebhook } from '../../src/webhooks/endpoints.ts'
import { openApp } from '../../src/app.ts'
import { serveConfig } from '../../src/config.ts'
import { signDelivery } from '../../src/webhooks/signing.ts'
import { makeTestCa, type TestCa } from '../webhooks/receiver.ts'
import { tempDir } from '../support/harness.ts'

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : Number(process.argv[at + 1])
}
const N = arg('n', 5000)
const ENDPOINTS = arg('endpoints', 200)
const ROUNDS = arg('rounds', 3)
const RECEIVER = fileURLToPath(new URL('../webhooks/receiver.ts', import.meta.url))

// ---- the receiver child ------------------------------------------------------------------------

interface Arrivals {
  count: number
  first: number
  last: number
  paths: number
}

class ReceiverChild {
  private waiters: ((a: Arrivals) => void)[] = []
  constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.on('message', (m: any) => {
      if (m.arrivals) this.waiters.shift()?.(m.arrivals)
    })
  }
  static async start(ca: TestCa): Promise<ReceiverChild> {
    const code = `
      import { startReceiver } from ${JSON.stringify(RECEIVER)}
      const r = await startReceiver(JSON.parse(process.env.BENCH_CA))
      let expect = Infinity
      process.on('message', (m) => { if (m.reset) { r.received.length = 0; expect = Infinity } if (m.expect) expect = m.expect })
      setInterval(() => {
        if (r.received.length < expect) return
        const got = r.received.slice(0, expect)
        process.send({ arrivals: { count: got.length, first: got[0].arrivedAt, last: got[got.length - 1].arrivedAt, paths: new Set(got.map((g) => g.path)).size } })
        expect = Infinity
      }, 1)
      process.send({ url: r.url })`
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      env: { ...process.env, BENCH_CA: JSON.stringify(ca) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    const url = await new Promise<string>((resolve) => child.once('message', (m: any) => resolve(m.url)))
    return new ReceiverChild(child, url)
  }
  /** Resolves when `count` requests have arrived since the last reset. */
  arrivals(count: number): Promise<Arrivals> {
    this.child.send({ reset: true })
    this.child.send({ expect: count })
    return new Promise((resolve) => this.waiters.push(resolve))
  }
}

// ---- baselines: bare node:https ------------------------------------------------------------------

function post(agent: Agent, url: URL, body: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        method: 'POST',
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        agent,
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
}

function signedBody(i: number, secret: string): { body: string; headers: Record<string, string> } {
  const sentAt = new Date()
  const body = JSON.stringify({
    id: `evt_bench${i}`,
    type: 'webhook.ping',
    created_at: sentAt.toISOString(),
    sent_at: sentAt.toISOString(),
    attempt: 1,
    tenant_id: 'ten_bench',
    data: { webhook_id: 'wh_bench' },
  })
  return {
    body,
    headers: {
      'X-Service-Event': 'webhook.ping',
      'X-Service-Delivery': `dlv_bench${i}`,
      ...signDelivery({ secret, messageId: `evt_bench${i}`, sentAt, body }),
    },
  }
}

// ---- helpers ---------------------------------------------------------------------------------------

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[sorted.length >> 1]
}

const pendingCount = query<[], { n: number }>("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'PENDING'")
const createChangeTable = query<[]>('CREATE TEMP TABLE bench_change (id INTEGER PRIMARY KEY, note TEXT)')
const change = query<[string]>('INSERT INTO bench_change (note) VALUES (?)')

async function main(): Promise<void> {
  const ca = makeTestCa('bench')
  const receiver = await ReceiverChild.start(ca)
  const app = await openApp(
    serveConfig({ 'data-dir': join(tempDir('bulwark-bench-wh'), 'data'), 'webhook-allow-cidr': ['127.0.0.0/8'], 'webhook-ca-file': ca.caFile }),
  )
  const { store } = app
  const tenant = await store.write((tx) => createTenant(tx, { slug: 'bench', plan: 'EXECUTE' }))
  const now = new Date()
  const results: Record<string, string> = {}

  // 1. Throughput, in alternating rounds: N pings queued for one endpoint, then the sender starts
  //    (and stops once they are in); then the bare client posts N signed bodies one at a time.
  const one = await store.write((tx) => createWebhook(tx, tenant.id, { url: `${receiver.url}/one`, events: ['webhook.ping'], description: null }, now))
  const sender = app.services.find((s) => s.name === 'webhook sender')!
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: [readFileSync(ca.caFile, 'utf8')] })
  const target = new URL(`${receiver.url}/baseline`)
  const senderRates: number[] = []
  const baselineRates: number[] = []
  const senderCpu: number[] = []
  const baselineCpu: number[] = []
  const cpuMicros = (since: NodeJS.CpuUsage) => {
    const used = process.cpuUsage(since)
    return used.user + used.system
  }
  let leftPending = 0
  for (let round = 0; round < ROUNDS; round++) {
    for (let done = 0; done < N; done += 1000) {
      await store.write(async (tx) => {
        for (let i = done; i < Math.min(N, done + 1000); i++) await recordEvent(tx, tenant.id, 'webhook.ping', { webhook_id: one.webhook.id }, new Date())
      })
    }
    const arrived = receiver.arrivals(N)
    const started = Date.now()
    const cpuStart = process.cpuUsage()
    const stopSender = sender.start({ dataDir: '', store: app.store })
    const got = await arrived
    senderCpu.push(cpuMicros(cpuStart) / N)
    senderRates.push(N / ((got.last - started) / 1000))
    await stopSender()
    leftPending += (await store.read.get(pendingCount, []))!.n

    const arrivedBare = receiver.arrivals(N)
    const baselineStart = Date.now()
    const baselineCpuStart = process.cpuUsage()
    for (let i = 0; i < N; i++) {
      const { body, headers } = signedBody(i, one.secret)
      await post(agent, target, body, headers)
    }
    baselineRates.push(N / (((await arrivedBare).last - baselineStart) / 1000))
    baselineCpu.push(cpuMicros(baselineCpuStart) / N)
  }
  agent.destroy()
  const senderRate = median(senderRates)
  const baselineRate = median(baselineRates)
  results['CPU per delivery in the sending process (µs, median of rounds)'] =
    `${median(senderCpu).toFixed(0)} (bare node:https client: ${median(baselineCpu).toFixed(0)})`
  results['throughput, one endpoint (deliveries/s, median of rounds)'] =
    `${senderRate.toFixed(0)} [${senderRates.map((r) => r.toFixed(0)).join(', ')}] (bare node:https serial keep-alive: ${baselineRate.toFixed(0)} [${baselineRates.map((r) => r.toFixed(0)).join(', ')}], ratio ${(senderRate / baselineRate).toFixed(2)})`

  // 2. Fan-out of one event to ENDPOINTS endpoints.
  await store.write(async (tx) => {
    for (let i = 0; i < ENDPOINTS; i++)
      await createWebhook(tx, tenant.id, { url: `${receiver.url}/fan/${i}`, events: ['order.filled'], description: null }, now)
  })
  const fanOut = async () => {
    const arrivedAll = receiver.arrivals(ENDPOINTS)
    const t0 = Date.now()
    await store.write((tx) => recordEvent(tx, tenant.id, 'order.filled', { order_id: 'ord_bench' }, new Date()))
    const got = await arrivedAll
    if (got.paths !== ENDPOINTS) throw new Error(`fan-out reached ${got.paths} endpoints`)
    return got.last - t0
  }
  const stop = sender.start({ dataDir: '', store: app.store })
  const cold = await fanOut()
  const warm = await fanOut()
  const bareAgents = Array.from({ length: ENDPOINTS }, () => new Agent({ keepAlive: true, ca: [readFileSync(ca.caFile, 'utf8')] }))
  const arrivedBare = receiver.arrivals(ENDPOINTS)
  const t0 = Date.now()
  await Promise.all(
    bareAgents.map((ag, i) => {
      const { body, headers } = signedBody(i, one.secret)
      return post(ag, new URL(`${receiver.url}/bare/${i}`), body, headers)
    }),
  )
  const bare = (await arrivedBare).last - t0
  for (const ag of bareAgents) ag.destroy()
  results[`fan-out of one event to ${ENDPOINTS} endpoints (ms, event recorded -> last arrival)`] =
    `cold ${cold}, warm ${warm} (bare node:https, ${ENDPOINTS} new connections at once: ${bare})`
  await stop()

  // 3. What the outbox adds to the causing transaction (sender stopped: nothing else runs).
  // A temporary table of the writing connection: a change of its own, outside every feature's tables.
  await store.write((tx) => tx.run(createChangeTable, []))
  const time = async (fn: () => Promise<unknown>, reps = 2000): Promise<number> => {
    const samples: number[] = []
    for (let i = 0; i < reps; i++) {
      const t = process.hrtime.bigint()
      await fn()
      samples.push(Number(process.hrtime.bigint() - t) / 1e6)
    }
    return median(samples)
  }
  const { some, none, onlyOne } = await store.write(async (tx) => {
    const tenants = {
      some: await createTenant(tx, { slug: 'bench-ten', plan: 'EXECUTE' }),
      none: await createTenant(tx, { slug: 'bench-none', plan: 'EXECUTE' }),
      onlyOne: await createTenant(tx, { slug: 'bench-one', plan: 'EXECUTE' }),
    }
    for (let i = 0; i < 10; i++) await createWebhook(tx, tenants.some.id, { url: `${receiver.url}/idle/${i}`, events: ['*'], description: null }, now)
    await createWebhook(tx, tenants.onlyOne.id, { url: `${receiver.url}/idle/one`, events: ['*'], description: null }, now)
    return tenants
  })
  const data = { order_id: 'ord_x', pair: 'BTC/USDT', side: 'BUY', quantity: 0.1, status: 'FILLED' }
  const base = await time(() => store.write((tx) => tx.run(change, ['x'])))
  const eventOnly = await time(() =>
    store.write(async (tx) => {
      await tx.run(change, ['x'])
      await recordEvent(tx, none.id, 'order.filled', data, new Date())
    }),
  )
  const withOne = await time(() =>
    store.write(async (tx) => {
      await tx.run(change, ['x'])
      await recordEvent(tx, onlyOne.id, 'order.filled', data, new Date())
    }),
  )
  const withTen = await time(() =>
    store.write(async (tx) => {
      await tx.run(change, ['x'])
      await recordEvent(tx, some.id, 'order.filled', data, new Date())
    }),
  )
  results['outbox cost in the causing transaction (median ms)'] =
    `change alone ${base.toFixed(3)}; + event, no endpoint ${eventOnly.toFixed(3)}; + event and 1 delivery ${withOne.toFixed(3)} (adds ${(withOne - base).toFixed(3)}); + event and 10 deliveries ${withTen.toFixed(3)} (adds ${(withTen - base).toFixed(3)})`

  await app.close()
  receiver.child.kill()
  console.log(`webhook bench: N=${N}, endpoints=${ENDPOINTS}, node ${process.version}, ${cpus().length} cores`)
  for (const [name, value] of Object.entries(results)) console.log(`  ${name}: ${value}`)
  if (leftPending !== 0) console.log(`  note: ${leftPending} deliveries still pending after the throughput rounds`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
