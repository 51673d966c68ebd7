// The incident trail (GET /risk/incidents), newest first, and "Verify chain": the API recomputes
// the tenant's hash chain (GET /risk/incidents/verify); its answer and head hash are shown whole,
// so the head can be kept outside the service and checked again later.
import { h, section, shortHash } from './dom.js'
import { pagedTable } from './paged.js'

function verification(result) {
  if (!result.valid) {
    return [h('strong', {}, 'The chain is broken'), ` at incident ${result.broken_at ?? '?'} (${result.count} incidents checked).`]
  }
  if (result.count === 0) return [h('strong', {}, 'The chain is valid:'), ' no incident yet.']
  return [
    h('strong', {}, 'The chain is valid:'),
    ` ${result.count} ${result.count === 1 ? 'incident' : 'incidents'} recomputed. Head hash `,
    h('code', { class: 'hash full', id: 'head-hash' }, result.head_hash),
  ]
}

export const incidents = {
  id: 'incidents',
  title: 'Incidents',
  async render(ctx) {
    const output = h('p', { id: 'verify-result', class: 'verify', role: 'status' })
    const button = h('button', { type: 'button', class: 'button', id: 'verify-chain' }, 'Verify chain')
    button.addEventListener('click', async () => {
      button.disabled = true
      output.replaceChildren('Verifying…')
      output.removeAttribute('data-valid')
      try {
        const result = (await ctx.api('GET', '/risk/incidents/verify')).body
        output.replaceChildren(...verification(result))
        output.dataset.valid = String(result.valid)
      } catch (error) {
        output.replaceChildren()
        ctx.showProblem(error)
      } finally {
        button.disabled = false
      }
    })
    const trail = await pagedTable(ctx, {
      id: 'incidents-table',
      caption: 'Incident trail, newest first',
      path: '/risk/incidents?limit=50',
      empty: 'No incidents yet.',
      columns: [
        { label: 'Time', value: (i) => i.timestamp },
        { label: 'Action', value: (i) => i.action },
        { label: 'Status', value: (i) => i.status },
        { label: 'Model', value: (i) => i.model_id },
        { label: 'Actor', value: (i) => i.actor },
        { label: 'Reason', value: (i) => i.reason ?? '' },
        { label: 'Hash', value: (i) => shortHash(i.hash) },
      ],
    })
    return h(
      'div',
      { class: 'stack' },
      section(
        'verify',
        'Integrity',
        h('p', { class: 'muted' }, 'Every incident is chained to the one before it by a SHA-256 hash; verifying recomputes the whole chain on the server.'),
        h('div', { class: 'row' }, button),
        output,
      ),
      section('trail', 'Trail', trail),
    )
  },
}
