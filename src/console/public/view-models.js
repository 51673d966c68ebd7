// Track records & backtests: per model active in the workspace its forward record (GET
// /models/{id}/performance) with its equity against buy-and-hold, and the head of its signal chain
// (GET /public/models; with the public feed off, the export's signal_chain); then a backtest form
// and the workspace's earlier backtests. Any role may run a backtest (the route takes any caller).
import { ApiError } from './api.js'
import { backtestSections, equityChart, metricFigures } from './backtest.js'
import { h, section, shortHash, when } from './dom.js'
import { pagedTable } from './paged.js'

/**
 * Each model's chain head by id, and where it was read. The public list holds every model; when
 * the server has the feed off (404), each model's own export, which a session may read.
 */
async function chainHeads(ctx, ids) {
  try {
    const list = (await ctx.api('GET', '/public/models')).body
    return { source: 'GET /api/v1/public/models', heads: new Map(list.map((m) => [m.id, m.signal_chain])) }
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error
  }
  const exports = await Promise.all(ids.map((id) => ctx.api('GET', `/signals/export?model_id=${encodeURIComponent(id)}`)))
  return { source: "the model's export: the public feed is off", heads: new Map(exports.map((e) => [e.body.model_id, e.body.signal_chain])) }
}

function chainLine(id, head, source) {
  if (!head) return h('p', { class: 'muted', id: `chain-${id}` }, 'Signal chain: not known.')
  const what =
    head.count === 0
      ? ['Signal chain: empty (head ', shortHash(head.head_hash), ')']
      : [`Signal chain: ${head.count} ${head.count === 1 ? 'signal' : 'signals'}, head `, shortHash(head.head_hash), ` as of ${head.as_of}`]
  return h('p', { class: 'chain-head', id: `chain-${id}`, 'data-head': head.head_hash }, ...what, h('span', { class: 'muted' }, ` (from ${source}).`))
}

function trackRecord(model, performance, chain) {
  const p = performance
  const window = p.equity.length ? `Forward record from ${p.from} to ${p.to}, over the signals it published.` : 'No signal published yet: no forward record.'
  return section(
    `model-${model.id}`,
    model.name,
    h('p', { class: 'muted' }, `${model.id} ${model.version}, strategy ${model.strategy}. ${window}`),
    metricFigures(p.metrics, `figures-${model.id}`),
    equityChart(`equity-${model.id}`, p.equity),
    chainLine(model.id, chain.heads.get(model.id), chain.source),
  )
}

/** The workspace's backtests, newest first; each opens in the result panel. */
function earlierList(ctx, open) {
  return pagedTable(ctx, {
    id: 'backtests-table',
    caption: "The workspace's backtests, newest first",
    path: '/backtests?limit=20',
    empty: 'No backtest yet.',
    columns: [
      { label: 'Created', value: (b) => when(b.created_at) },
      { label: 'Id', value: (b) => b.id },
      { label: 'Model', value: (b) => b.model_id },
      { label: 'From', value: (b) => b.from },
      { label: 'To', value: (b) => b.to },
      { label: 'Fee (bps)', num: true, value: (b) => String(b.fee_bps) },
      { label: 'Slippage (bps)', num: true, value: (b) => String(b.slippage_bps) },
      { label: 'Status', value: (b) => b.status },
      {
        label: 'Result',
        value: (b) => h('button', { type: 'button', class: 'button quiet', 'aria-label': `Open ${b.id}`, onclick: () => open(b.id) }, 'Open'),
      },
    ],
  })
}

export const models = {
  id: 'models',
  title: 'Track records & backtests',
  async render(ctx) {
    const [workspace, catalogue, profile] = await Promise.all([ctx.api('GET', '/workspace'), ctx.api('GET', '/models'), ctx.api('GET', '/risk/profile')])
    const active = catalogue.body.filter((m) => workspace.body.active_model_ids.includes(m.id))
    const [performances, chain] = await Promise.all([
      Promise.all(active.map((m) => ctx.api('GET', `/models/${encodeURIComponent(m.id)}/performance`))),
      chainHeads(
        ctx,
        active.map((m) => m.id),
      ),
    ])
    const earlier = h('div', {})
    const backtest = backtestSections(ctx, catalogue.body, profile.body, async () => {
      try {
        earlier.replaceChildren(await earlierList(ctx, backtest.open))
      } catch (error) {
        ctx.showProblem(error)
      }
    })
    earlier.replaceChildren(await earlierList(ctx, backtest.open))
    return h(
      'div',
      { class: 'stack' },
      active.length ? null : h('p', { class: 'muted' }, 'No model is active in this workspace: activate one with PUT /api/v1/workspace/models.'),
      ...active.map((m, i) => trackRecord(m, performances[i].body, chain)),
      backtest.form,
      backtest.result,
      section('earlier-backtests', 'Earlier backtests', earlier),
    )
  },
}
