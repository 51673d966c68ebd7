// What the gateway (SPEC 14) costs a bot: "the gateway adds at most 2 ms (median) to each
// createOrder and each cancelOrder of a bot, compared with the same ccxt calls sent straight to the
// venue, at least 30 interleaved calls in one run on one machine (one node, SQLite)".
//
// The test venue (HTTPS, its test CA) runs in this process (--venue-child: in one of its own), a
// real `bulwark serve` (a copy of the executable, SQLite) reaches it with --venue-url/--ca-file. One
// tenant has its venue account connected and a gateway key; a second venue account ('direct') is
// the baseline's. Two instances of the real ccxt `binance` class with the same options (spot,
// enableRateLimit false, markets loaded beforehand): the bot's, every api.binance.com URL moved
// under http://HOST:PORT/gateway/binance (as test/gateway/fixture.ts aims it), and the direct one,
// aimed at the venue with the venue's key. After a warm-up (--warm-up, default 300 LIMIT rounds and
// a third as many MARKET rounds: V8 compiles a function with its optimizing tiers only after some
// hundreds of calls, so a server that has run a while, and the bench's own ccxt on the direct side,
// run compiled code; --warm-up 5 measures a server just started), rounds alternate which side goes first:
//  (a) LIMIT: createOrder of a resting LIMIT BUY, then its cancelOrder (--rounds, default 40);
//  (b) MARKET: createOrder of a MARKET BUY, then a MARKET SELL of it to flatten (--market-rounds, 30);
//  (c) the common case, each call after --quiet-ms (default 4000) of quiet: a LIMIT BUY and its
//      cancel (--quiet-rounds, default 5). By then the direct call's connection is gone (the test
//      venue, a Node server, announces 5 s of keep-alive, and undici lets go a second before): it
//      opens a new TLS connection. The gateway keeps the bot's for 65 s, and its own to the venue
//      warm (src/trading/live/warmth.ts);
//  (d) a bot quiet for over 10 minutes: the LIMIT BUY once the tenant's venue mark is past its 60 s
//      (aged in the database, not waited for), so the gateway reads the venue's price first
//      (--stale-rounds, default 10).
// Printed per call: medians and p90 of each side, the gateway's time in the server (its request
// log's duration_ms) and outside it (the client's total less that: ccxt and the hop to the
// gateway), the difference gateway - direct of the medians (the figure) and the median of the
// per-round differences; then the venue's requests during each gateway call (the server's: the
// order, a fill read, a price read) and, for the LIMIT BUY, when the venue received it from the
// client's send (1 ms clock, one machine's).
// Run (about 1.5 minutes): PATH=$PWD/node_modules/.bin:$PATH tsx test/bench/gateway.ts [--bin dist/bulwark]
//   [--warm-up 300] [--rounds 40] [--market-rounds 30] [--quiet-rounds 5] [--quiet-ms 4000] [--stale-rounds 10]
//   [--runs 1] [--venue-child] [--keep] [--against OTHER_BIN]
// --against runs a second gateway of another build (its own server and tenant) in the same rounds,
// a third side beside the gateway and the direct calls: the A/B of two builds, with the machine's
// drift shared (it moves a whole run by a third here).
// --bin may be a script that runs a source tree (node --import tsx DIR/src/main.ts "$@"), to profile.
import { execFile, execFileSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createSecureContext } from 'node:tls'
import ccxt, { type Exchange } from 'ccxt'
import { openTestDatabase } from '../support/database.ts'
import { startVenue, startVenueChild, type Venue, venueKey } from '../support/venue/index.ts'
import { bulwarkCommand, ROOT, runAsScript, startLoggedServer, stopChild } from './script.ts'

const PAIR = 'BTC/USDT'
const PRICE = 60_000
const SLUG = 'bench-gw'
/** Every spot and sapi URL of ccxt's binance class is on this host. */
const BINANCE = 'https://api.binance.com'

