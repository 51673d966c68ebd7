// A backtest from the console: the form (model, days, friction, the strategy's parameters prefilled
// from GET /models), POST /backtests, its status polled while QUEUED or RUNNING, then its result:
// the figures, equity against buy-and-hold, drawdown, trades and result_hash. The figures and
// charts are the same as a model's forward record, so the Track records view draws those with them.
import { dailyLines } from './chart.js'
import { amount, figures, h, percent, section, table, when } from './dom.js'

const DASH = '\u2014'
const UNFINISHED = ['QUEUED', 'RUNNING']
const POLL_MS = 400

/** A fraction as a percentage: 0.1234 -> "+12.34%" (signed) or "12.34%". */
export const pct = (x, sign = false) => (x === null || x === undefined ? DASH : percent(x * 100, sign))
/** A ratio with 2 decimals: Sharpe, Sortino. */
export const ratio = (x) => (x === null || x === undefined ? DASH : x.toFixed(2))

/** The figures of GET /models/{id}/performance and of a backtest, in the same order. */
export function metricFigures(m, id) {
  return h(
    'div',
    { id },
    figures([
      { id: 'total_return', label: 'Return', value: pct(m.total_return, true) },
      { id: 'cagr', label: 'CAGR', value: pct(m.cagr, true) },
      { id: 'sharpe', label: 'Sharpe', value: ratio(m.sharpe) },
      { id: 'sortino', label: 'Sortino', value: ratio(m.sortino) },
      { id: 'max_drawdown', label: 'Max drawdown', value: pct(m.max_drawdown) },
      { id: 'win_rate', label: 'Win rate', value: pct(m.win_rate) },
      { id: 'trades', label: 'Trades', value: String(m.trades) },
      { id: 'exposure', label: 'Exposure', value: pct(m.exposure) },
      { id: 'benchmark', label: 'Buy and hold', value: pct(m.benchmark.total_return, true) },
    ]),
  )
}

/** A chart of daily lines with its caption; drawn once in the document, marked data-drawn then. */
export function curveChart(id, dates, lines, caption, options = {}) {
  const box = h('div', { class: 'chart', 'aria-hidden': 'true' })
  const figure = h('figure', { class: 'chart-figure', id, 'data-points': dates.length }, dates.length ? box : null, h('figcaption', {}, caption))
  if (dates.length) {
    requestAnimationFrame(() => dailyLines(box, dates, lines, options).then(() => figure.setAttribute('data-drawn', 'true')))
  }
  return figure
}

/** Equity (solid) against the buy-and-hold benchmark (dashed), from a curve of {date, equity, benchmark}. */
export function equityChart(id, curve) {
  const last = curve.at(-1)
  const caption = curve.length
    ? `Equity of the model portfolio (solid, 1 at the first close) and equal-weight buy-and-hold of its universe (dashed): ${curve.length} days, ${curve[0].date} to ${last.date}; last ${last.equity.toFixed(4)} against ${last.benchmark.toFixed(4)}.`
    : 'No equity curve: no signal in the window.'
  return curveChart(
    id,
    curve.map((p) => p.date),
    [
      { label: 'Equity', values: curve.map((p) => p.equity) },
      { label: 'Buy and hold', values: curve.map((p) => p.benchmark) },
    ],
    caption,
  )
}

function statusText(b) {
  if (b.status === 'QUEUED') return `Backtest ${b.id} is QUEUED: it runs once the workspace's running backtest has finished.`
  if (b.status === 'RUNNING') return `Backtest ${b.id} is RUNNING since ${when(b.started_at)}.`
  if (b.status === 'FAILED') return `Backtest ${b.id} FAILED: ${b.error}`
  return `Backtest ${b.id} SUCCEEDED at ${when(b.finished_at)}.`
}

function result(b) {
  const deepest = b.equity.reduce((min, p) => Math.min(min, p.drawdown), 0)
  const params = Object.entries(b.parameters)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ')
  return h(
    'div',
    { class: 'stack', id: 'backtest-result', 'data-id': b.id },
    h(
      'p',
      { class: 'muted' },
      `${b.model_id} from ${b.from} to ${b.to}; fee ${b.fee_bps} bps, slippage ${b.slippage_bps} bps; parameters ${params || 'none'}.`,
    ),
    metricFigures(b.metrics, 'backtest-figures'),
    equityChart('backtest-equity', b.equity),
    curveChart(
      'backtest-drawdown',
      b.equity.map((p) => p.date),
      [{ label: 'Drawdown', values: b.equity.map((p) => p.drawdown) }],
      `Drawdown from the running peak, ${b.equity.length} days; deepest ${pct(deepest)}.`,
      { percent: true, height: 160 },
    ),
    table(
      'Trades of the model portfolio, in order (return net of fee and slippage)',
      [
        { label: 'Pair', value: (t) => t.pair },
        { label: 'Entry', value: (t) => t.entry_date },
        { label: 'Entry price', num: true, value: (t) => amount(t.entry_price) },
        { label: 'Exit', value: (t) => t.exit_date ?? 'open' },
        { label: 'Exit price', num: true, value: (t) => amount(t.exit_price) },
        { label: 'Return', num: true, value: (t) => pct(t.return, true) },
      ],
      b.trades,
      { id: 'backtest-trades', empty: 'No trade: the model held nothing in these days.' },
    ),
    h('p', { class: 'verify' }, 'result_hash ', h('code', { class: 'hash full', id: 'result-hash' }, b.result_hash)),
  )
}

