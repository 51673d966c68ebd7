// Automation: when a model publishes the current day's signals, every EXECUTE tenant with that model
// active and trading not paused (fleet or model) gets its orders, inside the publish transaction.
// Reads trades and orders (sql/001, sql/003); writes orders only through src/trading/orders.ts,
// so every pre-trade check, incident and event of a manual order applies unchanged.
//
// Positions belong to a (tenant, model, pair): a model enters and exits only what it opened.
// - ENTER_LONG on a pair where the model holds no open trade and no pending order: a MARKET BUY of
//   max_exposure_usd / max_open_trades USD, if it fits both limits. One that does not fit is
//   skipped quietly: the model's target is unchanged, and an incident per pair per day would bury
//   the trail. (placeOrder's own check stays the last word; its refusal is a skip too.)
// - EXIT_LONG: the model's pending BUYs on the pair are canceled (the target is flat now), and its
//   open quantity not yet covered by a pending SELL gets a MARKET SELL.
// - HOLD changes nothing.
// A model the workspace marks live (workspace_models.live, SPEC 10) places LIVE orders on the
// tenant's venue, and reads only its LIVE trades and orders: its exit sells what the venue holds,
// never a paper position of the same model (and a PAPER model never a LIVE one).
// PAPER market orders of both sides fill at the next daily close of their pair (the paper broker),
// the first price after the candle the signal was computed from; LIVE ones fill on the venue.
import { query, type Tx } from '../store/store.ts'
import { DomainError } from '../shared/errors.ts'
import { log } from '../shared/log.ts'
import type { PublishedRun, PublishListener } from '../signals/publisher.ts'
import { cancelOrder, type OrderInput } from './orders.ts'
import { currentBook, type OrderContext, placeOrder } from './pre-trade.ts'

const AUTOMATION_ACTOR = 'automation@localhost'

const EPSILON = 1e-9

const automatedTenants = query<{ model: string }, { tenant_id: string; max_open_trades: number; max_exposure_usd: number; live: number }>(`
  SELECT t.id AS tenant_id, r.max_open_trades, r.max_exposure_usd, w.live
  FROM workspace_models w
  JOIN tenants t ON t.id = w.tenant_id AND t.plan = 'EXECUTE'
  JOIN risk_profiles r ON r.tenant_id = t.id AND r.trading_paused = 0
  WHERE w.model_id = @model
    AND NOT EXISTS (SELECT 1 FROM paused_models p WHERE p.tenant_id = t.id AND p.model_id = @model)
  ORDER BY t.id`)
// What the model holds per pair for one tenant: open quantity, pending SELL quantity, pending BUYs.
// A pending SELL covers what it has not filled yet (a PAPER one fills whole: filled_quantity is 0).
const holdings = query<{ tenant: string; model: string; mode: Mode }, { pair: string; open: number; selling: number; buying: number }>(`
  SELECT pair, sum(open) AS open, sum(selling) AS selling, sum(buying) AS buying FROM (
    SELECT pair, quantity AS open, 0 AS selling, 0 AS buying FROM trades
      WHERE tenant_id = @tenant AND model_id = @model AND mode = @mode AND status = 'OPEN'
    UNION ALL
    SELECT pair, 0, CASE side WHEN 'SELL' THEN quantity - filled_quantity ELSE 0 END, CASE side WHEN 'BUY' THEN 1 ELSE 0 END FROM pending_orders
      WHERE tenant_id = @tenant AND model_id = @model AND mode = @mode
  ) AS held GROUP BY pair`)
const pendingBuys = query<{ tenant: string; model: string; mode: Mode; pair: string }, { id: string }>(`
  SELECT id FROM pending_orders WHERE tenant_id = @tenant AND model_id = @model AND mode = @mode AND pair = @pair AND side = 'BUY' ORDER BY id`)

type Mode = 'PAPER' | 'LIVE'

export interface AutomationResult {
  tenants: number
  orders: number
  canceled: number
  /** LIVE BUYs whose cancel went to the venue (its answer ends them). */
  cancelsSent: number
  skipped: number
  failed: number
}

interface Tenant {
  tenant_id: string
  max_open_trades: number
  max_exposure_usd: number
  live: number
}

type Counts = Pick<AutomationResult, 'orders' | 'canceled' | 'cancelsSent' | 'skipped'>

const AUTOMATION: OrderContext = { origin: { source: 'automation' } }

/**
 * Places one automation order; false when a check refused it (a limit, the venue's minimum, nothing
 * left to sell): the model's target stays what it is, and the run goes on with the next pair.
 */
