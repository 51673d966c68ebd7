// The backtest worker thread's entry: takes a backtest a message at a time (start, one message per
// pair, finish) and answers with its outcome or why it failed. Pure: it never opens SQLite, the
// main thread reads the candles. From source this file runs as it is (tsx's loader is inherited by
// workers); the executable carries it as its own bundle, the SEA asset backtest-worker.cjs.
import { parentPort } from 'node:worker_threads'
import { BacktestComputation } from './compute.ts'
import type { WorkerReply, WorkerRequest } from './protocol.ts'

let current: { id: string; computation: BacktestComputation | undefined } | undefined

const reply = (message: WorkerReply) => parentPort!.postMessage(message)

parentPort!.on('message', (message: WorkerRequest) => {
  // After a failure the rest of that backtest's messages still arrive: they are dropped.
  if (message.type !== 'start' && (current?.id !== message.id || !current.computation)) return
  try {
    if (message.type === 'start') {
      current = { id: message.id, computation: undefined }
      current.computation = new BacktestComputation(message.input)
    } else if (message.type === 'pair') {
      current!.computation!.addPair(message.index, message.candles)
    } else {
      const outcome = current!.computation!.finish()
      current = undefined
      reply({ type: 'done', id: message.id, outcome })
    }
  } catch (error) {
    if (current) current.computation = undefined
    reply({ type: 'failed', id: message.id, message: error instanceof Error ? error.message : String(error) })
  }
})
