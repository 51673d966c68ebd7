// Small DOM helpers: elements are built with text nodes only (never innerHTML), so nothing the API
// returns can become markup; and the one number format every view shares.

/**
 * An element: h('td', { class: 'num' }, '1.00'). Attributes with null/false are left out; children
 * are nodes or text (null skipped).
 */
export function h(tag, attributes = {}, ...children) {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value)
    else el.setAttribute(name, value === true ? '' : String(value))
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    el.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
  return el
}

const DASH = '\u2014'

/** 1234.5 -> "1,234.50"; null -> an em dash. */
export function money(x) {
  return x === null || x === undefined ? DASH : x.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })
}

/** A signed amount: "+12.00" / "-3.50". */
export function signed(x) {
  return x === null || x === undefined ? DASH : `${x > 0 ? '+' : ''}${money(x)}`
}

/** A percentage already in percent: 12.345 -> "+12.35%" (signed) or "12.35%". */
export function percent(x, sign = false) {
  if (x === null || x === undefined) return DASH
  return `${sign && x > 0 ? '+' : ''}${x.toFixed(2)}%`
}

/** A quantity or price: up to 8 decimals, no trailing zeros. */
export function amount(x) {
  return x === null || x === undefined ? DASH : x.toLocaleString('en-US', { maximumFractionDigits: 8 })
}

/** An ISO instant as "2026-05-01 12:00:00 UTC". */
export function when(iso) {
  return iso ? `${iso.slice(0, 19).replace('T', ' ')} UTC` : DASH
}

/** The first 12 hex digits of a hash, the whole in its title. */
export function shortHash(hash) {
  return h('code', { class: 'hash', title: hash }, `${hash.slice(0, 12)}\u2026`)
}

/**
 * A table in a keyboard-scrollable region (a narrow screen scrolls the table, never the page).
 * columns: [{ label, value: (row) => text or node, num?: true }]
 */
export function table(caption, columns, rows, options = {}) {
  const head = h('tr', {}, ...columns.map((c) => h('th', { scope: 'col', class: c.num ? 'num' : null }, c.label)))
  const body = rows.length
    ? rows.map((row) => h('tr', {}, ...columns.map((c) => h('td', { class: c.num ? 'num' : null }, c.value(row)))))
    : [h('tr', { class: 'empty' }, h('td', { colspan: columns.length }, options.empty ?? 'Nothing yet.'))]
  return h(
    'div',
    { class: 'scroll', role: 'region', tabindex: 0, 'aria-label': caption, id: options.id },
    h('table', {}, h('caption', {}, caption), h('thead', {}, head), h('tbody', {}, ...body)),
  )
}

/** A section with a heading, labelled by it. */
export function section(id, title, ...children) {
  return h('section', { class: 'panel', 'aria-labelledby': `${id}-title`, id }, h('h2', { id: `${id}-title` }, title), ...children)
}

/** Figures side by side: [{ label, value, id }]. */
export function figures(items) {
  return h(
    'dl',
    { class: 'figures' },
    ...items.map((item) => h('div', { class: 'figure', 'data-figure': item.id }, h('dt', {}, item.label), h('dd', {}, item.value))),
  )
}
