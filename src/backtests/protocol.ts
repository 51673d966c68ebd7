// The messages between the runner (main thread) and a backtest worker, in the order they flow.
import type { Outcome } from './backtests.ts'
import type { PairCandles } from './candles.ts'
import type { BacktestInput } from './compute.ts'

export type WorkerRequest =
  | { type: 'start'; id: string; input: BacktestInput }
  | { type: 'pair'; id: string; index: number; candles: PairCandles }
  | { type: 'finish'; id: string }

export type WorkerReply = { type: 'done'; id: string; outcome: Outcome } | { type: 'failed'; id: string; message: string }
