// Orders and trades (GET /orders, GET /trades), with what trading cost: fees and slippage in USD,
// and each trade's PnL before (gross) and after (net) them; an open LIVE trade's protection resting
// on the venue and a closed trade's exit reason (SPEC 13).
import { amount, h, money, percent, section, when } from './dom.js'
import { pagedTable } from './paged.js'
import { exitReasonCell, protectionCell } from './protection.js'

export const orders = {
  id: 'orders',
  title: 'Orders & trades',
  async render(ctx) {
    const [orderList, tradeList] = await Promise.all([
      pagedTable(ctx, {
        id: 'orders-table',
        caption: 'Orders, newest first',
        path: '/orders?limit=50',
        empty: 'No orders yet.',
        columns: [
          { label: 'Created', value: (o) => when(o.created_at) },
          { label: 'Pair', value: (o) => o.pair },
          { label: 'Side', value: (o) => o.side },
          { label: 'Type', value: (o) => o.type },
          { label: 'Quantity', num: true, value: (o) => amount(o.quantity) },
          { label: 'Status', value: (o) => o.status },
          { label: 'Fill price', num: true, value: (o) => amount(o.fill_price) },
          { label: 'Fees (USD)', num: true, value: (o) => money(o.fees_usd) },
          { label: 'Slippage (USD)', num: true, value: (o) => money(o.slippage_usd) },
          { label: 'Mode', value: (o) => o.mode },
        ],
      }),
      pagedTable(ctx, {
        id: 'trades-table',
        caption: 'Trades, newest first; net PnL is after fees and slippage',
        path: '/trades?limit=50',
        empty: 'No trades yet.',
        columns: [
          { label: 'Opened', value: (t) => when(t.opened_at) },
          { label: 'Model', value: (t) => t.model },
          { label: 'Pair', value: (t) => t.pair },
          { label: 'Quantity', num: true, value: (t) => amount(t.quantity) },
          { label: 'Entry', num: true, value: (t) => amount(t.entry_price) },
          { label: 'Exit / mark', num: true, value: (t) => amount(t.exit_price ?? t.mark_price) },
          { label: 'Gross PnL', num: true, value: (t) => percent(t.gross_pnl_pct, true) },
          { label: 'Fees (USD)', num: true, value: (t) => money(t.fees_usd) },
          { label: 'Slippage (USD)', num: true, value: (t) => money(t.slippage_usd) },
          { label: 'Net PnL', num: true, value: (t) => percent(t.pnl_pct, true) },
          { label: 'Status', value: (t) => t.status },
          { label: 'Protection on the venue', value: protectionCell },
          { label: 'Exit reason', value: exitReasonCell },
        ],
      }),
    ])
    return h('div', { class: 'stack' }, section('orders', 'Orders', orderList), section('trades', 'Trades', tradeList))
  },
}
