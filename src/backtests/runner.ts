// The backtest runner, a service of `serve`. One backtest RUNNING per tenant, the oldest QUEUED
// first, tenants side by side up to one worker thread per core (at most 4). The main thread only
// claims a backtest, posts it to a worker and writes what comes back: the worker reads the candles
// over its own read-only connection, computes, and hands back the stored texts already serialised,
// so a request never waits behind a backtest. A POST wakes the runner; a look every second also
// finds what another process queued. RUNNING rows left by a crash go back to QUEUED at start, and
// those running at a stop go back at once: they run again from scratch.
import { availableParallelism } from 'node:os'
import { db, write } from '../store/db.ts'
import { isBusy } from '../store/write-queue.ts'
import { log } from '../shared/log.ts'
import { CATCH_UP_AFTER_MS, type Service } from '../store/service.ts'
import { findModel } from '../models/catalogue.ts'
import { STRATEGIES } from '../models/strategies.ts'
import { claimNext, markFailed, markSucceeded, requeueRunning, type Job, type Outcome } from './backtests.ts'
import { BacktestThread } from './thread.ts'

const LOOK_EVERY_MS = 1000
/** Another process holds the write lock: try again soon, without spinning. */
const BUSY_RETRY_MS = 50
const BUSY = Symbol('busy')

/** Whatever the running runner does when a backtest is queued (nothing while none runs). */
let wake: () => void = () => {}

/** Tells the runner a backtest was queued; it looks after the caller's transaction commits. */
export function backtestQueued(): void {
  wake()
}

/** One change of the runner: a claim, a result, a failure or a requeue; BUSY while another process holds the lock. */
function persist<T>(change: () => T): T | typeof BUSY {
  try {
    return write(change)
  } catch (error) {
    if (isBusy(error)) return BUSY
    throw error
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs one backtest on `thread`; rejects with the reason it could not run. */
export function executeBacktest(job: Job, thread: BacktestThread): Promise<Outcome> {
  const model = findModel(job.modelId)
  if (!model) return Promise.reject(new Error(`model ${job.modelId} is no longer in the catalogue`))
  if (!STRATEGIES[model.strategy]) return Promise.reject(new Error(`model ${model.id} uses strategy ${model.strategy}, which this server cannot run`))
  const outcome = thread.outcome(job.id)
  thread.post({
    type: 'run',
    id: job.id,
    input: {
      modelId: model.id,
      strategy: model.strategy,
      pairs: model.pairs,
      from: job.from,
      to: job.to,
      parameters: job.parameters,
      feeBps: job.feeBps,
      slippageBps: job.slippageBps,
    },
    database: db().name,
  })
  return outcome
}

class Runner {
  private readonly idle: BacktestThread[] = []
  private readonly threads = new Set<BacktestThread>()
  private running = 0
  private requeued = false
  private stopped = false
  private timer: NodeJS.Timeout | undefined

  constructor(private readonly size: number) {}

  schedule(ms: number): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => this.pump(), ms)
    this.timer.unref()
  }

  /** Claims and starts backtests while a worker is free; then looks again later. */
  private pump(): void {
    try {
      if (!this.requeued) {
        const ids = persist(requeueRunning)
        if (ids === BUSY) {
          this.schedule(BUSY_RETRY_MS)
          return
        }
        this.requeued = true
        if (ids.length) log({ level: 'warn', msg: 'backtests left RUNNING by the last stop queued again', backtest_ids: ids })
      }
      while (this.running < this.size) {
        const job = persist(() => claimNext(new Date()))
        if (job === BUSY) {
          this.schedule(BUSY_RETRY_MS)
          return
        }
        if (!job) break
        this.running++
        void this.run(job)
      }
    } catch (error) {
      log({ level: 'error', msg: 'backtest runner failed', error: error instanceof Error ? error.message : String(error) })
    }
    this.schedule(LOOK_EVERY_MS)
  }

  private thread(): BacktestThread {
    let thread = this.idle.pop()
    while (thread?.broken) thread = this.idle.pop()
    if (thread) return thread
    thread = new BacktestThread()
    this.threads.add(thread)
    return thread
  }

  private async run(job: Job): Promise<void> {
    const started = performance.now()
    const thread = this.thread()
    let outcome: Outcome | undefined
    let failure = ''
    try {
      outcome = await executeBacktest(job, thread)
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error)
    }
    this.running--
    if (thread.broken) this.threads.delete(thread)
    else this.idle.push(thread)
    if (this.stopped) return // the stop queued it again
    for (;;) {
      const now = new Date()
      const settled = persist(() => (outcome ? markSucceeded(job.id, outcome, now) : markFailed(job.id, failure, now)))
      if (settled !== BUSY || this.stopped) break
      await pause(BUSY_RETRY_MS)
    }
    log({
      level: outcome ? 'info' : 'warn',
      msg: outcome ? 'backtest succeeded' : 'backtest failed',
      backtest_id: job.id,
      tenant_id: job.tenantId,
      model_id: job.modelId,
      ms: Math.round(performance.now() - started),
      ...(outcome ? { result_hash: outcome.resultHash } : { error: failure }),
    })
    this.schedule(0)
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await Promise.all([...this.threads].map((t) => t.terminate()))
    try {
      persist(requeueRunning)
    } catch (error) {
      log({ level: 'error', msg: 'backtests could not be queued again at stop', error: error instanceof Error ? error.message : String(error) })
    }
  }
}

/** The runner with `workers` worker threads (default: one per core, at most 4). */
export function backtestRunner(workers = Math.max(1, Math.min(4, availableParallelism()))): Service {
  return {
    name: 'backtests',
    start() {
      const runner = new Runner(workers)
      wake = () => runner.schedule(0)
      runner.schedule(CATCH_UP_AFTER_MS) // what a crash left QUEUED or RUNNING, once the first answers are out
      return async () => {
        wake = () => {}
        await runner.stop()
      }
    },
  }
}
