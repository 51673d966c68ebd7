// Signals of the workspace's active models, newest first (GET /signals), each with its chain hash.
import { amount, h, shortHash } from './dom.js'
import { pagedTable } from './paged.js'

export const signals = {
  id: 'signals',
  title: 'Signals',
  async render(ctx) {
    const list = await pagedTable(ctx, {
      id: 'signals-table',
      caption: "Signals of the workspace's active models, newest first",
      path: '/signals?limit=50',
      empty: 'No signals yet: they are published daily for the active models.',
      columns: [
        { label: 'As of', value: (s) => s.as_of },
        { label: 'Model', value: (s) => s.model_id },
        { label: 'Pair', value: (s) => s.pair },
        { label: 'Action', value: (s) => s.action },
        { label: 'Direction', value: (s) => h('span', { class: `dir dir-${s.direction.toLowerCase()}` }, s.direction) },
        { label: 'Entry price', num: true, value: (s) => amount(s.entry_price) },
        { label: 'Hash', value: (s) => shortHash(s.hash) },
      ],
    })
    return h('div', { class: 'stack' }, list)
  },
}
