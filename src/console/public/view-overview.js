// Overview: where the tenant stands. Equity and its daily curve (GET /risk/equity/history, ending
// with today's equity from GET /risk/equity), today's PnL, exposure and drawdown, each breaker's
// utilization (GET /risk/equity) and the open positions, each LIVE one with its protection resting
// on the venue (SPEC 13); a pair the venue refused to protect is also named above the table, since
// the row alone may be far down a long list.
import { dailyLine } from './chart.js'
import { amount, figures, h, money, percent, section, signed, table, when } from './dom.js'
import { protectionCell, unprotectedPairs } from './protection.js'

const BREAKERS = {
  max_daily_loss_usd: { label: 'Daily loss', unit: 'USD' },
  max_drawdown_pct: { label: 'Drawdown', unit: '%' },
  max_consecutive_losses: { label: 'Losses in a row', unit: '' },
  max_orders_per_minute: { label: 'Orders in the last minute', unit: '' },
}

/** A breaker reading in its own unit: money for USD and percent, whole numbers for counts. */
export function reading(name, x) {
  return BREAKERS[name]?.unit ? money(x) : String(x)
}

/**
 * The daily history (a point at each UTC day's end) and, last, today's equity as it stands now, so a
 * tenant whose first UTC day has not ended yet still has a point.
 */
function equityPoints(history, equity) {
  const points = history.map((p) => ({ date: p.date, equity_usd: p.equity_usd }))
  const today = equity.as_of.slice(0, 10)
  if (!points.length || points.at(-1).date < today) points.push({ date: today, equity_usd: equity.equity_usd })
  return points
}

function equityChart(history, equity) {
  const points = equityPoints(history, equity)
  const box = h('div', { class: 'chart', id: 'equity-chart-plot', 'aria-hidden': 'true' })
  const first = points[0]
  const last = points.at(-1)
  const caption = history.length
    ? `Equity at each UTC day's end, then now: ${points.length} points, ${first.date} to ${last.date}; now ${money(last.equity_usd)} USD.`
    : `Equity now: ${money(last.equity_usd)} USD on ${last.date}, the one point so far; a point is added at the end of each UTC day.`
  const figure = h('figure', { class: 'chart-figure', id: 'equity-chart', 'data-points': points.length }, box, h('figcaption', {}, caption))
  // Drawn once the figure is in the document, so the chart takes its width.
  requestAnimationFrame(() =>
    dailyLine(
      box,
      points.map((p) => p.date),
      points.map((p) => p.equity_usd),
      'Equity (USD)',
    ).then(() => figure.setAttribute('data-drawn', 'true')),
  )
  return figure
}

export const overview = {
  id: 'overview',
  title: 'Overview',
  async render(ctx) {
    const [equity, history, open] = await Promise.all([
      ctx.api('GET', '/risk/equity'),
      ctx.api('GET', '/risk/equity/history'),
      ctx.api('GET', '/trades?status=OPEN&limit=1000'),
    ])
    const e = equity.body
    const unprotected = unprotectedPairs(open.body)
    return h(
      'div',
      { class: 'stack' },
      figures([
        { id: 'equity', label: 'Equity (USD)', value: money(e.equity_usd) },
        { id: 'daily_pnl', label: 'Daily PnL (USD)', value: signed(e.daily_pnl_usd) },
        { id: 'exposure', label: 'Exposure (USD)', value: money(e.exposure_usd) },
        { id: 'drawdown', label: 'Drawdown', value: percent(e.drawdown_pct) },
        { id: 'realized', label: 'Realized PnL (USD)', value: signed(e.realized_pnl_usd) },
        { id: 'unrealized', label: 'Unrealized PnL (USD)', value: signed(e.unrealized_pnl_usd) },
      ]),
      section('equity-curve', 'Equity curve', equityChart(history.body, e)),
      section(
        'breakers',
        'Circuit breakers',
        table(
          'Breakers that are on, with their utilization',
          [
            { label: 'Breaker', value: (b) => BREAKERS[b.name]?.label ?? b.name },
            { label: 'Value', num: true, value: (b) => reading(b.name, b.value) },
            { label: 'Limit', num: true, value: (b) => reading(b.name, b.limit) },
            {
              label: 'Utilization',
              value: (b) =>
                h(
                  'span',
                  { class: 'util' },
                  h('meter', { min: 0, max: 100, low: 80, high: 99.99, optimum: 0, value: Math.min(100, b.utilization_pct), 'aria-hidden': 'true' }),
                  percent(b.utilization_pct),
                ),
            },
            { label: 'State', value: (b) => h('span', { class: `state state-${b.state.toLowerCase()}` }, b.state) },
          ],
          e.breakers,
          { empty: 'No breaker is on: set the loss limits in the risk profile.' },
        ),
        h('p', { class: 'muted' }, `As of ${when(e.as_of)}.`),
      ),
      section(
        'positions',
        'Open positions',
        unprotected.length
          ? h(
              'p',
              { class: 'unprotected', id: 'unprotected' },
              h('strong', {}, `Not protected on the venue: ${unprotected.join(', ')}.`),
              ' The venue refused the protective order; the reason is in the ',
              h('a', { href: '#/incidents' }, 'incidents'),
              '.',
            )
          : null,
        table(
          'Open positions at the newest close of their pair',
          [
            { label: 'Pair', value: (t) => t.pair },
            { label: 'Model', value: (t) => t.model },
            { label: 'Mode', value: (t) => t.mode },
            { label: 'Quantity', num: true, value: (t) => amount(t.quantity) },
            { label: 'Entry', num: true, value: (t) => amount(t.entry_price) },
            { label: 'Mark', num: true, value: (t) => amount(t.mark_price) },
            { label: 'Net PnL', num: true, value: (t) => percent(t.pnl_pct, true) },
            { label: 'Opened', value: (t) => when(t.opened_at) },
            { label: 'Protection on the venue', value: protectionCell },
          ],
          open.body,
          { empty: 'No open positions.', id: 'open-positions' },
        ),
      ),
    )
  },
}
