// What an alert writes (SPEC 16). An authenticated alert is one change: the duplicate check, the
// order through the same pre-trade checks as POST /api/v1/orders (submitOrder), and the alert's log
// row, ACCEPTED with its order or REFUSED with the problem's code and detail; a limit breach's
// incident commits with that row. A refusal before the change (a malformed or stale message, a
// venue that cannot price) writes its log row alone. A wrong secret or a forbidden source writes
// nothing but the hook's counter, coalesced: a flood of them is one write at a time, not one each.
import { RecordedRefusal } from '../http/route.ts'
import { DomainError, validationError } from '../shared/errors.ts'
import { log } from '../shared/log.ts'
import { query, type Store, type Tx } from '../store/store.ts'
import { holdTenant } from '../tenants/tenants.ts'
import type { VenueQuote, VenueQuotes } from '../trading/live/quotes.ts'
import type { OrderInput } from '../trading/orders.ts'
import { submitOrder } from '../trading/pre-trade.ts'
import { findVenueAccount } from '../venues/accounts.ts'
import type { ReceivingHook } from './hooks.ts'
import { findAcceptedAlert, recordAlert } from './log.ts'
import type { AlertMessage } from './message.ts'

/** What an alert is answered when it is taken: its order, or the order its id already placed. */
export type AlertAnswer = { order_id: string; status: string } | { duplicate: true; order_id: string | null }

// A SELL without an amount closes what the hook holds of the pair: its open trades (of its mode and
// model, as submitOrder scopes a hook's SELL) less the SELLs of the hook still working.
type HookScope = { tenant: string; pair: string; mode: string; model: string | null; hook: string }
const hookOpen = query<HookScope, { quantity: number }>(`
  SELECT coalesce(sum(quantity), 0) AS quantity FROM trades
  WHERE tenant_id = @tenant AND pair = @pair AND status = 'OPEN' AND mode = @mode AND alert_hook_id = @hook
    AND (CAST(@model AS TEXT) IS NULL OR model_id = @model)`)
const hookSelling = query<HookScope, { quantity: number }>(`
  SELECT coalesce(sum(quantity - filled_quantity), 0) AS quantity FROM pending_orders
  WHERE tenant_id = @tenant AND pair = @pair AND side = 'SELL' AND mode = @mode AND alert_hook_id = @hook
    AND (CAST(@model AS TEXT) IS NULL OR model_id = @model)`)
const addRefusals = query<[number, string]>('UPDATE alert_hooks SET refused_count = refused_count + ? WHERE id = ?')

/** Quantities closer than this are equal (sizes come from float arithmetic), as submitOrder takes them. */
const EPSILON = 1e-9

/** The order an alert asks for, a SELL without an amount sized to what the hook holds. */
async function orderOf(tx: Tx, hook: ReceivingHook, message: AlertMessage): Promise<OrderInput> {
  const input: OrderInput = {
    pair: message.pair,
    side: message.side,
    type: message.type,
    mode: hook.mode,
    ...(hook.model_id !== null && { model_id: hook.model_id }),
    ...(message.quantity !== undefined && { quantity: message.quantity }),
    ...(message.notional_usd !== undefined && { notional_usd: message.notional_usd }),
    ...(message.price !== undefined && { limit_price: message.price }),
  }
  if (message.side === 'BUY' || input.quantity !== undefined || input.notional_usd !== undefined) return input
  const scope = { tenant: hook.tenant_id, pair: message.pair, mode: hook.mode, model: hook.model_id, hook: hook.id }
  const open = (await tx.get(hookOpen, scope))!.quantity
  const available = open - (await tx.get(hookSelling, scope))!.quantity
  const where = `${hook.mode === 'LIVE' ? 'LIVE ' : ''}${message.pair} of alert hook ${hook.id}`
  if (open <= EPSILON) throw validationError('side', `a sell without quantity closes the hook's position, and there is none open on ${where}`)
  if (available <= EPSILON) throw validationError('side', `pending SELL orders already cover the whole open position on ${where}`)
  return { ...input, quantity: available }
}

/**
 * Places the alert's order, or answers a duplicate with the first one's; every outcome is logged in
 * the same change. A refusal is thrown after its log row (and a breach's incident) committed.
 */
