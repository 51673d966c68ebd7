// One backtest worker thread and the one backtest it is computing. Where its code comes from: from
// source, ./worker.ts itself (workers inherit the parent's execArgv, so tsx's loader with it);
// inside the executable, the second esbuild bundle build.mjs ships as the SEA asset
// "backtest-worker.cjs", evaluated as a script (there is no file to point a Worker at).
import type { Worker } from 'node:worker_threads'
import * as sea from 'node:sea'
import { nativeAddonPath } from '../store/native.ts'
import type { Outcome } from './backtests.ts'
import type { WorkerReply, WorkerRequest, WorkerSetup } from './protocol.ts'

const WORKER_ASSET = 'backtest-worker.cjs'

function spawn(): Worker {
  // Loaded at the first backtest, not at every start (test/bench/startup.ts: each builtin costs a start ~1 ms).
  const { Worker } = process.getBuiltinModule('node:worker_threads')
  // The SEA asset's require knows built-in modules only: the worker loads SQLite's addon from the
  // file this thread already extracted.
  const workerData: WorkerSetup = { nativeAddon: nativeAddonPath() }
  if (sea.isSea()) return new Worker(sea.getAsset(WORKER_ASSET, 'utf8'), { eval: true, workerData })
  return new Worker(new URL('./worker.ts', import.meta.url), { workerData })
}

export class BacktestThread {
  private readonly worker = spawn()
  private waiting: { id: string; resolve: (outcome: Outcome) => void; reject: (error: Error) => void } | undefined
  /** It crashed, stopped or was terminated: it takes no more backtests. */
  broken = false

  constructor() {
    // A stop of serve terminates it; it must never be what keeps the process alive.
    this.worker.unref()
    this.worker.on('message', (reply: WorkerReply) => {
      const waiting = this.waiting
      if (waiting?.id !== reply.id) return
      this.waiting = undefined
      if (reply.type === 'done') waiting.resolve(reply.outcome)
      else waiting.reject(new Error(reply.message))
    })
    this.worker.on('error', (error) => this.break(`the backtest worker failed: ${error.message}`))
    this.worker.on('exit', (code) => this.break(`the backtest worker stopped (exit code ${code})`))
  }

  /** What the worker answers for backtest `id`: call before its message is posted. */
  outcome(id: string): Promise<Outcome> {
    if (this.broken) return Promise.reject(new Error('the backtest worker is gone'))
    return new Promise((resolve, reject) => {
      this.waiting = { id, resolve, reject }
    })
  }

  post(message: WorkerRequest): void {
    if (!this.broken) this.worker.postMessage(message)
  }

  terminate(): Promise<number> {
    this.broken = true
    return this.worker.terminate()
  }

  private break(reason: string): void {
    this.broken = true
    const waiting = this.waiting
    this.waiting = undefined
    waiting?.reject(new Error(reason))
  }
}
