// What a backtest worker is started with, and the messages between the runner (main thread) and it.
import type { Outcome } from './backtests.ts'
import type { BacktestInput } from './compute.ts'

/** The worker's workerData: inside the executable, the file the main thread loaded SQLite's addon from. */
export interface WorkerSetup {
  nativeAddon: string | undefined
}

/** Where a worker reads the candles: the main connection's SQLite file, or the PostgreSQL database at `url`. */
export type CandleSource = { engine: 'sqlite'; file: string } | { engine: 'postgres'; url: string }

/** One backtest, read from `database` and computed by the worker. */
export type WorkerRequest = { type: 'run'; id: string; input: BacktestInput; database: CandleSource }

export type WorkerReply = { type: 'done'; id: string; outcome: Outcome } | { type: 'failed'; id: string; message: string }
