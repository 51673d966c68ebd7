// The daily publisher: a model, a UTC date -> one signal per pair of the model's universe, its
// signal.published events and (for the current day) automation, all in one transaction.
// Table publish_runs (model_id, date, as_of, signals, missing_pairs, first_run_at, last_run_at),
// one row per model and date; signals are written here (table described in ./signals.ts), each
// linked onto its model's chain (./chain.ts) in the run's transaction.
//
// Decisions (docs/signals.md, "The publisher"):
// - A run dated D uses the candle dated D-1, the last daily candle closed at 00:00 UTC of D, so
//   every signal of the run has as_of = D-1 and entry_price = that candle's close. A pair without
//   that exact candle, or with too little history before it, gets no signal and a warning; an
//   older candle is never carried forward.
// - Idempotent per (model, date): a run whose every pair got a signal is final. A run with pairs
//   still missing is completed by a later run for the same date, which writes only those pairs, so
//   nothing is ever written, announced or traded twice.
// - Automation listeners see only the current day's runs (not backfills of older dates): a
//   signal from a past candle is history, not an instruction to trade at today's price.
import { nodeCrypto } from '../shared/crypto.ts'
import { log } from '../shared/log.ts'
import { query, type Store, type Tx } from '../store/store.ts'
import { newId } from '../store/ids.ts'
import { canonicalJson } from '../shared/canonical-json.ts'
import { isDate, utcDay } from '../shared/dates.ts'
import { recordEvent } from '../webhooks/events.ts'
import { catalogue, type Model } from '../models/catalogue.ts'
import { DIRECTION, STRATEGIES, type Action } from '../models/strategies.ts'
import type { Signal } from './signals.ts'
import { windowOf } from './price-window.ts'
import { asOfFor, dueDate } from './run-dates.ts'
import { chainLinker, lockChain } from './chain.ts'

export interface PublishOutcome {
  model_id: string
  date: string
  as_of: string
  /** published: every pair has its signal now; incomplete: some pairs still lack prices;
   *  already_published: an earlier run completed this date; skipped: the model cannot run. */
  status: 'published' | 'incomplete' | 'already_published' | 'skipped'
  /** Signals written by this call (none when the date was already complete). */
  signals: Signal[]
  /** Pairs of the universe still without a signal for this date. */
  missing: number
  /** Why pairs got no signal, or why the model was skipped: one line each, for the log. */
  warnings: string[]
  /** Whatever the listeners reported (automation: orders placed). */
  notes: string[]
  live: boolean
}

/** A run that wrote signals for the current day, handed to listeners (with its transaction). */
export interface PublishedRun {
  model: Model
  date: string
  asOf: string
  signals: Signal[]
  now: Date
}
export type PublishListener = (tx: Tx, run: PublishedRun) => Promise<string | undefined>

const listeners: PublishListener[] = []

/** Automation subscribes here; called inside the publish transaction, only for live runs, one listener after another (each awaited). */
export function onSignalsPublished(listener: PublishListener): void {
  listeners.push(listener)
}

interface RunRow {
  model_id: string
  date: string
  as_of: string
  signals: number
  missing_pairs: number
  first_run_at: string
  last_run_at: string
}

const runOf = query<[string, string], RunRow>('SELECT * FROM publish_runs WHERE model_id = ? AND date = ?')
const saveRun = query(`INSERT INTO publish_runs (model_id, date, as_of, signals, missing_pairs, first_run_at, last_run_at)
  VALUES (@model_id, @date, @as_of, @signals, @missing_pairs, @now, @now)
  ON CONFLICT (model_id, date) DO UPDATE SET signals = excluded.signals, missing_pairs = excluded.missing_pairs, last_run_at = excluded.last_run_at`)
