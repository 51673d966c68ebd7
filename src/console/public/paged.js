// A table of one of the API's paged lists (newest first): the first page, then "Show older" follows
// the answer's Link rel="next" until there is none.
import { h, table } from './dom.js'

/** The target of a Link header's rel="next", or null. */
export function nextLink(link) {
  const match = link ? /<([^>]+)>;\s*rel="next"/.exec(link) : null
  return match ? match[1] : null
}

/**
 * Loads `path` and resolves to the table (wrapped with its "Show older" button).
 * @example await pagedTable(ctx, { id: 'signals', caption: 'Signals', columns, path: '/signals?limit=50' })
 */
export async function pagedTable(ctx, { id, caption, columns, path, empty }) {
  const first = await ctx.api('GET', path)
  const wrap = h('div', { class: 'paged', id })
  let rows = first.body
  let next = nextLink(first.link)
  const draw = () => {
    const more = next
      ? h(
          'button',
          {
            type: 'button',
            class: 'button quiet',
            onclick: async (event) => {
              event.currentTarget.disabled = true
              try {
                const page = await ctx.api('GET', next)
                rows = rows.concat(page.body)
                next = nextLink(page.link)
                draw()
                wrap.querySelector('tbody tr:last-child td')?.focus()
              } catch (error) {
                ctx.showProblem(error)
                event.currentTarget.disabled = false
              }
            },
          },
          'Show older',
        )
      : null
    // replaceChildren, unlike h(), turns null into the text "null": the last page has no button.
    const count = h('p', { class: 'count muted' }, `${rows.length} shown${next ? '' : ', all of them'}`)
    wrap.replaceChildren(table(caption, columns, rows, { empty }), count, ...(more ? [more] : []))
    wrap.dataset.rows = String(rows.length)
  }
  draw()
  return wrap
}