/**
 * The result panel: show(backtest) draws its status and, while it is unfinished, polls it until it
 * is not (or the panel has left the page); open(id) loads one first.
 */
function resultPanel(ctx, changed) {
  const status = h('p', { id: 'backtest-status', role: 'status', class: 'verify' }, 'No backtest opened yet: run one above, or open an earlier one below.')
  const body = h('div', {})
  let following = 0
  const show = (b) => {
    const run = ++following
    // A followed backtest that moved on: the list of earlier ones shows the new status too.
    if (status.dataset.id === b.id && status.dataset.status !== b.status) changed()
    status.dataset.id = b.id
    status.textContent = statusText(b)
    status.dataset.status = b.status
    body.replaceChildren(b.status === 'SUCCEEDED' ? result(b) : '')
    if (!UNFINISHED.includes(b.status)) return
    setTimeout(async () => {
      if (run !== following || !status.isConnected) return
      try {
        show((await ctx.api('GET', `/backtests/${encodeURIComponent(b.id)}`)).body)
      } catch (error) {
        ctx.showProblem(error)
      }
    }, POLL_MS)
  }
  const open = async (id) => {
    try {
      show((await ctx.api('GET', `/backtests/${encodeURIComponent(id)}`)).body)
      status.scrollIntoView({ block: 'nearest' })
    } catch (error) {
      ctx.showProblem(error)
    }
  }
  return { element: section('backtest', 'Backtest result', status, body), show, open }
}

function field(id, label, control, hint) {
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null)
}

const isoDay = (ms) => new Date(ms).toISOString().slice(0, 10)

/**
 * The form and the result panel. models: GET /models; profile: the risk profile (its friction is
 * the default); queued(): told after a backtest is queued or has moved on (the list of earlier ones is redrawn).
 */
export function backtestSections(ctx, models, profile, queued) {
  const panel = resultPanel(ctx, queued)
  const yesterday = Date.now() - 86_400_000
  const model = h('select', { id: 'bt-model', name: 'model_id' }, ...models.map((m) => h('option', { value: m.id }, `${m.name} (${m.id})`)))
  const from = h('input', { id: 'bt-from', name: 'from', type: 'date', required: true, value: isoDay(yesterday - 89 * 86_400_000) })
  const to = h('input', { id: 'bt-to', name: 'to', type: 'date', required: true, value: isoDay(yesterday), 'aria-describedby': 'bt-to-hint' })
  const fee = h('input', { id: 'bt-fee', name: 'fee_bps', type: 'number', min: 0, max: 1000, step: 'any', value: profile.fee_bps })
  const slippage = h('input', { id: 'bt-slippage', name: 'slippage_bps', type: 'number', min: 0, max: 1000, step: 'any', value: profile.slippage_bps })
  const params = h('fieldset', { id: 'bt-parameters', class: 'params' })
  const drawParams = () => {
    const m = models.find((x) => x.id === model.value)
    params.replaceChildren(
      h('legend', {}, `Parameters of ${m.strategy} (the model's own prefilled)`),
      ...Object.entries(m.parameters).map(([name, value]) =>
        field(`bt-param-${name}`, name, h('input', { id: `bt-param-${name}`, name, type: 'number', step: 'any', value, 'data-param': name })),
      ),
    )
  }
  model.addEventListener('change', drawParams)
  drawParams()
  const error = h('p', { class: 'form-error', id: 'bt-error', role: 'alert' })
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Run backtest')
  const form = h(
    'form',
    { id: 'backtest-form', class: 'stack', method: 'post', novalidate: true, 'aria-labelledby': 'new-backtest-title' },
    field('bt-model', 'Model', model),
    h('div', { class: 'grid-fields' }, field('bt-from', 'From', from), field('bt-to', 'To', to, 'Before today (UTC): its candle has closed.')),
    h('div', { class: 'grid-fields' }, field('bt-fee', 'Fee (bps)', fee), field('bt-slippage', 'Slippage (bps)', slippage)),
    params,
    error,
    h('div', { class: 'row' }, button),
  )
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    error.textContent = ''
    const body = { model_id: model.value, from: from.value, to: to.value, parameters: {} }
    if (fee.value !== '') body.fee_bps = Number(fee.value)
    if (slippage.value !== '') body.slippage_bps = Number(slippage.value)
    for (const input of params.querySelectorAll('input[data-param]')) if (input.value !== '') body.parameters[input.dataset.param] = Number(input.value)
    button.disabled = true
    let queuedOne
    try {
      queuedOne = (await ctx.api('POST', '/backtests', body)).body
    } catch (failure) {
      error.textContent = failure.message
      return
    } finally {
      button.disabled = false
    }
    panel.show(queuedOne)
    await queued()
  })
  return { form: section('new-backtest', 'Run a backtest', form), result: panel.element, open: panel.open }
}
