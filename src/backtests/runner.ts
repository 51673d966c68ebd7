// The backtest runner, a service of `serve`. One backtest RUNNING per tenant, the oldest QUEUED
// first, tenants side by side up to one worker thread per core (at most 4). The main thread only
// claims a backtest, posts it to a worker and writes what comes back: the worker reads the candles
// over its own connection (read-only to the SQLite file, or a pg client of its own to the
// PostgreSQL database at the URL serve was given), computes, and hands back the stored texts
// already serialised, so a request never waits behind a backtest. A POST wakes the runner; a look every second also
// finds what another process queued. RUNNING rows left by a crash go back to QUEUED at start, and
// those running at a stop go back at once: they run again from scratch.
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { log } from '../shared/log.ts'
import { CATCH_UP_AFTER_MS, type Service } from '../store/service.ts'
import type { Queries, Store } from '../store/store.ts'
import { findModel } from '../models/catalogue.ts'
import { STRATEGIES } from '../models/strategies.ts'
import { claimNext, markFailed, markSucceeded, requeueRunning, type Job, type Outcome } from './backtests.ts'
import { BacktestThread } from './thread.ts'
import type { CandleSource } from './protocol.ts'

const LOOK_EVERY_MS = 1000
/** A result that could not be written (the lock held past the Store's wait, the database gone) is tried again this often. */
const RETRY_MS = 1000

/** Whatever the running runner does when a backtest is queued (nothing while none runs). */
let wake: () => void = () => {}

/**
 * Tells the runner a backtest was queued; it looks once the caller's transaction has committed (on
 * SQLite its claim waits behind that write; should it look too soon, the next look finds it).
 */
export function backtestQueued(): void {
  wake()
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error))

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Runs one backtest on `thread`, its candles read by the worker from `database` (undefined: a
 * PostgreSQL store whose URL the runner was not given); rejects with the reason it could not run.
 */
export async function executeBacktest(db: Queries, job: Job, thread: BacktestThread, database: CandleSource | undefined): Promise<Outcome> {
  const model = await findModel(db, job.modelId)
  if (!model) throw new Error(`model ${job.modelId} is no longer in the catalogue`)
  if (!STRATEGIES[model.strategy]) throw new Error(`model ${model.id} uses strategy ${model.strategy}, which this server cannot run`)
  if (database === undefined) throw new Error('the backtest runner was not given the PostgreSQL database URL to read candles from')
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
    database,
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
  /** The pump in progress: one at a time, so that two never claim past `size` between their awaits. */
  private pumping: Promise<void> | undefined
  /** A look was asked for while a pump ran: the next one starts as soon as it ends. */
  private again = false

  constructor(
    private readonly size: number,
    private readonly store: Store,
    /** Where the workers read the candles (undefined: PostgreSQL without its URL). */
    private readonly database: CandleSource | undefined,
  ) {}

  schedule(ms: number): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      if (this.pumping) this.again = true
      else this.pumping = this.pump().finally(() => (this.pumping = undefined))
    }, ms)
    this.timer.unref()
  }

  /** Claims and starts backtests while a worker is free; then looks again later. Never rejects. */
  private async pump(): Promise<void> {
    try {
      if (!this.requeued) {
        const ids = await this.store.write((tx) => requeueRunning(tx))
        this.requeued = true
        if (ids.length) log({ level: 'warn', msg: 'backtests left RUNNING by the last stop queued again', backtest_ids: ids })
      }
      while (this.running < this.size && !this.stopped) {
        const job = await this.store.write((tx) => claimNext(tx, new Date()))
        if (!job) break
        if (this.stopped) return // claimed as the stop began: RUNNING, queued again at the next start
        this.running++
        void this.run(job)
      }
    } catch (error) {
      log({ level: 'error', msg: 'backtest runner failed', error: message(error) })
    }
    const again = this.again
    this.again = false
    this.schedule(again ? 0 : LOOK_EVERY_MS)
  }

  private thread(): BacktestThread {
    let thread = this.idle.pop()
    while (thread?.broken) thread = this.idle.pop()
    if (thread) return thread
    thread = new BacktestThread()
    this.threads.add(thread)
    return thread
  }

  /** Runs a claimed backtest and writes its result. Never rejects. */
  private async run(job: Job): Promise<void> {
    const started = performance.now()
    const thread = this.thread()
    let outcome: Outcome | undefined
    let failure = ''
    try {
      outcome = await executeBacktest(this.store.read, job, thread, this.database)
    } catch (error) {
      failure = message(error)
    }
    this.running--
    if (thread.broken) this.threads.delete(thread)
    else this.idle.push(thread)
    if (this.stopped) return // the stop queued it again
    for (;;) {
      const now = new Date()
      try {
        await this.store.write((tx) => (outcome ? markSucceeded(tx, job.id, outcome, now) : markFailed(tx, job.id, failure, now)))
        break
      } catch (error) {
        // The lock held past the Store's wait, or the database unreachable: the result is kept and written again.
        log({ level: 'error', msg: 'backtest result could not be written; trying again', backtest_id: job.id, error: message(error) })
        if (this.stopped) return // the stop queues it again
        await pause(RETRY_MS)
      }
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
    await this.pumping
    try {
      await this.store.write((tx) => requeueRunning(tx))
    } catch (error) {
      log({ level: 'error', msg: 'backtests could not be queued again at stop', error: message(error) })
    }
  }
}

export interface BacktestRunnerOptions {
  /** On PostgreSQL, the database the store was opened on: each worker opens a client of its own to it. */
  databaseUrl?: string
  /** Worker threads (default: one per core, at most 4). */
  workers?: number
}

/** The runner service: its worker threads read from the store's database (on PostgreSQL, `databaseUrl`). */
export function backtestRunner({ databaseUrl, workers = Math.max(1, Math.min(4, availableParallelism())) }: BacktestRunnerOptions = {}): Service {
  return {
    name: 'backtests',
    start({ dataDir, store }) {
      // The workers open the data dir's database file themselves (read-only), or connect to PostgreSQL.
      const database: CandleSource | undefined =
        store.engine === 'sqlite' ? { engine: 'sqlite', file: join(dataDir, 'bulwark.db') } : databaseUrl ? { engine: 'postgres', url: databaseUrl } : undefined
      const runner = new Runner(workers, store, database)
      wake = () => runner.schedule(0)
      runner.schedule(CATCH_UP_AFTER_MS) // what a crash left QUEUED or RUNNING, once the first answers are out
      return async () => {
        wake = () => {}
        await runner.stop()
      }
    },
  }
}
