// What the protection benchmarks (SPEC 13) share: the catalogue's 12 pairs at the test venue's
// start prices, Bulwark's closes set to the same, tenants made in bulk (./protection-tenants.ts),
// LIVE MARKET entries of about 50 USD, and the API calls.
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CATALOGUE_SYMBOLS, type RequestRecord, type Venue, venueKey } from '../support/venue/index.ts'
import { routes, type VenueState } from '../support/venue/routes.ts'
import { bulwarkCommand, ROOT } from './script.ts'

export function flag(name: string, fallback?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}

/** [pair, price, quantity of about 50 USD on the market's step] for each of the catalogue's pairs. */
export const PAIRS: [string, number, number][] = CATALOGUE_SYMBOLS.map((s) => {
  const step = Number(s.stepSize)
  const quantity = Number((Math.ceil(50 / s.startPrice / step) * step).toFixed(8))
  return [`${s.base}/${s.quote}`, s.startPrice, quantity]
})

/** A command of `bulwark` (or a script), run without blocking this process: the venue here must answer it. */
export function runAsync(file: string, argv: string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, argv, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
    )
    child.stdin!.end(input)
  })
}

/** The venue's prices and Bulwark's last closes (a CSV import), the same for every pair. */
export async function priceEverything(venue: Venue, work: string, dataDir: string): Promise<void> {
  for (const [pair, price] of PAIRS) await venue.setPrice(pair, price)
  const csv = ['pair,date,open,high,low,close,volume', ...PAIRS.map(([p, c]) => `${p},2025-05-01,${c},${c},${c},${c},1000`)].join('\n')
  writeFileSync(join(work, 'prices.csv'), `${csv}\n`)
  const [file, argv] = bulwarkCommand(['prices', 'import', join(work, 'prices.csv'), '--data-dir', dataDir], flag('bin'))
  await runAsync(file, argv)
}

/** `count` tenants with venue accounts holding 1,000,000 USDT; run while the server is stopped. */
export async function makeTenants(venue: Venue, dataDir: string, prefix: string, count: number): Promise<{ slug: string; token: string }[]> {
  for (let i = 0; i < count; i++) {
    const slug = `${prefix}-${i}`
    await venue.addKey({ ...venueKey(slug, slug), restrictions: { enableWithdrawals: false } })
    await venue.setBalances({ USDT: 1_000_000 }, slug)
  }
  const script = join(ROOT, 'test/bench/protection-tenants.ts')
  const out = await runAsync(process.execPath, ['--import', 'tsx', script, '--data-dir', dataDir, '--prefix', prefix, '--count', String(count)])
  return JSON.parse(out.trim().split('\n').pop()!)
}

export async function api(url: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const json = await res.json()
  if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`)
  return json
}

/** A stop 5% under the entry and a take-profit 10% over it: one OCO list per (tenant, pair) on the test venue. */
export const PROTECT = { venue_stop_loss_pct: 5, venue_take_profit_pct: 10 }

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Binance spot's REQUEST_WEIGHT a minute, per IP. */
export const BINANCE_LIMIT = 6000
const ROUTES = routes({} as VenueState) // only the weights are read

/** A request's weight as the test venue charges it (Binance's documented weights). */
export function weightOf(r: RequestRecord): number {
  const route = ROUTES[`${r.method} ${r.path}`]
  if (!route) return 0
  return typeof route.weight === 'function' ? route.weight(r.params) : route.weight
}

/** Requests and weight a minute by endpoint, heaviest first; with how many the venue refused (429/418). */
export function breakdown(requests: RequestRecord[], minutes: number): string[] {
  const by = new Map<string, { n: number; weight: number; refused: number }>()
  for (const r of requests) {
    const scope = r.params.symbol ? ' (symbol)' : r.params.symbols ? ' (symbols)' : ' (no symbol)'
    const key = `${r.method} ${r.path}${r.path === '/api/v3/openOrders' || r.path.startsWith('/api/v3/ticker') ? scope : ''}`
    const entry = by.get(key) ?? { n: 0, weight: 0, refused: 0 }
    entry.n++
    entry.weight += weightOf(r)
    if (r.status === 429 || r.status === 418) entry.refused++
    by.set(key, entry)
  }
  const a = (n: number, width: number) => String(Math.round(n / minutes)).padStart(width)
  return [...by]
    .sort((x, y) => y[1].weight - x[1].weight)
    .map(
      ([key, { n, weight, refused }]) => `${key.padEnd(40)} ${a(n, 6)} requests ${a(weight, 7)} weight a minute${refused ? ` (${a(refused, 0)} refused)` : ''}`,
    )
}

/** The most weight any 60 s window of these requests (oldest first) used. */
export function peakMinute(requests: RequestRecord[]): number {
  let peak = 0
  let sum = 0
  let from = 0
  for (const r of requests) {
    sum += weightOf(r)
    while (requests[from].at <= r.at - 60_000) sum -= weightOf(requests[from++])
    peak = Math.max(peak, sum)
  }
  return peak
}
