// 1,000 protected LIVE positions (SPEC 13) on one `bulwark serve`, against the test venue in this
// process through the real ccxt: 84 tenants x the catalogue's 12 pairs, each position opened by a
// LIVE MARKET BUY through the API and protected by the executor (one OCO list per (tenant, pair):
// the venue's MAX_NUM_ALGO_ORDERS, 5 per symbol and account, rules out more in one tenant).
//  (a) The kill switch's answer, CANCEL_AND_PAUSE (then RESUME), on each tenant holding 12 protected
//      positions, interleaved with the same calls on tenants with a venue and no position, on the
//      same server in the same run (target: as fast; the ratio of the medians); the protections
//      stay resting (SPEC 13: the switch only reduces risk).
//  (b) Reconciliation of the 1,000 protections: the REQUEST_WEIGHT the server spends in a quiet
//      minute (the venue's own count, the X-MBX-USED-WEIGHT-1M of a ping at its end, and a break-down
//      by endpoint from the venue's request log) against Binance's 6,000 a minute per IP; how often
//      each tenant's protections are read; one protection of every tenant canceled by hand on the
//      venue, and the time until each is placed again. The venue's limit is lifted for (a) and the
//      first part of (b), so that what the server asks for is what is measured; then
//  (c) the same minute at Binance's limit (6,000 weight a minute): the 429s, and whether
//      protections canceled by hand are still placed again within the minute.
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/protection-fleet.ts [--bin dist/bulwark] [--tenants 84] [--minute 60]
import { request } from 'node:https'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startVenue, type Venue } from '../support/venue/index.ts'
import { api, BINANCE_LIMIT, breakdown, flag, makeTenants, PAIRS, percentile, PROTECT, priceEverything, sleep, weightOf } from './protection-setup.ts'
import { runAsScript, startLoggedServer, stopChild } from './script.ts'

