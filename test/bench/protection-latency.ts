// From the venue's fill to the protection resting (SPEC 13: median under 1 s, each under 3 s),
// measured on the venue's own clock: the LIVE MARKET entry's fill (its trade's time, which is the
// order's transactTime) to the placement of its OCO list (the legs' `time`), on a real `bulwark
// serve` with the real ccxt against the test venue in this process (one clock for both ends). Each
// entry opens a position in a (tenant, pair) that holds none, so each is a first placement:
//   back to back: the next entry is sent as soon as the last protection rests (tenants busy);
//   spaced (the common case): one entry every 10 s, each in a tenant of its own that did nothing
//   since the server started (its lane quiet, its kept-alive connections closed).
// Baseline, in the same run: the entry itself, from the client's send of POST /api/v1/orders to the
// venue's fill (the same way through a commit, the executor and ccxt to the venue).
// Run: PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/protection-latency.ts [--bin dist/bulwark] [--entries 15] [--spaced 15]
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { startVenue, type Venue } from '../support/venue/index.ts'
import { api, BINANCE_LIMIT, breakdown, flag, makeTenants, PAIRS, peakMinute, percentile, PROTECT, priceEverything, sleep } from './protection-setup.ts'
import { runAsScript, startLoggedServer, stopChild } from './script.ts'

interface Sample {
  /** Venue fill -> the protection's placement on the venue (venue clock). */
  protect: number
  /** Client's send of the entry -> the venue's fill (the baseline). */
  entry: number
}

/** One LIVE MARKET BUY; waits for its OCO list on the venue and reads both times there. */
async function entry(url: string, venue: Venue, slug: string, token: string, pairIndex: number): Promise<Sample> {
  const [pair, , quantity] = PAIRS[pairIndex]
  const symbol = pair.replace('/', '')
  const sentAt = Date.now()
  const order = await api(url, token, 'POST', '/api/v1/orders', { pair, side: 'BUY', type: 'MARKET', quantity, mode: 'LIVE' })
  const until = Date.now() + 15_000
  let legs: Record<string, any>[] = []
  while (legs.length < 2) {
    if (Date.now() > until) throw new Error(`no protection for ${slug} ${pair} within 15 s`)
    await sleep(10)
    legs = (await venue.orders({ account: slug, symbol, open: true })).filter((o) => o.side === 'SELL')
  }
  const [bought] = await venue.orders({ account: slug, symbol, clientOrderId: order.id })
  const fills = (await venue.trades({ account: slug, symbol })).filter((t) => t.orderId === bought.orderId)
  if (bought.status !== 'FILLED' || fills.length === 0) throw new Error(`entry ${order.id} is ${bought.status} on the venue`)
  const filledAt = Math.max(...fills.map((t) => Number(t.time)))
  const placedAt = Math.min(...legs.map((o) => Number(o.time)))
  return { protect: placedAt - filledAt, entry: filledAt - sentAt }
}

function line(name: string, samples: Sample[]): string {
  const p = samples.map((s) => s.protect)
  const e = samples.map((s) => s.entry)
  return `${name.padEnd(14)} n=${String(p.length).padStart(2)}  fill -> protection resting: median ${percentile(p, 50)} ms, p90 ${percentile(p, 90)} ms, max ${Math.max(...p)} ms   |  baseline, send -> venue fill: median ${percentile(e, 50)} ms, p90 ${percentile(e, 90)} ms, max ${Math.max(...e)} ms`
}

async function main(): Promise<void> {
  const backToBack = Number(flag('entries', '15'))
  const spacedCount = Number(flag('spaced', '15'))
  const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-protect-'))
  const dataDir = join(work, 'data')
  // The venue's limit lifted: what the run asks for is counted below (at 6,000 it refused entries).
  const venue = await startVenue({ weightLimit: 1e12 })
  let server: Awaited<ReturnType<typeof startLoggedServer>> | undefined
  try {
    await priceEverything(venue, work, dataDir)
    const busy = await makeTenants(venue, dataDir, 'busy', Math.ceil(backToBack / PAIRS.length))
    const quiet = await makeTenants(venue, dataDir, 'quiet', spacedCount)
    server = await startLoggedServer(
      ['--data-dir', dataDir, '--rate-limit', '1000000000', '--venue-url', venue.url, '--ca-file', venue.caFile],
      join(work, 'serve.log'),
      flag('bin'),
    )
    const { url } = server
    for (const t of [...busy, ...quiet]) await api(url, t.token, 'PATCH', '/api/v1/risk/profile', PROTECT)
    await sleep(3000) // the executor's first pass over every venue (sessions opened, reconciled)

    const fast: Sample[] = []
    for (let i = 0; i < backToBack; i++) {
      const t = busy[Math.floor(i / PAIRS.length)]
      fast.push(await entry(url, venue, t.slug, t.token, i % PAIRS.length))
    }
    const spaced: Sample[] = []
    for (let i = 0; i < spacedCount; i++) {
      await sleep(10_000)
      spaced.push(await entry(url, venue, quiet[i].slug, quiet[i].token, i % PAIRS.length))
    }
    const all = [...fast, ...spaced]
    const ratio =
      percentile(
        all.map((s) => s.protect),
        50,
      ) /
      percentile(
        all.map((s) => s.entry),
        50,
      )
    console.log(
      `protection placement on the venue's clock (Node ${process.versions.node}, ${flag('bin') ?? 'source via tsx'}, load ${loadavg()[0].toFixed(2)}):`,
    )
    console.log(`  ${line('back to back', fast)}`)
    console.log(`  ${line('after 10 s', spaced)}`)
    console.log(`  ${line('all', all)}`)
    console.log(`  fill -> protection / send -> fill, medians over all: x${ratio.toFixed(2)}`)
    console.log(`  every one: ${all.map((s) => s.protect).join(' ')}`)
    const over = all.filter((s) => s.protect >= 3000).length
    const requests = await venue.requests()
    const minutes = (requests.at(-1)!.at - requests[0].at) / 60_000
    console.log(
      `  the venue's REQUEST_WEIGHT over the run (${busy.length + quiet.length} tenants, ${minutes.toFixed(1)} min): peak ${peakMinute(requests)} in a minute (Binance: ${BINANCE_LIMIT} per IP)`,
    )
    for (const l of breakdown(requests, minutes)) console.log(`    ${l}`)
    console.log(
      `  target (median < 1000 ms, each < 3000 ms): ${
        percentile(
          all.map((s) => s.protect),
          50,
        ) < 1000 && over === 0
          ? 'met'
          : `MISSED (${over} over 3 s)`
      }`,
    )
  } finally {
    if (server) await stopChild(server)
    await venue.close()
    rmSync(work, { recursive: true, force: true })
  }
}

runAsScript(import.meta.url, main)
