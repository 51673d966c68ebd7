// What a backtest worker is started with, and the messages between the runner (main thread) and it.
import type { Outcome } from './backtests.ts'
import type { BacktestInput } from './compute.ts'

/** The worker's workerData: inside the executable, the file the main thread loaded SQLite's addon from. */
export interface WorkerSetup {
  nativeAddon: string | undefined
}

/** One backtest, read from `database` (the main connection's file) and computed by the worker. */
export type WorkerRequest = { type: 'run'; id: string; input: BacktestInput; database: string }

export type WorkerReply = { type: 'done'; id: string; outcome: Outcome } | { type: 'failed'; id: string; message: string }
