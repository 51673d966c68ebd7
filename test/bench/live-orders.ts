// LIVE execution against the test venue (in this process, so both clocks are one), a real
// `bulwark serve` and the real ccxt:
//  (a) a LIVE order's way to the venue: from the client sending POST /api/v1/orders (which commits
//      before it answers) to the venue receiving POST /api/v3/order (target: median under 5 ms from
//      the commit), back to back and, the common case, after 10 s of quiet (--spaced N orders, 10 s
//      apart: the venue's keep-alive has closed the connection by then; target: as fast);
//  (b) the kill switch with 1,000 open LIVE orders, against the same call with 1,000 pending PAPER
//      orders in the same run (target: as fast), and the time from its answer until the venue holds
//      none of them open (target: within 2 s), with the venue's 429s counted (target: none).
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/live-orders.ts [--bin dist/bulwark] [--orders N]
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startVenue, venueKey, type Venue } from '../support/venue/index.ts'
import { bulwarkCommand, ROOT, runAsScript, startLoggedServer, stopChild } from './script.ts'

const PAIRS: [string, number][] = [
  ['BTC/USDT', 60_000],
  ['ETH/USDT', 3000],
  ['SOL/USDT', 150],
  ['BNB/USDT', 550],
  ['XRP/USDT', 0.55],
]

function flag(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}

