// The backtest worker thread's entry: takes a backtest (one message), reads its candles over its
// own read-only SQLite connection and computes it (./compute.ts), then answers with the stored
// texts (result, actions, hash) or why it failed. The main thread only claims the job and writes
// the result: the event loop never reads a candle. From source this file runs as it is (tsx's
// loader is inherited by workers); the executable carries it as its own bundle, the SEA asset
// backtest-worker.cjs, with better-sqlite3's JS, and loads the addon from the file the main
// thread extracted (workerData.nativeAddon).
import Database from 'better-sqlite3'
import { constants, setPriority } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { addonFromFile } from '../store/native.ts'
import { STRATEGIES } from '../models/strategies.ts'
import { calendar, candleReader, type ReadCandles } from './candles.ts'
import { BacktestComputation } from './compute.ts'
import type { Outcome } from './backtests.ts'
import type { WorkerReply, WorkerRequest, WorkerSetup } from './protocol.ts'

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

function run({ input, database }: WorkerRequest): Outcome {
  const strategy = STRATEGIES[input.strategy]
  if (!strategy) throw new Error(`unknown strategy ${input.strategy}`)
  const computation = new BacktestComputation(input)
  const needed = strategy.candlesNeeded(input.parameters)
  const days = calendar(input.from, input.to)
  const { db, read } = open(database)
  // Every pair from one snapshot: a `prices import` committed halfway through cannot give the
  // backtest old candles for some pairs and new ones for the others.
  db.transaction(() => {
    for (let index = 0; index < input.pairs.length; index++) {
      computation.addPair(index, read(strategy, input.pairs[index], days, input.from, input.to, needed))
    }
  })()
  return computation.finish()
}

const reply = (message: WorkerReply) => parentPort!.postMessage(message)

parentPort!.on('message', (message: WorkerRequest) => {
  try {
    reply({ type: 'done', id: message.id, outcome: run(message) })
  } catch (error) {
    reply({ type: 'failed', id: message.id, message: error instanceof Error ? error.message : String(error) })
  }
})
