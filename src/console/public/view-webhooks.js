// Webhooks (SPEC 7): the tenant's endpoints (GET /webhooks), one endpoint's settings, its test event,
// secret rotation and removal, its deliveries with their attempts and redelivery, and a new endpoint.
// Every webhook route needs an owner or admin, even to read (URLs and delivery errors describe the
// tenant's own systems), so the view is for those roles only: a viewer's navigation has none.
import { confirmAction } from './confirm.js'
import { h, section, when } from './dom.js'
import { field, formError, sending } from './form.js'
import { pagedTable } from './paged.js'

/** The event types the API takes (its `events` enum; test/console/webhooks-venue.test.ts compares the two). */
export const EVENTS = [
  'signal.published',
  'order.created',
  'order.filled',
  'order.canceled',
  'trade.opened',
  'trade.closed',
  'risk.kill_switch.engaged',
  'risk.trading.resumed',
  'risk.limit.breached',
  'risk.limit.warning',
  'risk.circuit_breaker.tripped',
  'risk.dead_man_switch.fired',
  'venue.mismatch',
  'venue.protection_failed',
  'webhook.ping',
]

/** Kept across redraws: the endpoint whose details are open, and a signing secret to show once. */
const state = { open: null, secret: null }

function eventsField(prefix, chosen) {
  const box = (value, label) => {
    const id = `${prefix}-ev-${value === '*' ? 'all' : value.replaceAll('.', '-')}`
    return h(
      'div',
      { class: 'check' },
      h('input', { type: 'checkbox', id, name: 'events', value, checked: chosen.includes(value) }),
      h('label', { for: id }, label),
    )
  }
  const set = h(
    'fieldset',
    { class: 'events' },
    h('legend', {}, 'Events'),
    box('*', 'All events (*)'),
    h('div', { class: 'checks' }, ...EVENTS.map((e) => box(e, e))),
  )
  return { node: set, value: () => [...set.querySelectorAll('input:checked')].map((input) => input.value) }
}

function urlInput(id, value) {
  return h('input', { id, name: 'url', type: 'url', required: true, autocomplete: 'off', spellcheck: 'false', value })
}

function descriptionInput(id, value) {
  return h('input', { id, name: 'description', type: 'text', maxlength: 500, autocomplete: 'off', value: value ?? '' })
}

function createForm(ctx) {
  const url = urlInput('wh-new-url', '')
  const events = eventsField('wh-new', ['*'])
  const description = descriptionInput('wh-new-description')
  const error = formError('wh-new-error')
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Add endpoint')
  const form = h(
    'form',
    { id: 'create-webhook', class: 'stack', method: 'post', novalidate: true, 'aria-labelledby': 'new-webhook-title' },
    field('wh-new-url', 'URL', url, 'https only; an address on a private network only where the operator allowed it.'),
    events.node,
    field('wh-new-description', 'Description (optional)', description),
    error,
    h('div', { class: 'row' }, button),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const body = { url: url.value.trim(), events: events.value() }
    if (description.value.trim()) body.description = description.value.trim()
    sending(form, button, error, async () => {
      const created = (await ctx.api('POST', '/webhooks', body)).body
      state.open = created.id
      state.secret = { url: created.url, secret: created.signing_secret, until: null }
      await ctx.rerender(`Endpoint ${created.id} added: ${created.url}.`)
    })
  })
  return section('new-webhook', 'Add an endpoint', form)
}

function secretPanel(shown) {
  return h(
    'section',
    { class: 'panel secret', id: 'secret-panel', 'aria-labelledby': 'secret-title' },
    h('h2', { id: 'secret-title', tabindex: -1 }, 'Signing secret, shown this once'),
    h('p', {}, `For ${shown.url}. Copy it now: the API never shows it again.`),
    h('code', { class: 'hash full', id: 'signing-secret' }, shown.secret),
    shown.until ? h('p', { class: 'hint' }, `The previous secret also signs (webhook-signature) until ${when(shown.until)}.`) : null,
  )
}

function endpointList(ctx) {
  const open = (w) => async () => {
    state.open = w.id
    await ctx.rerender()
    document.getElementById('endpoint-title')?.focus()
  }
  return pagedTable(ctx, {
    id: 'webhooks-table',
    caption: 'Endpoints, newest first; choose one for its settings and deliveries',
    path: '/webhooks?limit=50',
    empty: 'No endpoint yet.',
    columns: [
      { label: 'URL', value: (w) => h('button', { type: 'button', class: 'linkish', 'aria-pressed': String(w.id === state.open), onclick: open(w) }, w.url) },
      { label: 'Events', value: (w) => w.events.join(', ') },
      { label: 'Status', value: (w) => w.status },
      { label: 'Description', value: (w) => w.description ?? '' },
      { label: 'Failing since', value: (w) => when(w.failing_since) },
      { label: 'Created', value: (w) => when(w.created_at) },
    ],
  })
}

/** One button that calls the API (after a confirmation when `ask` is given), then redraws with a notice. */
function action(ctx, label, className, run, ask) {
  const button = h('button', { type: 'button', class: `button ${className}` }, label)
  button.addEventListener('click', async () => {
    if (ask && !(await confirmAction(ask))) return
    button.disabled = true
    try {
      await ctx.rerender(await run())
    } catch (error) {
      ctx.showProblem(error)
      if (button.isConnected) button.disabled = false
    }
  })
  return button
}