export async function acceptAlert(
  store: Store,
  quotes: VenueQuotes,
  hook: ReceivingHook,
  message: AlertMessage,
  logged: string,
  now: Date,
): Promise<AlertAnswer> {
  const entry = { hook_id: hook.id, alert_id: message.id, message: logged }
  // A LIVE order is priced at the venue before its change (a network call never runs inside one), as POST /api/v1/orders does.
  let quote: VenueQuote | undefined
  try {
    if (hook.mode === 'LIVE' && (await findVenueAccount(store.read, hook.tenant_id))) quote = await quotes.quote(store.read, hook.tenant_id, message.pair, now)
  } catch (error) {
    if (error instanceof DomainError) await recordRefusal(store, hook, message.id, logged, error, now)
    throw error
  }
  const outcome = await store.write(async (tx): Promise<AlertAnswer | RecordedRefusal> => {
    // The tenant's lock first: two nodes given one id at once check it one after the other.
    await holdTenant(tx, hook.tenant_id, 'update')
    const first = await findAcceptedAlert(tx, hook.id, message.id, now)
    if (first) {
      await recordAlert(tx, hook.tenant_id, { ...entry, outcome: 'DUPLICATE', order_id: first.order_id }, now)
      return { duplicate: true, order_id: first.order_id }
    }
    if (quote) await quotes.remember(tx, hook.tenant_id, message.pair, quote)
    let placed: Awaited<ReturnType<typeof submitOrder>>
    try {
      const origin = { source: 'alert' as const, alert_hook_id: hook.id }
      placed = await submitOrder(tx, hook.tenant_id, await orderOf(tx, hook, message), `alert hook ${hook.name} (${hook.id})`, now, {
        origin,
        venuePrice: quote?.price,
      })
    } catch (error) {
      // submitOrder's savepoint has undone its writes: the refusal is logged in this same change.
      if (!(error instanceof DomainError)) throw error
      placed = new RecordedRefusal(error)
    }
    if (placed instanceof RecordedRefusal) {
      await recordAlert(tx, hook.tenant_id, { ...entry, outcome: 'REFUSED', code: placed.error.code, reason: placed.error.detail }, now)
      return placed
    }
    await recordAlert(tx, hook.tenant_id, { ...entry, outcome: 'ACCEPTED', order_id: placed.id }, now)
    return { order_id: placed.id, status: placed.status }
  })
  if (outcome instanceof RecordedRefusal) throw outcome.error
  return outcome
}

/** Logs a refusal met before the order's change (malformed, stale, not priced): the row alone. */
export async function recordRefusal(
  store: Store,
  hook: ReceivingHook,
  alertId: string | undefined,
  logged: string,
  error: DomainError,
  now: Date,
): Promise<void> {
  await store.write(async (tx) => {
    await recordAlert(
      tx,
      hook.tenant_id,
      { hook_id: hook.id, alert_id: alertId ?? null, message: logged, outcome: 'REFUSED', code: error.code, reason: error.detail },
      now,
    )
  })
}

/**
 * The hooks' refused_count, coalesced: increments wait in memory while one write runs, then go in
 * the next, so refusals cost at most one write at a time whatever their rate. A caller awaits the
 * write that carries its increment; a failed write is logged, never the refusal's answer.
 */
export function refusalCounter(store: Store): (hookId: string) => Promise<void> {
  let batch = new Map<string, number>()
  let due: Promise<void> | undefined
  let running: Promise<void> = Promise.resolve()
  const flush = async (taken: Map<string, number>) => {
    try {
      await store.write(async (tx) => {
        for (const [id, n] of taken) await tx.run(addRefusals, [n, id])
      })
    } catch (error) {
      log({ level: 'warn', msg: 'alert hooks: refused_count not updated', error: String(error), hooks: taken.size })
    }
  }
  return (hookId) => {
    batch.set(hookId, (batch.get(hookId) ?? 0) + 1)
    if (!due) {
      due = running.then(() => {
        const taken = batch
        batch = new Map()
        due = undefined
        return flush(taken)
      })
      running = due
    }
    return due
  }
}
