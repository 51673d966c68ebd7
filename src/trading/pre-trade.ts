// The pre-trade checks (SPEC 5), in one transaction with the order they let through: the body's own
// rules, plan EXECUTE, a known price, the pause (fleet or model; an order that only reduces a
// position still goes through), and for a BUY max_open_trades and max_exposure_usd, whose breach
// records a RISK_LIMIT_BREACHED incident and its event. Reads risk_profiles, paused_models, trades
// and pending_orders; writes through ./orders.ts.
import { query, type Queries, type Tx } from '../store/store.ts'
import { DomainError, validationError } from '../shared/errors.ts'
import { RecordedRefusal } from '../http/route.ts'
import { findModel } from '../models/catalogue.ts'
import { latestCandle } from '../market/prices.ts'
import { findTenantById, holdTenant } from '../tenants/tenants.ts'
import { activeModelIds } from '../tenants/workspace.ts'
import { appendIncident, incidentRef } from '../risk/incidents.ts'
import { tripBeforeOrder } from '../risk/breakers.ts'
import { findPauseState } from '../risk/pauses.ts'
import { recordEvent } from '../webhooks/events.ts'
import { insertPendingOrder, toOrder, type Order, type OrderInput, type OrderOrigin } from './orders.ts'
import { findBreach, orderLimitsOf } from './order-limits.ts'
import { findVenueAccount } from '../venues/accounts.ts'
import { belowMinimum } from '../venues/markets.ts'
import { FRESH_MARK_MS, findFreshMark } from '../venues/marks.ts'

/** Who places an order, and for a LIVE one the venue's price it is checked at. */
export interface OrderContext {
  origin: OrderOrigin
  /**
   * The venue's price of the pair, read before the transaction (POST /api/v1/orders reads it for a
   * LIVE order). Without it a LIVE order is checked at the venue's mark if at most 60 s old, else
   * at the last close: the automation's case, whose BUYs are sized in USD and sent as quote-quantity
   * orders, so what they spend is bounded whatever the price.
   */
  venuePrice?: number
}

const API_ORDER: OrderContext = { origin: { source: 'api' } }

// Per pair, so that the last price is looked up once a pair rather than once a row.
const bookByPair = query<{ tenant: string }, { pair: string; positions: number; quantity: number; notional: number }>(`
  SELECT pair, count(*) AS positions, sum(quantity) AS quantity, 0 AS notional FROM trades
    WHERE tenant_id = @tenant AND status = 'OPEN' GROUP BY pair
  UNION ALL
  SELECT pair, count(*), coalesce(sum(quantity), 0), coalesce(sum(notional_usd), 0) FROM pending_orders
    WHERE tenant_id = @tenant AND side = 'BUY' GROUP BY pair`)
// A SELL reduces trades of its own mode: a LIVE sell what the venue account holds, a PAPER one paper.
// A gateway key's SELL reduces that key's positions only (SPEC 14: a key is like a sub-account), an
// alert hook's that hook's (SPEC 16).
type SellScope = { tenant: string; pair: string; model: string | null; key: string | null; hook: string | null; mode: string }
const openQuantity = query<SellScope, { quantity: number }>(`
  SELECT coalesce(sum(quantity), 0) AS quantity FROM trades
  WHERE tenant_id = @tenant AND pair = @pair AND status = 'OPEN' AND mode = @mode AND (CAST(@model AS TEXT) IS NULL OR model_id = @model)
    AND (CAST(@key AS TEXT) IS NULL OR gateway_key_id = @key) AND (CAST(@hook AS TEXT) IS NULL OR alert_hook_id = @hook)`)
const pendingSellQuantity = query<SellScope, { quantity: number }>(`
  SELECT coalesce(sum(quantity - filled_quantity), 0) AS quantity FROM pending_orders
  WHERE tenant_id = @tenant AND pair = @pair AND side = 'SELL' AND mode = @mode AND (CAST(@model AS TEXT) IS NULL OR model_id = @model)
    AND (CAST(@key AS TEXT) IS NULL OR gateway_key_id = @key) AND (CAST(@hook AS TEXT) IS NULL OR alert_hook_id = @hook)`)

/** Quantities closer than this are equal: sizes come from float division. */
const EPSILON = 1e-9