function editForm(ctx, w) {
  const url = urlInput('wh-edit-url', w.url)
  const events = eventsField('wh-edit', w.events)
  const description = descriptionInput('wh-edit-description', w.description)
  const status = h(
    'select',
    { id: 'wh-edit-status', name: 'status' },
    ...['ACTIVE', 'DISABLED'].map((s) => h('option', { value: s, selected: s === w.status }, s)),
  )
  const error = formError('wh-edit-error')
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Save changes')
  const form = h(
    'form',
    { id: 'edit-webhook', class: 'stack', method: 'post', novalidate: true, 'aria-label': 'Endpoint settings' },
    field('wh-edit-url', 'URL', url),
    events.node,
    field('wh-edit-description', 'Description (optional)', description),
    field('wh-edit-status', 'Status', status, 'A DISABLED endpoint gets no new events; ACTIVE again sends what waited.'),
    error,
    h('div', { class: 'row' }, button),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const body = { url: url.value.trim(), events: events.value(), description: description.value.trim() || null, status: status.value }
    sending(form, button, error, async () => {
      const saved = (await ctx.api('PATCH', `/webhooks/${w.id}`, body)).body
      await ctx.rerender(`Endpoint ${saved.id} saved: ${saved.url}, ${saved.status}, events ${saved.events.join(', ')}.`)
    })
  })
  return form
}

async function deliveries(ctx, w) {
  const redeliver = (d) =>
    action(ctx, 'Redeliver', 'quiet', async () => {
      const copy = (await ctx.api('POST', `/webhooks/${w.id}/deliveries/${d.id}/redeliver`)).body
      return `Event ${copy.event_id} queued again as delivery ${copy.id}.`
    })
  return pagedTable(ctx, {
    id: 'deliveries-table',
    caption: 'Deliveries, newest first: each with its attempts and the last one’s answer',
    path: `/webhooks/${w.id}/deliveries?limit=50`,
    empty: 'No delivery yet: send a test event.',
    columns: [
      { label: 'Delivery', value: (d) => h('code', { class: 'hash' }, d.id) },
      { label: 'Event', value: (d) => d.event_type },
      { label: 'Status', value: (d) => d.status },
      { label: 'Attempts', num: true, value: (d) => String(d.attempts) },
      { label: 'Last attempt', value: (d) => when(d.last_attempt_at) },
      { label: 'Response', num: true, value: (d) => (d.last_status_code === null ? '\u2014' : String(d.last_status_code)) },
      { label: 'Error', value: (d) => d.last_error ?? '' },
      { label: 'Next attempt', value: (d) => when(d.next_attempt_at) },
      { label: 'Delivered', value: (d) => when(d.delivered_at) },
      { label: 'Redelivery of', value: (d) => d.redelivery_of ?? '' },
      { label: 'Created', value: (d) => when(d.created_at) },
      { label: 'Again', value: redeliver },
    ],
  })
}

async function endpointPanel(ctx) {
  let w
  try {
    w = (await ctx.api('GET', `/webhooks/${state.open}`)).body
  } catch (error) {
    if (error.status !== 404) throw error
    state.open = null
    return null
  }
  const test = action(ctx, 'Send test event', 'primary', async () => {
    const d = (await ctx.api('POST', `/webhooks/${w.id}/test`)).body
    return `Test event ${d.event_id} (webhook.ping) queued as delivery ${d.id}.`
  })
  const rotate = action(
    ctx,
    'Rotate secret…',
    'quiet',
    async () => {
      const rotated = (await ctx.api('POST', `/webhooks/${w.id}/rotate-secret`)).body
      state.secret = { url: rotated.url, secret: rotated.signing_secret, until: rotated.previous_secret_expires_at }
      return `Secret of ${rotated.id} rotated: the new one signs from now on.`
    },
    { title: 'Rotate the signing secret?', text: `A new secret for ${w.url}, used at once; the current one also signs for 24 hours.`, confirm: 'Rotate' },
  )
  const remove = action(
    ctx,
    'Delete endpoint…',
    'danger',
    async () => {
      const gone = (await ctx.api('DELETE', `/webhooks/${w.id}`)).body
      state.open = null
      return `Endpoint ${gone.id} deleted with its deliveries: ${gone.url}.`
    },
    { title: 'Delete this endpoint?', text: `${w.url} and its deliveries are removed; pending ones are never sent.`, confirm: 'Delete' },
  )
  const refresh = action(ctx, 'Refresh deliveries', 'quiet', async () => undefined)
  return h(
    'section',
    { class: 'panel', id: 'endpoint', 'aria-labelledby': 'endpoint-title' },
    h('h2', { id: 'endpoint-title', tabindex: -1 }, `Endpoint ${w.id}`),
    editForm(ctx, w),
    h('div', { class: 'row actions' }, test, rotate, remove),
    h('h3', {}, 'Deliveries'),
    h('div', { class: 'row' }, refresh),
    await deliveries(ctx, w),
  )
}

export const webhooks = {
  id: 'webhooks',
  title: 'Webhooks',
  roles: ['owner', 'admin'],
  async render(ctx) {
    const secret = state.secret
    state.secret = null
    const [list, open] = await Promise.all([endpointList(ctx), state.open ? endpointPanel(ctx) : null])
    return h(
      'div',
      { class: 'stack' },
      secret ? secretPanel(secret) : null,
      h('p', { class: 'muted' }, "Bulwark POSTs the tenant's events to these HTTPS endpoints, signed with each endpoint's secret, at least once."),
      section('endpoints', 'Endpoints', list),
      open,
      createForm(ctx),
    )
  },
}