const publishedPairs = query<[string, string], { pair: string }>('SELECT pair FROM signals WHERE model_id = ? AND as_of = ?')
const subscribers = query<[string], { tenant_id: string }>('SELECT tenant_id FROM workspace_models WHERE model_id = ? ORDER BY tenant_id')
const insertSignal =
  query(`INSERT INTO signals (id, model_id, pair, action, direction, entry_price, as_of, created_at, model_version, model_hash, chain_seq, prev_hash, hash)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
// Table prices (sql/002). Reading the windows is most of a publish's cost, and SQLite hands over
// one column several times faster than four: rules that need only closes get only closes.
const closeOn = query<[string, string], { close: number }>('SELECT close FROM prices WHERE pair = ? AND date = ?')
const latestDate = query<[string], { date: string | null }>('SELECT max(date) AS date FROM prices WHERE pair = ?')

export function modelHash(model: Pick<Model, 'id' | 'version' | 'parameters'>): string {
  return nodeCrypto()
    .createHash('sha256')
    .update(canonicalJson({ id: model.id, version: model.version, parameters: model.parameters }))
    .digest('hex')
}

/** Why this model cannot publish, or null. Checked every run: a signal must come from the parameters its hash vouches for. */
function unrunnable(model: Model): string | null {
  const strategy = STRATEGIES[model.strategy]
  if (!strategy) return `unknown strategy ${model.strategy}`
  const problem = strategy.invalid(model.parameters)
  if (problem) return `parameters: ${problem}`
  if (modelHash(model) !== model.hash) return 'stored hash does not match sha256(canonical_json({id, version, parameters}))'
  return null
}

/** Publishes one model for one UTC date (see the decisions above), in a savepoint of `tx`: each run is its own change. */
export async function publishModel(tx: Tx, model: Model, date: string, now = new Date()): Promise<PublishOutcome> {
  if (!isDate(date)) throw new Error(`date ${date} is not a calendar date YYYY-MM-DD`)
  const asOf = asOfFor(date)
  const live = date >= dueDate(model, now)
  const outcome: PublishOutcome = { model_id: model.id, date, as_of: asOf, status: 'published', signals: [], missing: 0, warnings: [], notes: [], live }
  const problem = unrunnable(model)
  if (problem) {
    outcome.status = 'skipped'
    outcome.missing = model.pairs.length
    outcome.warnings.push(`${model.id}: not published: ${problem}`)
    return outcome
  }
  const strategy = STRATEGIES[model.strategy]
  const needed = strategy.candlesNeeded(model.parameters)

  return tx.savepoint(async () => {
    // Before looking at the run: a publish of the same model and date on another node waits here,
    // then finds it published (SPEC 15: written once, each exits 0).
    await lockChain(tx, model.id)
    const previous = await tx.get(runOf, [model.id, date])
    if (previous && previous.missing_pairs === 0) {
      outcome.status = 'already_published'
      return outcome
    }
    const done = new Set((await tx.all(publishedPairs, [model.id, asOf])).map((r) => r.pair))
    const createdAt = now.toISOString()
    const chain = await chainLinker(tx, model.id)
    for (const pair of model.pairs) {
      if (done.has(pair)) continue
      const used = await tx.get(closeOn, [pair, asOf])
      if (!used) {
        const latest = (await tx.get(latestDate, [pair]))?.date
        outcome.warnings.push(`${model.id} ${pair}: no signal: no candle dated ${asOf}${latest ? ` (latest is ${latest})` : ''}`)
        continue
      }
      const candles = await windowOf(tx, strategy, pair, asOf, needed)
      if (candles.close.length < needed) {
        outcome.warnings.push(`${model.id} ${pair}: no signal: needs ${needed} daily candles up to ${asOf}, has ${candles.close.length}`)
        continue
      }
      const action: Action = strategy.decide(candles, model.parameters)
      const id = newId('sig')
      const versioned = { model_version: model.version, model_hash: model.hash }
      const link = chain.link({ id, model_id: model.id, ...versioned, pair, action, entry_price: used.close, as_of: asOf, created_at: createdAt })
      const signal: Signal = {
        id,
        model_id: model.id,
        pair,
        action,
        direction: DIRECTION[action],
        entry_price: used.close,
        as_of: asOf,
        created_at: createdAt,
        prev_hash: link.prev_hash,
        hash: link.hash,
      }
      await tx.run(insertSignal, [
        id,
        model.id,
        pair,
        action,
        signal.direction,
        signal.entry_price,
        asOf,
        createdAt,
        model.version,
        model.hash,
        link.chain_seq,
        link.prev_hash,
        link.hash,
      ])
      outcome.signals.push(signal)
      done.add(pair)
    }
    outcome.missing = model.pairs.length - done.size
    outcome.status = outcome.missing === 0 ? 'published' : 'incomplete'
    await tx.run(saveRun, { model_id: model.id, date, as_of: asOf, signals: done.size, missing_pairs: outcome.missing, now: createdAt })
    if (outcome.signals.length === 0) return outcome

    const data = {
      model_id: model.id,
      model_name: model.name,
      model_version: model.version,
      model_hash: model.hash,
      date,
      as_of: asOf,
      published_at: createdAt,
      signals: outcome.signals.map((s) => ({ id: s.id, pair: s.pair, action: s.action, direction: s.direction, entry_price: s.entry_price })),
      // The head after this run: a receiver that keeps it can check any later export against it.
      signal_chain: chain.head(),
    }
    for (const { tenant_id } of await tx.all(subscribers, [model.id])) await recordEvent(tx, tenant_id, 'signal.published', data, now)
    if (live) {
      for (const listener of listeners) {
        const note = await listener(tx, { model, date, asOf, signals: outcome.signals, now })
        if (note) outcome.notes.push(note)
      }
    }
    return outcome
  })
}

/** Publishes every catalogue model (or the one named) for `date`, default today (UTC), each in its own transaction. */
export async function publish(store: Store, options: { date?: string; modelId?: string; now?: Date } = {}): Promise<PublishOutcome[]> {
  const now = options.now ?? new Date()
  const date = options.date ?? utcDay(now)
  const models = (await catalogue(store.read)).filter((m) => options.modelId === undefined || m.id === options.modelId)
  const outcomes: PublishOutcome[] = []
  for (const model of models) outcomes.push(await store.write((tx) => publishModel(tx, model, date, now)))
  return outcomes
}

/**
 * Runs one model for one date and logs what happened; a failure is logged, never thrown. A retry
 * (on the quarter hour, or on new candles) that wrote nothing new stays silent, so a pair that
 * never gets prices is not logged every time.
 */
export async function publishAndLog(
  store: Store,
  model: Model,
  date: string,
  reason: 'schedule' | 'catch-up' | 'retry' | 'candles' | 'demo',
  now = new Date(),
): Promise<PublishOutcome | undefined> {
  try {
    const outcome = await store.write((tx) => publishModel(tx, model, date, now))
    if ((reason === 'retry' || reason === 'candles') && outcome.signals.length === 0) return outcome
    for (const warning of outcome.warnings) log({ level: 'warn', msg: 'publish warning', model_id: model.id, date, detail: warning })
    if (outcome.status !== 'already_published') {
      log({
        level: 'info',
        msg: 'published',
        reason,
        model_id: model.id,
        date,
        as_of: outcome.as_of,
        status: outcome.status,
        signals: outcome.signals.length,
        missing: outcome.missing,
        notes: outcome.notes,
      })
    }
    return outcome
  } catch (error) {
    log({ level: 'error', msg: 'publish failed', reason, model_id: model.id, date, error: error instanceof Error ? error.message : String(error) })
    return undefined
  }
}
