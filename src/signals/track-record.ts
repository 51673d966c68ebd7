// The public page's "Track record" section (SPEC 11): per model, its forward performance over the
// signals it published (src/performance/forward.ts), a small equity chart drawn on the server as
// inline SVG, the head of its signal chain (./chain.ts) and its last closed positions. Plain HTML:
// it reads without JavaScript, and the page's CSP needs no new hash (no inline style attribute).
import type { Queries, Store } from '../store/store.ts'
import { catalogue, type Model } from '../models/catalogue.ts'
import { forwardPerformance, type Performance } from '../performance/forward.ts'
import { chainHead } from './chain.ts'

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => escapes[c])

const CHART = { width: 320, height: 90, pad: 4 }
const CLOSED_SHOWN = 5
const DASH = '\u2014'

/** +12.34% (a fraction in, a signed percentage with two decimals out); a dash for no figure. */
export const percent = (x: number | null) => (x === null ? DASH : `${x > 0 ? '+' : ''}${(x * 100).toFixed(2)}%`)
export const ratio = (x: number | null) => (x === null ? DASH : x.toFixed(2))

/** Both curves on one scale, so the benchmark's line is comparable with the model's. */
function chart(p: Performance, model: Model): string {
  const { width, height, pad } = CHART
  const n = p.equity.length
  if (n === 0) return `<p class="none">No equity curve yet.</p>`
  const values = p.equity.flatMap((e) => [e.equity, e.benchmark])
  const lo = Math.min(...values)
  const hi = Math.max(...values)
  const x = (i: number) => (n === 1 ? width / 2 : pad + (i * (width - 2 * pad)) / (n - 1)).toFixed(1)
  const y = (v: number) => (hi === lo ? height / 2 : height - pad - ((v - lo) * (height - 2 * pad)) / (hi - lo)).toFixed(1)
  const line = (pick: (e: Performance['equity'][number]) => number) => p.equity.map((e, i) => `${x(i)},${y(pick(e))}`).join(' ')
  const label = `Equity of ${model.name} from ${p.from} to ${p.to}: ${percent(p.metrics.total_return)}; equal-weight buy and hold: ${percent(p.metrics.benchmark.total_return)}`
  return (
    `<svg class="chart" viewBox="0 0 ${width} ${height}" preserveAspectRatio="none" role="img" aria-label="${escapeHtml(label)}">` +
    `<polyline class="benchmark" fill="none" points="${line((e) => e.benchmark)}"/>` +
    `<polyline class="equity" fill="none" points="${line((e) => e.equity)}"/></svg>`
  )
}

function closedPositions(p: Performance): string {
  const closed = p.positions.filter((q) => q.exit_date !== null)
  if (closed.length === 0) return `<p class="none">No closed position yet.</p>`
  const rows = closed
    .slice(-CLOSED_SHOWN)
    .reverse()
    .map(
      (q) =>
        `<tr><td class="position">${escapeHtml(q.pair)}</td><td class="date">${q.entry_date} \u2192 ${q.exit_date}</td>` +
        `<td class="num ${(q.return ?? 0) >= 0 ? 'up' : 'down'}">${percent(q.return)}</td></tr>`,
    )
    .join('')
  return `<table class="closed"><caption>Last closed positions</caption><tbody>${rows}</tbody></table>`
}

async function modelCard(db: Queries, model: Model): Promise<string> {
  const p = await forwardPerformance(db, model.id)
  const head = await chainHead(db, model.id)
  const m = p.metrics
  const figure = (name: string, key: string, value: string) => `<div><dt>${name}</dt><dd data-metric="${key}">${value}</dd></div>`
  const chain =
    head.count === 0
      ? '<p class="chain">No signal chained yet.</p>'
      : `<p class="chain">Chain head <code class="hash" title="${head.head_hash}" data-hash="${head.head_hash}">${head.head_hash.slice(0, 12)}\u2026</code> \u00b7 ` +
        `<span data-count="${head.count}">${head.count.toLocaleString('en-US')} signals</span>${head.as_of ? `, as of ${head.as_of}` : ''}</p>`
  return (
    `<article class="record" data-model="${escapeHtml(model.id)}">` +
    `<h3>${escapeHtml(model.name)}<span class="version">v${escapeHtml(model.version)}</span></h3>` +
    `<p class="since">${p.from ? `since <time>${p.from}</time>` : 'no signal yet'}</p>` +
    `<dl class="figures">${figure('Return', 'total_return', percent(m.total_return))}${figure('Sharpe', 'sharpe', ratio(m.sharpe))}` +
    `${figure('Max drawdown', 'max_drawdown', percent(m.max_drawdown))}</dl>` +
    chart(p, model) +
    `<p class="legend"><span class="key equity"></span>model <span class="key benchmark"></span>equal-weight buy and hold ${percent(m.benchmark.total_return)}</p>` +
    chain +
    closedPositions(p) +
    '</article>'
  )
}

let cached: { version: string; html: string } | undefined

/**
 * The section's HTML, read through `db`; rebuilt only when the database has changed since (any
 * write, by this process or another, changes store.version()), so a busy page costs one render per
 * change. An engine that cannot tell (version() undefined) renders it every time.
 */
export async function trackRecordHtml(db: Queries, store: Store, synthetic: boolean): Promise<string> {
  // Taken before the reads: a write committed while they run makes the next call render again.
  const dataVersion = store.version()
  const version = dataVersion === undefined ? undefined : `${dataVersion}\n${synthetic}`
  if (version !== undefined && cached?.version === version) return cached.html
  const models = (await catalogue(db)).filter((m) => m.status !== 'RETIRED')
  const note = synthetic
    ? '<p class="demo-note" id="track-synthetic">Computed over the synthetic demo prices: an illustration of the method, not a record of any market.</p>'
    : ''
  const cards: string[] = []
  for (const model of models) cards.push(await modelCard(db, model))
  const html =
    '<section class="track" id="track-record" aria-labelledby="track-title"><h2 id="track-title">Track record</h2>' +
    '<p class="lede">Each model\'s forward record: a portfolio holding an equal share of every pair its published signals say to hold, ' +
    'rebalanced at each daily close, fees and slippage charged.</p>' +
    note +
    `<div class="records">${cards.join('')}</div></section>`
  if (version !== undefined) cached = { version, html }
  return html
}
