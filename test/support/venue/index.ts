// A Binance-spot-compatible test venue: an HTTPS server on 127.0.0.1 with a test CA, serving the
// endpoints ccxt's binance class calls for spot (market data, account, orders, trades) with
// Binance's own parameter rules, signatures, errors and weights, and a control API for the tests.
// In-process: `await startVenue(options)`; as a child process (it keeps running when a test SIGKILLs
// anything else): `await startVenueChild(options)`, with the same control methods over IPC.
//
//   const venue = await startVenue({ keys: [venueKey()], balances: { USDT: 10_000 } })
//   await venue.setPrice('BTC/USDT', 65_000)
//   const exchange = await openExchange({ exchange: 'binance', venueUrl: venue.url, caFile: venue.caFile, ...venueKey() })
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { makeTestCa, type TestCa } from '../test-ca.ts'
import { Book } from './book.ts'
import { type Amount, controlApi, type KeySpec, type VenueControl } from './control.ts'
import { WeightLimiter } from './faults.ts'
import { MarketData } from './market-data.ts'
import { routes, type VenueState } from './routes.ts'
import { VenueServer } from './server.ts'
import { CATALOGUE_SYMBOLS, type SymbolSpec, units, venueSymbol } from './symbols.ts'

export type { Fault } from './faults.ts'
export type { KeySpec, OrderRef, OrderView, TradeView, VenueControl } from './control.ts'
export type { RequestRecord } from './server.ts'
export { CATALOGUE_SYMBOLS } from './symbols.ts'

export interface VenueOptions {
  ca?: TestCa
  port?: number
  /** Seeds the daily series: the same seed serves the same candles on every run. */
  seed?: number
  /** Closed daily candles served before today's forming one (default 1000). */
  historyDays?: number
  symbols?: SymbolSpec[]
  keys?: KeySpec[]
  /** Free balances of the account 'main'. */
  balances?: Record<string, Amount>
  /** REQUEST_WEIGHT per minute (Binance: 6000). */
  weightLimit?: number
  /** Commission per unit traded (default 0.001, i.e. 0.1%). */
  commissionRate?: string
  /**
   * Closes a connection idle this long without announcing it (no Keep-Alive header), as Binance's
   * servers close idle connections; left out, Node's own announced timeout.
   */
  keepAliveMs?: number
}

export type Venue = VenueControl & { url: string; port: number; caFile: string; close(): Promise<void> }
export type VenueChild = Venue & { process: ChildProcess }

/** A deterministic 64-character API key and secret for a label. */
export function venueKey(label = 'main', account = 'main'): Required<Omit<KeySpec, 'restrictions'>> {
  const hex = (what: string) => createHash('sha256').update(`${what}:${label}`).digest('hex')
  return { apiKey: hex('key'), secret: hex('secret'), account }
}

export async function startVenue(options: VenueOptions = {}): Promise<Venue> {
  const ca = options.ca ?? makeTestCa('venue')
  const clock = { offsetMs: 0 }
  const now = () => Date.now() + clock.offsetMs
  const symbols = new Map((options.symbols ?? CATALOGUE_SYMBOLS).map(venueSymbol).map((s) => [s.id, s] as const))
  const market = new MarketData(options.seed ?? 1, options.historyDays ?? 1000, now)
  const book = new Book(market, now, units(options.commissionRate ?? '0.001'))
  const limiter = new WeightLimiter(options.weightLimit ?? 6000, 60_000, now)
  const state: VenueState = { symbols, book, market, keys: new Map(), limiter, now }
  const server = new VenueServer(state, routes(state), ca, { keepAliveMs: options.keepAliveMs })
  await server.listen(options.port ?? 0)
  const control = controlApi(state, server, clock)
  for (const key of options.keys ?? []) await control.addKey(key)
  if (options.balances) await control.setBalances(options.balances)
  return { ...control, url: `https://127.0.0.1:${server.port}`, port: server.port, caFile: ca.caFile, close: () => server.close() }
}

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url))

/** The venue in a process of its own; close() ends it, `process` is there to signal it. */
export async function startVenueChild(options: VenueOptions = {}): Promise<VenueChild> {
  const ca = options.ca ?? makeTestCa('venue')
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, VENUE_OPTIONS: JSON.stringify({ ...options, ca }) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const ready = await new Promise<{ port: number; methods: string[] }>((resolve, reject) => {
    child.on('message', (m: any) => {
      if (m.ready) return resolve(m.ready)
      const call = calls.get(m.id)
      calls.delete(m.id)
      if (m.error !== undefined) call?.reject(new Error(m.error))
      else call?.resolve(m.result)
    })
    child.once('exit', (code) => reject(new Error(`test venue child exited ${code}`)))
  })
  let next = 0
  const call = (method: string, args: unknown[]) =>
    new Promise((resolve, reject) => {
      const id = next++
      calls.set(id, { resolve, reject })
      child.send({ id, method, args })
    })
  const control = Object.fromEntries(ready.methods.map((m) => [m, (...args: unknown[]) => call(m, args)])) as VenueControl
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  return { ...control, url: `https://127.0.0.1:${ready.port}`, port: ready.port, caFile: ca.caFile, process: child, close }
}