function flag(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const sorted = (values: number[]) => [...values].sort((a, b) => a - b)
const median = (values: number[]) => {
  const s = sorted(values)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}
const p90 = (values: number[]) => sorted(values)[Math.min(values.length - 1, Math.ceil(values.length * 0.9) - 1)]
const ms = (n: number) => n.toFixed(2).padStart(7)

/** A CLI command, run without blocking this process: the venue here must answer it. */
function run(bin: string, args: string[], input?: string): Promise<string> {
  const [file, argv] = bulwarkCommand(args, bin)
  return new Promise((resolve, reject) => {
    const child = execFile(file, argv, { cwd: ROOT, encoding: 'utf8' }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    )
    child.stdin!.end(input ?? '')
  })
}

/** ccxt's binance as a spot bot sets it up, its API URLs moved to `origin` (+ `prefix`), paths kept. */
async function binance(credentials: { apiKey: string; secret: string }, origin: string, prefix: string, caFile?: string): Promise<Exchange> {
  const exchange = new ccxt.binance({
    ...credentials,
    enableRateLimit: false,
    // fetchCurrencies: the test venue has no sapi capital/config/getall; neither side's orders read currencies.
    options: { defaultType: 'spot', fetchMarkets: ['spot'], fetchCurrencies: false },
  })
  const api = exchange.urls.api as Record<string, string>
  for (const [name, url] of Object.entries(api)) if (url.startsWith(`${BINANCE}/`)) api[name] = `${origin}${prefix}${url.slice(BINANCE.length)}`
  if (caFile) {
    // The venue's test CA, in a TLS context built once (as Bulwark's venue sessions do).
    await exchange.loadFetchImplementation()
    const options = exchange.getDispatcherOptions(true)
    const secureContext = createSecureContext({ ca: readFileSync(caFile, 'utf8') })
    const previous = exchange.fetchDispatcher
    exchange.fetchDispatcher = new exchange.undiciModule.Agent({ ...options, connect: { ...options.connect, secureContext } })
    await previous?.close()
  }
  await exchange.loadMarkets()
  return exchange
}

/** The gateway under test, the venue straight, and (--against) another build's gateway. */
type Side = 'gateway' | 'direct' | 'baseline'
type Call = 'limit create' | 'limit cancel' | 'market buy' | 'market sell' | 'quiet create' | 'quiet cancel' | 'stale create'
const CALLS: Call[] = ['limit create', 'limit cancel', 'market buy', 'market sell', 'quiet create', 'quiet cancel', 'stale create']

interface Sample {
  call: Call
  side: Side
  round: number
  ms: number
  /** The venue's requests during the call ('POST /api/v3/order', ...): on the gateway side, the server's. */
  venueCalls: string[]
  /** A venue request of the call came on a connection the venue had not seen before (a new TLS handshake). */
  newConnection: boolean
  /** Date.now() at the client's send, and the venue's receipt of the order (LIMIT creates). */
  sentAt: number
  atVenue?: number
  answeredAt: number
  /** The gateway's X-Request-Id, and the server's duration_ms of that request (its request log). */
  requestId?: string
  inServer?: number
}

interface Options {
  rounds: number
  marketRounds: number
  quietRounds: number
  quietMs: number
  staleRounds: number
  /** Uncounted LIMIT rounds before the counted ones, then a third as many MARKET rounds, on a key of their own. */
  warmUp: number
  /** The test venue in a process of its own (default: in this one). */
  venueChild: boolean
}

/** A `bulwark serve` of `bin` with its own data dir and tenant (`slug`), its venue account connected, and a gateway key. */
async function startGatewaySide(bin: string, slug: string, work: string, venue: Venue) {
  const dataDir = join(work, slug)
  writeFileSync(join(work, 'prices.csv'), `pair,date,open,high,low,close,volume\n${PAIR},2025-05-01,${PRICE},${PRICE},${PRICE},${PRICE},1000\n`)
  await run(bin, ['prices', 'import', join(work, 'prices.csv'), '--data-dir', dataDir])
  await run(bin, ['tenant', 'create', slug, '--plan', 'EXECUTE', '--max-open-trades', '10000', '--max-exposure-usd', '1000000000', '--data-dir', dataDir])
  const tenantKey = venueKey(slug, slug)
  await venue.addKey({ ...tenantKey, restrictions: { enableWithdrawals: false } })
  await venue.setBalances({ USDT: 1_000_000_000 }, slug)
  const connect = ['venue', 'connect', '--tenant', slug, '--exchange', 'binance', '--api-key', tenantKey.apiKey, '--venue-url', venue.url]
  await run(bin, [...connect, '--ca-file', venue.caFile, '--data-dir', dataDir], tenantKey.secret)
  const newKey = async (name: string) => {
    const created = await run(bin, ['gateway', 'key', 'create', '--tenant', slug, '--name', name, '--data-dir', dataDir])
    return { apiKey: /^api_key: (\S+)$/m.exec(created)![1], secret: /^api_secret: (\S+)$/m.exec(created)![1] }
  }
  // The warm-up's calls go through a key of their own: a key may make 1200 a minute (SPEC 14).
  const [gatewayKey, warmUpKey] = [await newKey('bench bot'), await newKey('warm-up bot')]
  const log = join(work, `${slug}.log`)
  const server = await startLoggedServer(['--data-dir', dataDir, '--rate-limit', '1000000000', '--venue-url', venue.url, '--ca-file', venue.caFile], log, bin)
  const client = await binance(gatewayKey, server.url, '/gateway/binance')
  return { dataDir, log, server, tenantKey, client, warmUpClient: await binance(warmUpKey, server.url, '/gateway/binance') }
}

async function oneRun(bin: string, options: Options, against?: string): Promise<Sample[]> {
  const work = mkdtempSync(join(tmpdir(), 'bulwark-bench-gateway-'))
  // No commission: a MARKET BUY's quantity is what the SELL after it sells, to the last unit.
  const venueOptions = { commissionRate: '0', weightLimit: 1_000_000_000 }
  const venue: Venue = options.venueChild ? await startVenueChild(venueOptions) : await startVenue(venueOptions)
  const gateways: Partial<Record<Side, Awaited<ReturnType<typeof startGatewaySide>>>> = {}
  const exchanges: Exchange[] = []
  try {
    await venue.setPrice(PAIR, PRICE)
    gateways.gateway = await startGatewaySide(bin, SLUG, work, venue)
    if (against) gateways.baseline = await startGatewaySide(against, `${SLUG}-baseline`, work, venue)
    const directKey = venueKey('direct', 'direct')
    await venue.addKey(directKey)
    await venue.setBalances({ USDT: 1_000_000_000 }, 'direct')
    const clients = { direct: await binance(directKey, venue.url, '', venue.caFile) } as Record<Side, Exchange>
    const warmUpClients = { ...clients }
    for (const [side, g] of Object.entries(gateways)) {
      clients[side as Side] = g.client
      warmUpClients[side as Side] = g.warmUpClient
    }
    exchanges.push(...Object.values(clients), ...Object.values(gateways).map((g) => g.warmUpClient))
    const sides: Side[] = against ? ['gateway', 'direct', 'baseline'] : ['gateway', 'direct']

    const samples: Sample[] = []
    let price = PRICE / 2
    let lastConnection = 0
    /** One timed call, with what the venue received meanwhile from its side (the server's, for the gateway). */
    const timed = async <T>(call: Call, side: Side, round: number, work: () => Promise<T>): Promise<T> => {
      await venue.clearRequests()
      const sentAt = Date.now()
      const started = performance.now()
      const result = await work()
      const elapsed = performance.now() - started
      const answeredAt = Date.now()
      const headers = (clients[side].last_response_headers ?? {}) as Record<string, string>
      const requestId = side === 'direct' ? undefined : (headers['x-request-id'] ?? headers['X-Request-Id'])
      // The server's public reads (a price) carry no key; the bench's own calls all carry the direct key.
      const mine = side === 'direct' ? [directKey.apiKey] : [gateways[side]!.tenantKey.apiKey, undefined]
      const all = await venue.requests()
      const during = all.filter((r) => mine.includes(r.apiKey))
      const newConnection = during.some((r) => r.connection > lastConnection)
      lastConnection = Math.max(lastConnection, ...all.map((r) => r.connection))
      const order = during.find((r) => r.method === 'POST' && r.path === '/api/v3/order')
      if (round >= 0) {
        samples.push({
          call,
          side,
          round,
          ms: elapsed,
          venueCalls: during.map((r) => `${r.method} ${r.path}`),
          newConnection,
          sentAt,
          atVenue: order?.at,
          answeredAt,
          requestId,
        })
      }
      return result
    }
    const limitRound = async (side: Side, round: number, create: Call, cancel: Call, quietMs = 0, exchange = clients[side]) => {
      if (quietMs) await sleep(quietMs)
      const placed = await timed(create, side, round, () => exchange.createOrder(PAIR, 'limit', 'buy', 0.001, price++))
      if (placed.status !== 'open') throw new Error(`${side}: the LIMIT BUY is ${placed.status}, not resting`)
      if (quietMs) await sleep(quietMs)
      const canceled = await timed(cancel, side, round, () => exchange.cancelOrder(placed.id!, PAIR))
      if (canceled.status !== 'canceled') throw new Error(`${side}: the cancel answered ${canceled.status}`)
    }
    const marketRound = async (side: Side, round: number, exchange = clients[side]) => {
      const bought = await timed('market buy', side, round, () => exchange.createOrder(PAIR, 'market', 'buy', 0.001))
      if (bought.status !== 'closed' || bought.filled !== 0.001) throw new Error(`${side}: the MARKET BUY is ${bought.status}, filled ${bought.filled}`)
      const sold = await timed('market sell', side, round, () => exchange.createOrder(PAIR, 'market', 'sell', 0.001))
      if (sold.status !== 'closed') throw new Error(`${side}: the MARKET SELL is ${sold.status}`)
    }
    // Which side goes first turns with each round.
    const order = (round: number): Side[] => sides.map((_, k) => sides[(round + k) % sides.length])

    // Warm-up (not counted): JIT, the venue session, the first price read, on the warm-up key; then
    // the counted clients' own connections, in five LIMIT and three MARKET rounds.
    const warmUp = (i: number, count: number) => (i < count ? warmUpClients : clients)
    for (let i = 0; i < options.warmUp + 5; i++) {
      for (const side of order(i)) await limitRound(side, -1, 'limit create', 'limit cancel', 0, warmUp(i, options.warmUp)[side])
    }
    const marketWarmUp = Math.ceil(options.warmUp / 3)
    for (let i = 0; i < marketWarmUp + 3; i++) for (const side of order(i)) await marketRound(side, -1, warmUp(i, marketWarmUp)[side])

    for (let i = 0; i < options.rounds; i++) for (const side of order(i)) await limitRound(side, i, 'limit create', 'limit cancel')
    for (let i = 0; i < options.marketRounds; i++) for (const side of order(i)) await marketRound(side, i)
    for (let i = 0; i < options.quietRounds; i++) for (const side of order(i)) await limitRound(side, i, 'quiet create', 'quiet cancel', options.quietMs)
    // A bot quiet for over a minute: the tenant's venue price (its mark) is older than the 60 s an
    // order may be checked at (SPEC 10), so the order first reads the venue's price. Aged here in
    // the database rather than waited for; the direct side has nothing to age.
    const databases = new Map<Side, Awaited<ReturnType<typeof openTestDatabase>>>()
    try {
      for (const [side, gateway] of Object.entries(gateways)) databases.set(side as Side, await openTestDatabase(gateway.dataDir))
      for (let i = 0; i < options.staleRounds; i++) {
        for (const side of order(i)) {
          await databases.get(side)?.run('UPDATE venue_marks SET marked_at = ?', [new Date(Date.now() - 120_000).toISOString()])
          const placed = await timed('stale create', side, i, () => clients[side].createOrder(PAIR, 'limit', 'buy', 0.001, price++))
          await clients[side].cancelOrder(placed.id!, PAIR)
        }
      }
    } finally {
      for (const db of databases.values()) await db.close()
    }

    // The server's own time of each gateway call, from its request log (written in batches: stop first).
    const durations = new Map<string, number>()
    for (const gateway of Object.values(gateways)) {
      await stopChild(gateway.server)
      for (const line of readFileSync(gateway.log, 'utf8').split('\n')) {
        if (!line.startsWith('{')) continue
        const entry = JSON.parse(line) as { request_id?: string; duration_ms?: number }
        if (entry.request_id && entry.duration_ms !== undefined) durations.set(entry.request_id, entry.duration_ms)
      }
    }
    for (const s of samples) if (s.requestId) s.inServer = durations.get(s.requestId)
    return samples
  } finally {
    for (const gateway of Object.values(gateways)) await stopChild(gateway.server)
    for (const exchange of exchanges) await exchange.close()
    await venue.close()
    if (process.argv.includes('--keep')) console.log(`  kept ${work} (the data dir and serve.log)`)
    else rmSync(work, { recursive: true, force: true })
  }
}

function report(samples: Sample[], run: number): Record<Call, number> {
  const of = (call: Call, side: Side) => samples.filter((s) => s.call === call && s.side === side)
  const figures = {} as Record<Call, number>
  console.log(
    `run ${run}: load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )
  console.log('  call           n | direct med    p90 | gateway med    p90 | in server  outside | gw-direct med  paired med')
  const row = (call: Call, side: Side, label: string) => {
    const direct = of(call, 'direct')
    const gateway = of(call, side)
    if (!direct.length || !gateway.length) return
    const paired = gateway.map((g) => g.ms - direct.find((d) => d.round === g.round)!.ms)
    const inServer = gateway.flatMap((s) => (s.inServer === undefined ? [] : [s.inServer]))
    // The client's time outside the server's request handling: ccxt, the HTTP hop to the gateway.
    const outside = gateway.flatMap((s) => (s.inServer === undefined ? [] : [s.ms - s.inServer]))
    const figure = median(gateway.map((s) => s.ms)) - median(direct.map((s) => s.ms))
    if (side === 'gateway') figures[call] = figure
    console.log(
      `  ${label.padEnd(13)}${String(gateway.length).padStart(3)} | ${ms(median(direct.map((s) => s.ms)))} ${ms(p90(direct.map((s) => s.ms)))} |` +
        `  ${ms(median(gateway.map((s) => s.ms)))} ${ms(p90(gateway.map((s) => s.ms)))} |   ${inServer.length ? `${ms(median(inServer))}  ${ms(median(outside))}` : '      -        -'} |` +
        `     ${ms(figure)}     ${ms(median(paired))}`,
    )
  }
  for (const call of CALLS) {
    row(call, 'gateway', call)
    row(call, 'baseline', '  (baseline)')
  }
  const baseline = CALLS.filter((call) => of(call, 'baseline').length > 0)
  if (baseline.length) {
    console.log('  this build against the baseline build (--against), the same rounds: median of the per-round differences, and the ratio of the medians:')
    for (const call of baseline) {
      const mine = of(call, 'gateway')
      const theirs = of(call, 'baseline')
      const diffs = mine.map((g) => g.ms - theirs.find((b) => b.round === g.round)!.ms)
      const ratio = median(mine.map((s) => s.ms)) / median(theirs.map((s) => s.ms))
      console.log(`    ${call.padEnd(13)} ${ms(median(diffs))} ms, x${ratio.toFixed(3)}`)
    }
  }
  console.log("  the venue's requests per gateway call (the server's: with the tenant's key, or public), over the rounds:")
  for (const call of CALLS) {
    const counts = new Map<string, number>()
    for (const s of of(call, 'gateway')) for (const c of s.venueCalls) counts.set(c, (counts.get(c) ?? 0) + 1)
    const n = of(call, 'gateway').length
    const fresh = (side: Side) => of(call, side).filter((s) => s.newConnection).length
    if (n) {
      console.log(
        `    ${call.padEnd(13)} ${[...counts].map(([c, k]) => `${c} x${(k / n).toFixed(2)}`).join(', ') || 'none'}; on a new venue connection: gateway ${fresh('gateway')}/${n}, direct ${fresh('direct')}/${of(call, 'direct').length}`,
      )
    }
  }
  const reached = (side: Side) => of('limit create', side).filter((s) => s.atVenue !== undefined)
  for (const side of ['direct', 'gateway'] as Side[]) {
    const s = reached(side)
    if (!s.length) continue
    console.log(
      `  limit create, ${side.padEnd(7)}: send -> venue receives the order: median ${median(s.map((x) => x.atVenue! - x.sentAt))} ms;` +
        ` venue receives -> ccxt has the answer: median ${median(s.map((x) => x.answeredAt - x.atVenue!))} ms (1 ms clock)`,
    )
  }
  return figures
}

async function main(): Promise<void> {
  const given = flag('bin', join(ROOT, 'dist/bulwark'))!
  const copyDir = mkdtempSync(join(tmpdir(), 'bulwark-bench-gateway-bin-'))
  // Others rebuild dist/bulwark while this runs: run a copy (a script that runs a source tree as is).
  const copyOf = async (path: string, name: string): Promise<string> => {
    if (readFileSync(path).subarray(0, 2).toString() === '#!') return resolve(path)
    const copy = join(copyDir, name)
    // A copy taken while the build writes the file is no executable: copy again until one answers.
    for (let attempt = 1; ; attempt++) {
      copyFileSync(path, copy)
      try {
        execFileSync(copy, ['--version'], { stdio: 'ignore' })
        return copy
      } catch (error) {
        if (attempt === 30) throw error
        await sleep(2000)
      }
    }
  }
  const bin = await copyOf(given, 'bulwark')
  const isScript = bin === resolve(given)
  const options: Options = {
    rounds: Number(flag('rounds', '40')),
    marketRounds: Number(flag('market-rounds', '30')),
    quietRounds: Number(flag('quiet-rounds', '5')),
    quietMs: Number(flag('quiet-ms', '4000')),
    staleRounds: Number(flag('stale-rounds', '10')),
    warmUp: Number(flag('warm-up', '300')),
    venueChild: process.argv.includes('--venue-child'),
  }
  const runs = Number(flag('runs', '1'))
  const againstGiven = flag('against')
  const against = againstGiven === undefined ? undefined : await copyOf(againstGiven, 'baseline')
  console.log(
    `the gateway's cost (SPEC 14: at most +2 ms median per createOrder and cancelOrder), ${given}${isScript ? '' : ' (copied)'}, Node ${process.versions.node}, ccxt ${ccxt.version}`,
  )
  console.log(
    `  ${options.rounds} LIMIT rounds, ${options.marketRounds} MARKET rounds, ${options.quietRounds} quiet rounds (${options.quietMs} ms before each call), ${options.staleRounds} stale-mark rounds, after ${options.warmUp} LIMIT and ${Math.ceil(options.warmUp / 3)} MARKET rounds of warm-up (and 5 and 3 more on the counted clients); the venue ${options.venueChild ? 'in a process of its own' : 'in this process'}; times in ms`,
  )
  const all: Record<Call, number>[] = []
  try {
    for (let r = 1; r <= runs; r++) all.push(report(await oneRun(bin, options, against), r))
  } finally {
    rmSync(copyDir, { recursive: true, force: true })
  }
  if (runs > 1) {
    console.log('gateway - direct (medians) over the runs:')
    for (const call of CALLS) {
      const values = all.map((f) => f[call]).filter((v) => v !== undefined)
      if (values.length) console.log(`  ${call.padEnd(13)} ${values.map((v) => v.toFixed(2)).join(', ')}  (median ${median(values).toFixed(2)})`)
    }
  }
}

runAsScript(import.meta.url, main)