/** Exposure in USD of open trades and pending BUY orders at the last known prices, and their count. */
export async function currentBook(db: Queries, tenantId: string): Promise<{ positions: number; exposureUsd: number }> {
  let positions = 0
  let exposureUsd = 0
  for (const row of await db.all(bookByPair, { tenant: tenantId })) {
    positions += row.positions
    exposureUsd += row.notional + (row.quantity ? row.quantity * ((await latestCandle(db, row.pair))?.close ?? 0) : 0)
  }
  return { positions, exposureUsd }
}

function checkShape(input: OrderInput): void {
  if ((input.quantity === undefined) === (input.notional_usd === undefined)) {
    throw new DomainError('validation_failed', 'give exactly one of quantity and notional_usd', {
      errors: [{ field: input.quantity === undefined ? 'quantity' : 'notional_usd', message: 'exactly one of quantity and notional_usd is required' }],
    })
  }
  if (input.type === 'LIMIT' && input.limit_price === undefined) throw validationError('limit_price', 'is required for a LIMIT order')
  if (input.type === 'MARKET' && input.limit_price !== undefined) throw validationError('limit_price', 'is only for LIMIT orders')
}

/**
 * Places an order after the pre-trade checks, in one transaction: plan EXECUTE (403 plan_forbids),
 * a known price (422 no_price), trading not paused for the fleet or the order's model unless the
 * order only reduces (409 trading_paused), max_open_trades and max_exposure_usd for a BUY (422
 * risk_limit_exceeded). Returns the PENDING order; the paper broker fills it when the next price of
 * its pair arrives. Other refusals throw DomainError with nothing written.
 *
 * A limit breach throws too, but only after its RISK_LIMIT_BREACHED incident and risk.limit.breached
 * event are written: inside a caller's transaction (the automation), catch the error and carry on
 * to keep them; outside one they are already committed.
 */
export async function placeOrder(tx: Tx, tenantId: string, input: OrderInput, actor: string, now: Date, context = API_ORDER): Promise<Order> {
  const outcome = await submitOrder(tx, tenantId, input, actor, now, context)
  if (outcome instanceof RecordedRefusal) throw outcome.error
  return outcome
}