/** The venue's own count of the weight used in its current window: the header of a ping (weight 1). */
function usedWeight(venue: Venue): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${venue.url}/api/v3/ping`, { ca: readFileSync(venue.caFile) }, (res) => {
      res.resume()
      res.on('end', () => resolve(Number(res.headers['x-mbx-used-weight-1m']) - 1))
    })
    req.on('error', reject)
    req.end()
  })
}

/** Open protective SELLs on the venue: every leg, and the (account, symbol) pairs holding two. */
async function resting(venue: Venue, accounts: Set<string>): Promise<{ legs: number; lists: Map<string, number> }> {
  const orders = (await venue.orders({ open: true })).filter((o) => o.side === 'SELL' && accounts.has(o.account))
  const lists = new Map<string, number>()
  for (const o of orders) lists.set(`${o.account} ${o.symbol}`, Number(o.orderListId))
  return { legs: orders.length, lists }
}

async function main(): Promise<void> {
  const count = Number(flag('tenants', '84'))
  const minuteMs = Number(flag('minute', '60')) * 1000
  const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-fleet-'))
  const dataDir = join(work, 'data')
  const venue = await startVenue({ weightLimit: 1e12 })
  let server: Awaited<ReturnType<typeof startLoggedServer>> | undefined
  try {
    await priceEverything(venue, work, dataDir)
    const fleet = await makeTenants(venue, dataDir, 'fleet', count)
    const bare = await makeTenants(venue, dataDir, 'bare', 4)
    const accounts = new Set(fleet.map((t) => t.slug))
    server = await startLoggedServer(
      ['--data-dir', dataDir, '--rate-limit', '1000000000', '--venue-url', venue.url, '--ca-file', venue.caFile],
      join(work, 'serve.log'),
      flag('bin'),
    )
    const { url } = server
    for (const t of [...fleet, ...bare]) await api(url, t.token, 'PATCH', '/api/v1/risk/profile', PROTECT)
    await sleep(3000)

    const killSwitch = async (token: string, action: string) => {
      const started = performance.now()
      const body = await api(url, token, 'POST', '/api/v1/risk/kill-switch', { action, pause: action !== 'RESUME' })
      return { ms: performance.now() - started, body }
    }
    // The baseline before any position exists, on the same server.
    const before: number[] = []
    for (let i = 0; i < 40; i++) {
      const t = bare[i % bare.length]
      before.push((await killSwitch(t.token, 'CANCEL_AND_PAUSE')).ms)
      await killSwitch(t.token, 'RESUME')
    }

    // 1,008 positions: LIVE MARKET BUYs through the API, 8 at a time, then every OCO list resting.
    const openStarted = performance.now()
    const entries = fleet.flatMap((t) => PAIRS.map((_, p) => [t, p] as const))
    let next = 0
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < entries.length) {
          const [t, p] = entries[next++]
          const [pair, , quantity] = PAIRS[p]
          await api(url, t.token, 'POST', '/api/v1/orders', { pair, side: 'BUY', type: 'MARKET', quantity, mode: 'LIVE' })
        }
      }),
    )
    const sentMs = performance.now() - openStarted
    const positions = entries.length
    for (;;) {
      const { lists } = await resting(venue, accounts)
      if (lists.size === positions) break
      if (performance.now() - openStarted > 240_000) throw new Error(`${lists.size} of ${positions} protections resting after 240 s`)
      await sleep(200)
    }
    const restingMs = performance.now() - openStarted
    const statuses = new Map<string, number>()
    for (const t of fleet) {
      for (const trade of await api(url, t.token, 'GET', '/api/v1/trades?status=OPEN')) {
        statuses.set(trade.protection.status, (statuses.get(trade.protection.status) ?? 0) + 1)
      }
    }
    console.log(
      `setup: ${positions} LIVE positions in ${count} tenants, sent in ${(sentMs / 1000).toFixed(1)} s, every protection resting after ${(restingMs / 1000).toFixed(1)} s`,
    )
    console.log(`       the API shows their protections as ${JSON.stringify(Object.fromEntries(statuses))}`)

    // (a) the kill switch, protected tenants and bare ones interleaved.
    for (let i = 0; i < 10; i++) await killSwitch(bare[i % bare.length].token, i % 2 ? 'RESUME' : 'CANCEL_AND_PAUSE')
    const protectedMs: number[] = []
    const bareMs: number[] = []
    for (let round = 0; round < 2; round++) {
      for (const [i, t] of fleet.entries()) {
        const b = bare[i % bare.length]
        const [first, second] = (i + round) % 2 ? [t, b] : [b, t]
        for (const who of [first, second]) {
          const { ms, body } = await killSwitch(who.token, 'CANCEL_AND_PAUSE')
          if (body.canceled_orders !== 0) throw new Error(`the switch canceled ${body.canceled_orders} orders`)
          ;(who === t ? protectedMs : bareMs).push(ms)
        }
        await killSwitch(t.token, 'RESUME')
        await killSwitch(b.token, 'RESUME')
      }
    }
    await sleep(6000) // a protection poll of every tenant since
    const after = await resting(venue, accounts)
    const p50 = (v: number[]) => percentile(v, 50)
    console.log(`(a) kill switch CANCEL_AND_PAUSE (Node ${process.versions.node}, ${flag('bin') ?? 'source via tsx'}, load ${loadavg()[0].toFixed(2)}):`)
    console.log(
      `    a tenant with 12 protected LIVE positions, ${positions} on the server: median ${p50(protectedMs).toFixed(2)} ms, p90 ${percentile(protectedMs, 90).toFixed(2)} ms over ${protectedMs.length} calls`,
    )
    console.log(
      `    a tenant with none, interleaved:                   median ${p50(bareMs).toFixed(2)} ms, p90 ${percentile(bareMs, 90).toFixed(2)} ms over ${bareMs.length} calls`,
    )
    console.log(`    the same, before any position existed:             median ${p50(before).toFixed(2)} ms over ${before.length} calls`)
    console.log(
      `    ratio of the medians, protected / none: x${(p50(protectedMs) / p50(bareMs)).toFixed(2)}; protections still resting after: ${after.lists.size} of ${positions} (${after.legs} legs)`,
    )

    // (b) a quiet minute at no limit: what the server asks of the venue.
    await venue.clearRequests()
    await venue.resetRateLimit()
    const windowStart = Date.now()
    await sleep(minuteMs)
    const used = await usedWeight(venue)
    const quiet = (await venue.requests()).filter((r) => r.at >= windowStart && r.path !== '/api/v3/ping')
    const minutes = minuteMs / 60_000
    const polls = new Map<string, number[]>()
    for (const r of quiet) {
      // The protection poll reads the account's balances (what the resting protections lock).
      if (r.method === 'GET' && r.path === '/api/v3/account') polls.set(r.apiKey!, [...(polls.get(r.apiKey!) ?? []), r.at])
    }
    const gaps = [...polls.values()].flatMap((ats) => ats.slice(1).map((at, i) => at - ats[i]))
    const weight = quiet.reduce((s, r) => s + weightOf(r), 0)
    console.log(`(b) a quiet minute with ${positions} protections in ${count} tenants (+${bare.length} without), the venue's limit lifted:`)
    console.log(
      `    REQUEST_WEIGHT used: ${Math.round(used / minutes)} a minute by the venue's count (${Math.round(weight / minutes)} from its request log), ${(used / minutes / BINANCE_LIMIT).toFixed(1)}x Binance's ${BINANCE_LIMIT} a minute per IP; ${Math.round(used / minutes / (count + bare.length))} per tenant`,
    )
    console.log(
      `    each tenant's protections looked over (its balances read) every ${(percentile(gaps, 50) / 1000).toFixed(2)} s (median; max gap ${(Math.max(...gaps) / 1000).toFixed(2)} s) by ${polls.size} tenants`,
    )
    for (const l of breakdown(quiet, minutes)) console.log(`      ${l}`)

    // One protection of every tenant canceled by hand: the time until each rests again.
    const lists = (await resting(venue, accounts)).lists
    const canceledAt = Date.now()
    const canceled: [string, string, number][] = fleet.map((t, i) => {
      const symbol = PAIRS[i % PAIRS.length][0].replace('/', '')
      return [t.slug, symbol, lists.get(`${t.slug} ${symbol}`)!]
    })
    for (const [, symbol, orderListId] of canceled) await venue.cancelOrderList({ symbol, orderListId })
    const replaced = async (limitMs: number) => {
      const until = Date.now() + limitMs
      for (;;) {
        const now = (await resting(venue, accounts)).lists
        if (canceled.every(([slug, symbol, old]) => (now.get(`${slug} ${symbol}`) ?? old) !== old) || Date.now() > until) break
        await sleep(100)
      }
      const orders = (await venue.orders({ open: true })).filter((o) => o.side === 'SELL' && accounts.has(o.account))
      return canceled.map(([slug, symbol, old]) => {
        const legs = orders.filter((o) => o.account === slug && o.symbol === symbol && Number(o.orderListId) !== old)
        return legs.length === 2 ? Math.min(...legs.map((o) => Number(o.time))) - canceledAt : Number.POSITIVE_INFINITY
      })
    }
    const again = await replaced(70_000)
    const missing = again.filter((ms) => !Number.isFinite(ms)).length
    const found = again.filter((ms) => Number.isFinite(ms))
    console.log(
      `    ${canceled.length} protections canceled by hand (one a tenant): placed again after a median ${(percentile(found, 50) / 1000).toFixed(2)} s, max ${(Math.max(...found) / 1000).toFixed(2)} s; ${missing} not within 70 s`,
    )

    // (c) the same at Binance's limit.
    await sleep(6000)
    await venue.setRateLimit({ weight: BINANCE_LIMIT, windowMs: 60_000 })
    await venue.clearRequests()
    const limitedStart = Date.now()
    await sleep(minuteMs / 2)
    const lists2 = (await resting(venue, accounts)).lists
    const canceled2At = Date.now()
    const canceled2: [string, string, number][] = fleet.slice(0, 10).map((t, i) => {
      const symbol = PAIRS[(i + 1) % PAIRS.length][0].replace('/', '')
      return [t.slug, symbol, lists2.get(`${t.slug} ${symbol}`)!]
    })
    for (const [, symbol, orderListId] of canceled2) await venue.cancelOrderList({ symbol, orderListId })
    await sleep(minuteMs / 2)
    const limited = (await venue.requests()).filter((r) => r.at >= limitedStart)
    const refused = limited.filter((r) => r.status === 429 || r.status === 418)
    const answeredPolls = new Set(limited.filter((r) => r.path === '/api/v3/account' && r.status === 200).map((r) => r.apiKey))
    const now2 = (await resting(venue, accounts)).lists
    const back = canceled2.filter(([slug, symbol, old]) => (now2.get(`${slug} ${symbol}`) ?? old) !== old).length
    const health = await (await fetch(`${url}/api/v1/health`)).json()
    console.log(`(c) a minute at Binance's limit (${BINANCE_LIMIT} weight a minute):`)
    console.log(
      `    ${limited.length} requests, ${refused.length} answered 429/418; ${answeredPolls.size} of ${count + bare.length} tenants had their protections looked over at all; /health venues ${JSON.stringify(health.venues)}`,
    )
    for (const l of breakdown(limited, minutes)) console.log(`      ${l}`)
    console.log(`    10 protections canceled by hand ${((Date.now() - canceled2At) / 1000).toFixed(0)} s ago: ${back} placed again`)
    console.log(
      `| ${p50(protectedMs).toFixed(2)} ms | ${p50(bareMs).toFixed(2)} ms | x${(p50(protectedMs) / p50(bareMs)).toFixed(2)} | ${Math.round(used / minutes)}/min | ${(percentile(found, 50) / 1000).toFixed(2)} s | ${refused.length} 429s |`,
    )
  } finally {
    if (server) await stopChild(server)
    await venue.close()
    rmSync(work, { recursive: true, force: true })
  }
}

runAsScript(import.meta.url, main)