/** A CLI command, run without blocking this process: the venue here must answer it. */
function run(args: string[], input?: string): Promise<string> {
  const [file, argv] = bulwarkCommand(args, flag('bin'))
  return new Promise((resolve, reject) => {
    const child = execFile(file, argv, { cwd: ROOT, encoding: 'utf8' }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    )
    child.stdin!.end(input ?? '')
  })
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function post(url: string, key: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const json = await res.json()
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`)
  return json
}

/** A tenant with a trading key and, when `venue` is given, its own venue account connected. */
async function tenant(slug: string, dataDir: string, venue?: Venue): Promise<string> {
  await run(['tenant', 'create', slug, '--plan', 'EXECUTE', '--max-open-trades', '10000', '--max-exposure-usd', '1000000000', '--data-dir', dataDir])
  if (venue) {
    const key = venueKey(slug, slug)
    await venue.addKey({ ...key, restrictions: { enableWithdrawals: false } })
    await venue.setBalances({ USDT: 1_000_000_000 }, slug)
    const args = ['venue', 'connect', '--tenant', slug, '--exchange', 'binance', '--api-key', key.apiKey]
    await run([...args, '--venue-url', venue.url, '--ca-file', venue.caFile, '--data-dir', dataDir], key.secret)
  }
  return (await run(['token', 'create', '--tenant', slug, '--name', 'bench', '--scopes', 'orders:write,risk:admin', '--data-dir', dataDir])).trim()
}

/** `count` resting LIMIT BUYs spread over the pairs (at most 200 open per symbol on Binance). */
async function restingOrders(url: string, key: string, count: number, mode: 'PAPER' | 'LIVE'): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const [pair, price] = PAIRS[i % PAIRS.length]
    const limit = Number((price * 0.5).toPrecision(4))
    const quantity = Number(((20 / limit) * 1.5).toPrecision(3))
    ids.push((await post(url, key, '/api/v1/orders', { pair, side: 'BUY', type: 'LIMIT', quantity, limit_price: limit, mode })).id)
  }
  return ids
}

async function main(): Promise<void> {
  const orders = Number(flag('orders', '1000'))
  const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-live-'))
  const dataDir = join(work, 'data')
  const venue = await startVenue()
  let server: Awaited<ReturnType<typeof startLoggedServer>> | undefined
  try {
    for (const [pair, price] of PAIRS) await venue.setPrice(pair, price)
    const csv = ['pair,date,open,high,low,close,volume', ...PAIRS.map(([p, c]) => `${p},2025-05-01,${c},${c},${c},${c},1000`)].join('\n')
    writeFileSync(join(work, 'prices.csv'), `${csv}\n`)
    await run(['prices', 'import', join(work, 'prices.csv'), '--data-dir', dataDir])
    const single = await tenant('bench-one', dataDir, venue)
    const live = await tenant('bench-live', dataDir, venue)
    const paper = await tenant('bench-paper', dataDir)
    server = await startLoggedServer(
      ['--data-dir', dataDir, '--rate-limit', '1000000000', '--venue-url', venue.url, '--ca-file', venue.caFile],
      join(work, 'serve.log'),
      flag('bin'),
    )
    const { url } = server

    // (a) one order at a time, each resting on the venue: back to back, then after quiet spells.
    const toVenue: number[] = []
    const afterAnswer: number[] = []
    let n = 0
    const oneOrder = async (into: { toVenue: number[]; afterAnswer: number[] } | undefined) => {
      const sentAt = Date.now()
      const order = await post(url, single, '/api/v1/orders', {
        pair: 'BTC/USDT',
        side: 'BUY',
        type: 'LIMIT',
        quantity: 0.001,
        limit_price: 30_000 + n++,
        mode: 'LIVE',
      })
      const answeredAt = Date.now()
      let received: number | undefined
      while (received === undefined) {
        received = (await venue.requests({ method: 'POST', path: '/api/v3/order' })).find((r) => r.params.newClientOrderId === order.id)?.at
        if (received === undefined) await new Promise((r) => setTimeout(r, 1))
      }
      into?.toVenue.push(received - sentAt)
      into?.afterAnswer.push(received - answeredAt)
    }
    for (let i = 0; i < 200; i++) await oneOrder(i >= 20 ? { toVenue, afterAnswer } : undefined)
    const spaced = { toVenue: [] as number[], afterAnswer: [] as number[] }
    for (let i = 0; i < Number(flag('spaced', '10')); i++) {
      await new Promise((r) => setTimeout(r, 10_000))
      await oneOrder(spaced)
    }

    // (b) the kill switch: 1,000 pending PAPER orders, then 1,000 open LIVE orders.
    await restingOrders(url, paper, orders, 'PAPER')
    const liveIds = await restingOrders(url, live, orders, 'LIVE')
    for (;;) {
      const open = (await venue.orders({ account: 'bench-live', open: true })).length
      if (open === orders) break
      await new Promise((r) => setTimeout(r, 50))
    }
    const paperStarted = performance.now()
    const paperSwitch = await post(url, paper, '/api/v1/risk/kill-switch', { action: 'CANCEL_AND_PAUSE', pause: true })
    const paperMs = performance.now() - paperStarted
    await venue.resetRateLimit()
    await venue.clearRequests()
    const liveStarted = performance.now()
    const liveSwitch = await post(url, live, '/api/v1/risk/kill-switch', { action: 'CANCEL_AND_PAUSE', pause: true })
    const liveMs = performance.now() - liveStarted
    let venueMs = 0
    for (;;) {
      const open = (await venue.orders({ account: 'bench-live', open: true })).length
      venueMs = performance.now() - liveStarted - liveMs
      if (open === 0) break
      if (venueMs > 60_000) throw new Error(`${open} LIVE orders still open on the venue after 60 s`)
      await new Promise((r) => setTimeout(r, 5))
    }
    const requests = await venue.requests()
    const limited = requests.filter((r) => r.status === 429 || r.status === 418).length
    const cancels = requests.filter((r) => r.method === 'DELETE' && r.path === '/api/v3/order').length
    if (paperSwitch.canceled_orders !== orders || liveSwitch.canceled_orders !== orders) throw new Error('the switches did not cancel every order')
    if (liveIds.length !== orders) throw new Error('not every LIVE order was placed')

    console.log(`LIVE execution against the test venue (Node ${process.versions.node}, ${flag('bin') ?? 'source via tsx'}):`)
    console.log(`  (a) POST /api/v1/orders sent -> the venue receives the order: median ${median(toVenue)} ms over ${toVenue.length} orders`)
    console.log(`      (of which after the 200 answer: median ${median(afterAnswer)} ms)`)
    console.log(
      `      after 10 s of quiet: median ${median(spaced.toVenue)} ms over ${spaced.toVenue.length} orders (after the 200: median ${median(spaced.afterAnswer)} ms, max ${Math.max(...spaced.afterAnswer)} ms)`,
    )
    console.log(`      spaced / back to back, from the 200: x${(median(spaced.afterAnswer) / Math.max(median(afterAnswer), 1)).toFixed(2)}`)
    console.log(`  (b) kill switch answer, ${orders} pending PAPER orders: ${paperMs.toFixed(1)} ms; ${orders} open LIVE orders: ${liveMs.toFixed(1)} ms`)
    console.log(`      every LIVE order canceled on the venue ${venueMs.toFixed(0)} ms after the answer; ${cancels} cancels sent, ${limited} answered 429/418`)
    console.log(
      `| ${median(toVenue)} ms | ${median(spaced.toVenue)} ms | ${paperMs.toFixed(1)} ms | ${liveMs.toFixed(1)} ms | ${venueMs.toFixed(0)} ms | ${limited} |`,
    )
  } finally {
    if (server) await stopChild(server)
    await venue.close()
    rmSync(work, { recursive: true, force: true })
  }
}

runAsScript(import.meta.url, main)