/** placeOrder for route handlers: a limit breach is returned, so that its incident commits. */
export async function submitOrder(
  tx: Tx,
  tenantId: string,
  input: OrderInput,
  actor: string,
  now: Date,
  context = API_ORDER,
): Promise<Order | RecordedRefusal> {
  return tx.savepoint(async (): Promise<Order | RecordedRefusal> => {
    // One of the tenant's orders at a time on PostgreSQL too, as on SQLite: each one's limits
    // (orders a minute, open trades, exposure) count every order before it, and none crosses a kill switch.
    await holdTenant(tx, tenantId, 'update')
    const tenant = await findTenantById(tx, tenantId)
    if (!tenant) throw new DomainError('not_found', 'tenant not found')
    checkShape(input)
    const modelId = input.model_id ?? null
    if (modelId !== null && !(await findModel(tx, modelId)))
      throw validationError('model_id', `unknown model ${JSON.stringify(modelId)}; see GET /api/v1/models`)
    // The breakers first: a runaway bot or a loss at its limit stops trading before an opening
    // order. A SELL only reduces, which a pause always lets through: its breakers run once its own
    // checks have passed (a refusal after a trip would take the trip back), right before it is written.
    const trip = input.side === 'BUY' ? await tripBeforeOrder(tx, tenantId, now) : undefined
    if (trip) {
      return new RecordedRefusal(
        new DomainError(
          'trading_paused',
          `${trip.reading.reason}; the circuit breaker ${trip.reading.name} tripped (${trip.action}, incident ${trip.incidentId}) and this order was not placed`,
        ),
      )
    }
    // The checks in SPEC order: paused (a BUY only: reducing is always allowed), plan, limits.
    if (input.side === 'BUY') {
      const paused = (await findPauseState(tx, tenantId, modelId))!
      if (paused.fleet)
        throw new DomainError('trading_paused', 'trading is paused for the whole fleet (kill switch); only orders that reduce an open position are accepted')
      if (paused.model)
        throw new DomainError('trading_paused', `trading is paused for model ${modelId} (kill switch); only orders that reduce an open position are accepted`)
    }
    if (tenant.plan !== 'EXECUTE') throw new DomainError('plan_forbids', `plan ${tenant.plan} does not allow orders; orders need the EXECUTE plan`)
    if (modelId !== null && input.side === 'BUY' && !(await activeModelIds(tx, tenantId)).includes(modelId)) {
      throw validationError('model_id', `model ${modelId} is not active in this workspace`)
    }
    const live = input.mode === 'LIVE' ? await findVenueAccount(tx, tenantId) : undefined
    if (input.mode === 'LIVE' && !live) throw new DomainError('venue_not_connected', 'a LIVE order needs a venue: connect one with PUT /api/v1/venue')
    const candle = await latestCandle(tx, input.pair)
    if (!candle) throw new DomainError('no_price', `no known price for ${input.pair}; import candles first (bulwark prices import)`)
    // Every limit is checked at the price the order will meet: a LIVE order's is the venue's.
    const venuePrice = live ? (context.venuePrice ?? (await findFreshMark(tx, tenantId, input.pair, FRESH_MARK_MS, now))) : undefined
    const last = venuePrice === undefined ? candle : { ...candle, close: venuePrice, venue: true }

    let quantity = input.quantity ?? null
    if (input.side === 'SELL') {
      const key = context.origin.gateway_key_id ?? null
      const hook = context.origin.alert_hook_id ?? null
      const scope = { tenant: tenantId, pair: input.pair, model: modelId, key, hook, mode: input.mode ?? 'PAPER' }
      const open = (await tx.get(openQuantity, scope))!.quantity
      const available = open - (await tx.get(pendingSellQuantity, scope))!.quantity
      const where = `${input.mode === 'LIVE' ? 'LIVE ' : ''}${input.pair}${modelId ? ` of model ${modelId}` : ''}${key ? ` of gateway key ${key}` : ''}${hook ? ` of alert hook ${hook}` : ''}`
      if (open <= EPSILON) throw validationError('side', `a SELL closes an open LONG position and there is none on ${where}; short selling is not supported`)
      if (available <= EPSILON) throw validationError('side', `pending SELL orders already cover the whole open position on ${where}`)
      // A SELL sized in USD becomes a quantity at the last price, never more than what is open.
      quantity ??= Math.min(input.notional_usd! / last.close, available)
      if (quantity > available * (1 + EPSILON))
        throw validationError('quantity', `exceeds the open position on ${where} not yet covered by pending SELL orders (${available})`)
    }
    if (live) {
      const price = input.limit_price ?? last.close
      const tooSmall = belowMinimum(live.exchange!, input.pair, quantity ?? input.notional_usd! / price, price)
      if (tooSmall) throw new DomainError('venue_rejected', `${tooSmall}; the order was not sent`)
    }
    const limits = await orderLimitsOf(tx, tenantId)
    const book = input.side === 'BUY' ? await currentBook(tx, tenantId) : { positions: 0, exposureUsd: 0 }
    const breach = await findBreach(tx, tenantId, limits, input, quantity, last, book, now)
    if (breach) {
      const notional = input.notional_usd ?? (quantity ?? 0) * (input.limit_price ?? last.close)
      const incident = await appendIncident(tx, {
        tenantId,
        action: 'RISK_LIMIT_BREACHED',
        actor,
        status: 'RECORDED',
        modelId: modelId ?? undefined,
        reason: `order refused: ${input.side} ${input.pair}: ${breach.detail}`,
        now,
      })
      await recordEvent(
        tx,
        tenantId,
        'risk.limit.breached',
        {
          incident_id: incident.id,
          limit: breach.limit,
          detail: breach.detail,
          pair: input.pair,
          side: input.side,
          model_id: modelId,
          notional_usd: notional,
          open_positions: book.positions,
          exposure_usd: book.exposureUsd,
          ...limits,
          incident: incidentRef(incident),
        },
        now,
      )
      return new RecordedRefusal(new DomainError('risk_limit_exceeded', `${breach.detail}; incident ${incident.id} recorded`))
    }

    if (input.side === 'SELL') await tripBeforeOrder(tx, tenantId, now) // written after the trip's fence, so it stays PENDING
    return toOrder(
      await insertPendingOrder(
        tx,
        tenantId,
        {
          model_id: modelId,
          pair: input.pair,
          side: input.side,
          type: input.type,
          quantity,
          notional_usd: input.notional_usd ?? null,
          limit_price: input.limit_price ?? null,
        },
        last,
        now,
        context.origin,
        live ? { exchange: live.exchange! } : undefined,
      ),
    )
  })
}
