// What the Overview and Orders & trades views show of SPEC 13 for a trade, as GET /trades has it: an
// open LIVE position's protection resting on the venue (status, stop and take-profit prices, the
// venue's order ids) and a closed trade's exit reason. A FAILED protection says in words that the
// position is unprotected; its colour only repeats that (not everyone tells colours apart).
import { amount, h } from './dom.js'

const DASH = '\u2014'

/** The status as the API names it, with what FAILED means to the trader; the class only colours it. */
const STATUS = {
  NONE: ['NONE', ''],
  PLACING: ['PLACING', 'state-warning'],
  RESTING: ['RESTING', 'state-ok'],
  FAILED: ['FAILED: not protected', 'state-tripped'],
}

export const EXIT_REASONS = {
  manual: 'Manual order',
  signal: 'Signal',
  flatten: 'Flatten',
  venue_stop: 'Stop on the venue',
  venue_take_profit: 'Take-profit on the venue',
}

/**
 * The protection cell of a trade: an em dash where there is none to show (PAPER, CLOSED); otherwise
 * the status, then what rests ("stop 57,000; take-profit 66,000; venue orders 12, 13"), or for FAILED
 * where to read why (the venue's refusal is in the VENUE_PROTECTION_FAILED incident).
 * @example { label: 'Protection', value: protectionCell }
 */
export function protectionCell(trade) {
  const p = trade.protection
  if (!p) return DASH
  const [label, colour] = STATUS[p.status] ?? [p.status, '']
  const details = []
  if (p.stop_price !== null) details.push(`stop ${amount(p.stop_price)}`)
  if (p.take_profit_price !== null) details.push(`take-profit ${amount(p.take_profit_price)}`)
  if (p.venue_order_ids.length) details.push(`venue orders ${p.venue_order_ids.join(', ')}`)
  const why =
    p.status === 'FAILED'
      ? h('span', { class: 'protection-details' }, 'The venue refused it: see the ', h('a', { href: '#/incidents' }, 'incidents'), '.')
      : null
  return h(
    'span',
    { class: 'protection', 'data-status': p.status },
    h('span', { class: `state ${colour}`.trim() }, label),
    // The space keeps the words apart for a screen reader and in the text; the details show below.
    details.length ? [' ', h('span', { class: 'protection-details' }, details.join('; '))] : null,
    why ? [' ', why] : null,
  )
}

/** A closed trade's exit reason in words (its API name in data-exit-reason); an em dash while open or unknown. */
export function exitReasonCell(trade) {
  const reason = trade.exit_reason
  return reason ? h('span', { 'data-exit-reason': reason }, EXIT_REASONS[reason] ?? reason) : DASH
}

/** The pairs of open positions whose protection the venue refused, once each, in the order listed. */
export function unprotectedPairs(trades) {
  return [...new Set(trades.filter((t) => t.protection?.status === 'FAILED').map((t) => t.pair))]
}
