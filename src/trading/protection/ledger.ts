// What a protection's fills do to the ledger (SPEC 13): each venue fill, applied once
// (protection_fills, sql/016), sells out of the pair's open LIVE trades, oldest first over every
// model, at the venue's fill price with the venue's fee, the exit reason its leg gives; the breakers
// look at the new equity. Also the incidents a protection records, each in the transaction `tx`.
import { query, type Tx } from '../../store/store.ts'
import { evaluateBreakers } from '../../risk/breakers.ts'
import { appendIncident } from '../../risk/incidents.ts'
import { recordEvent } from '../../webhooks/events.ts'
import { closeFromTrades, type ExitReason, openTradesOf } from '../fills.ts'
import { tradeOf } from '../trades.ts'
import { unsellableOn } from '../live/dust.ts'
import { feeUsd, type VenueFill } from '../live/live-fills.ts'
import type { ProtectionRow } from './store.ts'

export const PROTECTION_ACTOR = 'protection@localhost'

const insertFill = query(`INSERT INTO protection_fills (tenant_id, pair, venue_order_id, venue_trade_id, quantity, price, fee_usd, filled_at)
  VALUES (@tenant, @pair, @order, @trade, @quantity, @price, @fee, @at) ON CONFLICT DO NOTHING`)

/**
 * Applies the venue's fills of one protective order; returns how many were new. `reference` is the
 * price the sale was meant at (the trigger, the take-profit, the mark), for slippage attribution.
 */
export async function applyProtectionFills(
  tx: Tx,
  row: ProtectionRow,
  venueOrderId: string,
  fills: VenueFill[],
  exitReason: ExitReason,
  reference: number,
  now: Date,
): Promise<number> {
  let applied = 0
  for (const fill of fills) {
    const fee = await feeUsd(tx, row.pair, fill)
    const inserted = await tx.run(insertFill, {
      tenant: row.tenant_id,
      pair: row.pair,
      order: venueOrderId,
      trade: fill.id,
      quantity: fill.amount,
      price: fill.price,
      fee,
      at: new Date(fill.timestamp).toISOString(),
    })
    if (inserted.changes === 0) continue
    applied++
    // No model: every model's open LIVE trades in the pair, oldest first.
    const trades = await tx.all(openTradesOf, { tenant: row.tenant_id, pair: row.pair, model: null, key: null, hook: null, mode: 'LIVE' })
    const held = trades.reduce((sum, t) => sum + t.quantity, 0)
    const sold = Math.min(fill.amount, held)
    if (sold <= 0) continue
    const sale = { quantity: sold, market: reference, price: fill.price, feesUsd: fee, mode: 'LIVE' as const, exitReason }
    const closed = await closeFromTrades(tx, { ...sale, unsellable: unsellableOn(row.exchange, row.pair, fill.price) }, trades, now)
    for (const id of closed) await recordEvent(tx, row.tenant_id, 'trade.closed', { ...(await tradeOf(tx, row.tenant_id, id))! }, now)
  }
  // A fill changes equity: the breakers look at once, as after any fill.
  if (applied > 0) await evaluateBreakers(tx, row.tenant_id, now)
  return applied
}

const filledSum = query<{ tenant: string; pair: string; order: string }, { quantity: number; average: number | null }>(`
  SELECT coalesce(sum(quantity), 0) AS quantity, sum(quantity * price) / sum(quantity) AS average FROM protection_fills
  WHERE tenant_id = @tenant AND pair = @pair AND venue_order_id = @order`)

/** VENUE_PROTECTION_FILLED: a protective order of the row filled (in whole, or in part before it ended). */
export async function recordProtectionFilled(tx: Tx, row: ProtectionRow, venueOrderId: string, what: string, now: Date): Promise<void> {
  const { quantity, average } = (await tx.get(filledSum, { tenant: row.tenant_id, pair: row.pair, order: venueOrderId }))!
  await appendIncident(tx, {
    tenantId: row.tenant_id,
    action: 'VENUE_PROTECTION_FILLED',
    actor: PROTECTION_ACTOR,
    status: 'RECORDED',
    reason: `${row.exchange} order ${venueOrderId} (${what}) filled ${quantity} ${row.pair} at ${average ?? 'no price'}`,
    now,
  })
}

/** VENUE_PROTECTION_FAILED and its event: the venue refused to protect the pair. */
export async function recordProtectionFailed(tx: Tx, row: ProtectionRow, reason: string, now: Date): Promise<void> {
  const incident = await appendIncident(tx, {
    tenantId: row.tenant_id,
    action: 'VENUE_PROTECTION_FAILED',
    actor: PROTECTION_ACTOR,
    status: 'RECORDED',
    reason: `the ${row.exchange} protection of ${row.pair} (${describe(row)}) was refused: ${reason}`,
    now,
  })
  await recordEvent(tx, row.tenant_id, 'venue.protection_failed', { pair: row.pair, reason, incident_id: incident.id }, now)
}

/** VENUE_PROTECTION_REPLACED: a stop-limit the price gapped through, canceled for a market sale. */
export async function recordProtectionReplaced(tx: Tx, row: ProtectionRow, venueOrderId: string, triggeredAt: number, now: Date): Promise<void> {
  await appendIncident(tx, {
    tenantId: row.tenant_id,
    action: 'VENUE_PROTECTION_REPLACED',
    actor: PROTECTION_ACTOR,
    status: 'RECORDED',
    reason: `${row.exchange} stop-limit order ${venueOrderId} on ${row.pair} (trigger ${row.stop_price}, limit ${row.stop_limit_price}) triggered at ${new Date(triggeredAt).toISOString()} and did not fill within 10 s: canceled and replaced by a market sale`,
    now,
  })
}

/** The protection in words: what rests, at which prices. */
export function describe(row: Pick<ProtectionRow, 'kind' | 'quantity' | 'stop_price' | 'stop_limit_price' | 'take_profit_price'>): string {
  const parts = [`${row.kind} of ${row.quantity}`]
  if (row.stop_price !== null) parts.push(`stop ${row.stop_price}${row.stop_limit_price === null ? '' : ` limit ${row.stop_limit_price}`}`)
  if (row.take_profit_price !== null) parts.push(`take-profit ${row.take_profit_price}`)
  return parts.join(', ')
}