async function tryPlace(tx: Tx, tenantId: string, input: OrderInput, now: Date): Promise<boolean> {
  try {
    await placeOrder(tx, tenantId, input, AUTOMATION_ACTOR, now, AUTOMATION)
    return true
  } catch (error) {
    if (error instanceof DomainError && ['risk_limit_exceeded', 'venue_rejected', 'validation_failed'].includes(error.code)) return false
    throw error
  }
}

/** One tenant's orders for one run; a savepoint, so a failure leaves none of them behind. */
async function automateTenant(tx: Tx, tenant: Tenant, run: PublishedRun): Promise<Counts> {
  const result: Counts = { orders: 0, canceled: 0, cancelsSent: 0, skipped: 0 }
  const tenantId = tenant.tenant_id
  const mode: Mode = tenant.live === 1 ? 'LIVE' : 'PAPER'
  const held = new Map((await tx.all(holdings, { tenant: tenantId, model: run.model.id, mode })).map((h) => [h.pair, h]))
  const size = tenant.max_exposure_usd / tenant.max_open_trades
  const model = run.model.id
  await tx.savepoint(async () => {
    for (const signal of run.signals) {
      if (signal.action !== 'EXIT_LONG') continue
      const h = held.get(signal.pair)
      if (!h) continue
      if (h.buying > 0) {
        for (const { id } of await tx.all(pendingBuys, { tenant: tenantId, model, mode, pair: signal.pair })) {
          // A PAPER order is canceled here; a LIVE one is asked of the venue, whose answer ends it.
          if ((await cancelOrder(tx, tenantId, id, run.now)).status === 'CANCELED') result.canceled++
          else result.cancelsSent++
        }
      }
      const uncovered = h.open - h.selling
      if (uncovered > EPSILON) {
        const sell = { pair: signal.pair, side: 'SELL', type: 'MARKET', quantity: uncovered, model_id: model, mode } as const
        if (await tryPlace(tx, tenantId, sell, run.now)) result.orders++
        else result.skipped++
      }
    }
    let book: { positions: number; exposureUsd: number } | undefined
    for (const signal of run.signals) {
      if (signal.action !== 'ENTER_LONG' || held.has(signal.pair)) continue
      book ??= await currentBook(tx, tenantId)
      if (book.positions + 1 > tenant.max_open_trades || book.exposureUsd + size > tenant.max_exposure_usd * (1 + EPSILON)) {
        result.skipped++
        continue
      }
      if (!(await tryPlace(tx, tenantId, { pair: signal.pair, side: 'BUY', type: 'MARKET', notional_usd: size, model_id: model, mode }, run.now))) {
        result.skipped++
        continue
      }
      book.positions++
      book.exposureUsd += size
      result.orders++
    }
  })
  return result
}

async function automate(tx: Tx, run: PublishedRun): Promise<AutomationResult> {
  const result: AutomationResult = { tenants: 0, orders: 0, canceled: 0, cancelsSent: 0, skipped: 0, failed: 0 }
  if (!run.signals.some((s) => s.action !== 'HOLD')) return result
  for (const tenant of await tx.all(automatedTenants, { model: run.model.id })) {
    result.tenants++
    try {
      const counts = await automateTenant(tx, tenant, run)
      result.orders += counts.orders
      result.canceled += counts.canceled
      result.cancelsSent += counts.cancelsSent
      result.skipped += counts.skipped
    } catch (error) {
      // One tenant's failure must not stop the publish or the other tenants.
      result.failed++
      log({
        level: 'error',
        msg: 'automation failed',
        tenant_id: tenant.tenant_id,
        model_id: run.model.id,
        date: run.date,
        error: error instanceof Error ? error.message : String(error),
      })
    }
  }
  return result
}

/** Orders for every EXECUTE tenant with the model active, inside the publish's transaction (hooked up in src/app.ts). */
export const automateOnPublish: PublishListener = async (tx, run) => {
  const r = await automate(tx, run)
  if (r.tenants === 0) return
  return (
    `automation: ${r.orders} order${r.orders === 1 ? '' : 's'} for ${r.tenants} tenant${r.tenants === 1 ? '' : 's'}` +
    (r.canceled ? `, ${r.canceled} pending BUY${r.canceled === 1 ? '' : 's'} canceled` : '') +
    (r.cancelsSent ? `, ${r.cancelsSent} LIVE BUY cancel${r.cancelsSent === 1 ? '' : 's'} sent to the venue` : '') +
    (r.skipped ? `, ${r.skipped} order${r.skipped === 1 ? '' : 's'} skipped at the risk limits or the venue's minimum` : '') +
    (r.failed ? `, ${r.failed} tenant${r.failed === 1 ? '' : 's'} failed (see log)` : '')
  )
}
