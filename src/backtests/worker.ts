// The backtest worker thread's entry: takes a backtest (one message), reads its candles over its
// own connection and computes it (./compute.ts), then answers with the stored texts (result,
// actions, hash) or why it failed. On SQLite the connection is read-only to the data dir's file and
// the reads are synchronous; on PostgreSQL it is a pg client of its own (./candles-postgres.ts,
// loaded only there), each pair read while the one before it is computed. The main thread only
// claims the job and writes the result: the event loop never reads a candle. From source this file
// runs as it is (tsx's loader is inherited by workers); the executable carries it as its own
// bundle, the SEA asset backtest-worker.cjs, with better-sqlite3's JS and pg, and loads the addon
// from the file the main thread extracted (workerData.nativeAddon).
import Database from 'better-sqlite3'
import { constants, setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { addonFromFile } from '../store/native.ts'
import { STRATEGIES } from '../models/strategies.ts'
import { calendar, candleReader, type ReadCandles } from './candles.ts'
import { BacktestComputation } from './compute.ts'
import type { Outcome } from './backtests.ts'
import type { WorkerReply, WorkerRequest, WorkerSetup } from './protocol.ts'
import type { Client } from 'pg'
import type { ReadCandlesAsync } from './candles-postgres.ts'

// A backtest gives way to requests: on Linux the nice value belongs to the thread (setpriority(2),
// NOTES), so this lowers this thread only, and the event loop never waits behind it for a core.
// Elsewhere it would lower the whole process, so it is left alone there.
if (process.platform === 'linux') setPriority(constants.priority.PRIORITY_LOW)

const setup = (workerData ?? { nativeAddon: undefined }) as WorkerSetup
let nativeBinding: object | undefined

/** Kept open between backtests: its statements are prepared once per worker. */
let connection: { file: string; db: Database.Database; read: ReadCandles } | undefined

function open(file: string): NonNullable<typeof connection> {
  if (connection?.file === file) return connection
  connection?.db.close()
  if (setup.nativeAddon) nativeBinding ??= addonFromFile(setup.nativeAddon)
  // Read-only over WAL: it never blocks serve's writes, nor they its reads; the busy wait is the
  // main connection's, for the rare moments SQLite makes a reader wait (a WAL being recovered).
  const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 5000, nativeBinding: nativeBinding as never })
  connection = { file, db, read: candleReader(db) }
  return connection
}

/** Kept open between backtests on PostgreSQL: dropped when a backtest fails, opened again by the next. */
let client: { url: string; pg: Client; read: ReadCandlesAsync } | undefined

async function connect(url: string): Promise<NonNullable<typeof client>> {
  if (client?.url === url) return client
  const previous = client
  client = undefined
  await previous?.pg.end().catch(() => {})
  const { connectCandles, postgresCandleReader } = await import('./candles-postgres.ts')
  const pg = await connectCandles(url)
  client = { url, pg, read: postgresCandleReader(pg) }
  return client
}

function prepare(input: WorkerRequest['input']) {
  const strategy = STRATEGIES[input.strategy]
  if (!strategy) throw new Error(`unknown strategy ${input.strategy}`)
  return { strategy, computation: new BacktestComputation(input), needed: strategy.candlesNeeded(input.parameters), days: calendar(input.from, input.to) }
}

function run(input: WorkerRequest['input'], file: string): Outcome {
  const { strategy, computation, needed, days } = prepare(input)
  const { db, read } = open(file)
  // Every pair from one snapshot: a `prices import` committed halfway through cannot give the
  // backtest old candles for some pairs and new ones for the others.
  db.transaction(() => {
    for (let index = 0; index < input.pairs.length; index++) {
      computation.addPair(index, read(strategy, input.pairs[index], days, input.from, input.to, needed))
    }
  })()
  return computation.finish()
}

/** The same on PostgreSQL: every pair from one snapshot (REPEATABLE READ), the next pair's read in flight while one is computed. */
async function runOnPostgres(input: WorkerRequest['input'], url: string): Promise<Outcome> {
  const { strategy, computation, needed, days } = prepare(input)
  const { pg, read } = await connect(url)
  const pairs = input.pairs
  try {
    await pg.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    let next = pairs.length ? read(strategy, pairs[0], days, input.from, input.to, needed) : undefined
    for (let index = 0; index < pairs.length; index++) {
      const candles = await next!
      next = index + 1 < pairs.length ? read(strategy, pairs[index + 1], days, input.from, input.to, needed) : undefined
      // Should the computation throw, the read in flight must not become an unhandled rejection.
      next?.catch(() => {})
      computation.addPair(index, candles)
    }
    await pg.query('COMMIT')
  } catch (error) {
    // The connection may be the problem: the next backtest opens a new one.
    if (client?.pg === pg) client = undefined
    await pg.end().catch(() => {})
    throw error
  }
  return computation.finish()
}

function execute({ input, database }: WorkerRequest): Outcome | Promise<Outcome> {
  return database.engine === 'sqlite' ? run(input, database.file) : runOnPostgres(input, database.url)
}

const reply = (message: WorkerReply) => parentPort!.postMessage(message)

const failed = (id: string, error: unknown) => reply({ type: 'failed', id, message: error instanceof Error ? error.message : String(error) })

parentPort!.on('message', (message: WorkerRequest) => {
  try {
    const outcome = execute(message)
    if (outcome instanceof Promise) {
      // Both outcomes answered here: the promise cannot reject unheard.
      void outcome.then(
        (done) => reply({ type: 'done', id: message.id, outcome: done }),
        (error) => failed(message.id, error),
      )
    } else {
      reply({ type: 'done', id: message.id, outcome })
    }
  } catch (error) {
    failed(message.id, error)
  }
})
