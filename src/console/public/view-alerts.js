// Alerts (SPEC 16; owner and admin: the hooks' routes refuse a viewer, so the view is not in a
// viewer's navigation): the tenant's alert hooks with their URLs (GET /alert-hooks, never a secret),
// a new one (POST /alert-hooks) shown once with its secret, its URL and a TradingView message ready
// to paste, revoking one after a confirmation, and what arrived at a hook (GET .../alerts). The new
// secret lives in this page only: a reload or another view forgets it, as the API does.
import { confirmAction } from './confirm.js'
import { h, section, when } from './dom.js'
import { copyField, field, formError, sending } from './form.js'
import { pagedTable } from './paged.js'

/** TradingView's published webhook addresses (tradingview.com/support/solutions/43000529348). */
export const TRADINGVIEW_ADDRESSES = ['52.89.214.238', '34.212.75.30', '54.218.53.128', '52.32.178.7']

/**
 * A strategy alert's message in TradingView's placeholders: the id unique per fill ({{strategy.order.id}}
 * names the entry, so the fire time is added), the quantity a bare number once filled in.
 */
export function tradingViewMessage(secret) {
  return `{"secret":"${secret}","id":"{{strategy.order.id}}-{{timenow}}","pair":"{{ticker}}","side":"{{strategy.order.action}}","quantity":{{strategy.order.contracts}},"timestamp":"{{timenow}}"}`
}

/** Kept across redraws: the hook whose alerts are open. */
const state = { open: null }

function shownOnce(hook) {
  return section(
    'alerts-created',
    `New alert hook “${hook.name}”`,
    h(
      'p',
      { class: 'warning', id: 'alerts-once-warning' },
      h('strong', {}, 'Copy the secret now: it will not be shown again.'),
      ' It is stored encrypted; every message must carry it.',
    ),
    copyField('alerts-url', 'webhook URL', hook.url, 'alerts-once-warning'),
    copyField('alerts-secret', 'secret', hook.secret, 'alerts-once-warning'),
    copyField('alerts-message', 'TradingView message', tradingViewMessage(hook.secret), 'alerts-once-warning'),
    h(
      'p',
      { class: 'hint' },
      `In TradingView's alert: Notifications, Webhook URL, the URL above; Message, the message above. It places a ${hook.mode} order per strategy fill; alerts older than ${hook.max_age_seconds} s are refused.`,
    ),
  )
}

/** Numbers as numbers, anything else as typed: the API is the one validator and names the field. */
function maxAge(text) {
  const t = text.trim()
  return /^\d+$/.test(t) ? Number(t) : t
}

function createForm(ctx, models, created) {
  const name = h('input', { id: 'alerts-name', name: 'name', type: 'text', maxlength: 100, autocomplete: 'off', required: true })
  const mode = h('select', { id: 'alerts-mode', name: 'mode' }, h('option', { value: 'PAPER' }, 'PAPER'), h('option', { value: 'LIVE' }, 'LIVE'))
  const model = h(
    'select',
    { id: 'alerts-model', name: 'model_id' },
    h('option', { value: '' }, 'None'),
    ...models.map((m) => h('option', { value: m.id }, `${m.name} (${m.id})`)),
  )
  const age = h('input', { id: 'alerts-max-age', name: 'max_age_seconds', type: 'text', inputmode: 'numeric', autocomplete: 'off', value: '60' })
  const cidrs = h('input', { id: 'alerts-cidrs', name: 'source_cidrs', type: 'text', autocomplete: 'off', spellcheck: 'false' })
  const fill = h('button', { type: 'button', class: 'button quiet', id: 'alerts-tradingview' }, "Use TradingView's addresses")
  fill.addEventListener('click', () => {
    cidrs.value = TRADINGVIEW_ADDRESSES.join(', ')
  })
  const error = formError('alerts-error')
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Create alert hook')
  const form = h(
    'form',
    { id: 'alerts-form', class: 'stack', method: 'post', novalidate: true, 'aria-labelledby': 'alerts-create-title' },
    field('alerts-name', 'Name', name, 'Which strategy or chart sends to it.'),
    field('alerts-mode', 'Mode', mode, 'LIVE orders go to the connected venue; PAPER ones to the paper broker.'),
    field('alerts-model', 'Model (optional)', model, 'Its orders count against the model: its pause, its positions.'),
    field('alerts-max-age', 'Maximum age (seconds)', age, 'An alert whose timestamp is older is refused: 5 to 86400.'),
    field('alerts-cidrs', 'Source addresses (optional)', cidrs, 'Addresses or CIDRs, separated by commas; empty for any.'),
    h('div', { class: 'row' }, fill),
    error,
    h('div', { class: 'row' }, button),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const body = { name: name.value.trim(), mode: mode.value, max_age_seconds: maxAge(age.value) }
    if (model.value) body.model_id = model.value
    const sources = cidrs.value.split(/[\s,]+/).filter(Boolean)
    if (sources.length) body.source_cidrs = sources
    sending(form, button, error, async () => {
      const answer = (await ctx.api('POST', '/alert-hooks', body)).body
      form.reset()
      await created(answer)
    })
  })
  return form
}

function hookList(ctx, revoke, open) {
  return pagedTable(ctx, {
    id: 'alerts-hooks-table',
    caption: "The tenant's alert hooks, newest first (the secrets are never shown again)",
    path: '/alert-hooks?limit=50',
    empty: 'No alert hook yet.',
    columns: [
      { label: 'Name', value: (k) => k.name },
      { label: 'URL', value: (k) => h('code', { class: 'hash full' }, k.url) },
      { label: 'Mode', value: (k) => k.mode },
      { label: 'Model', value: (k) => k.model_id ?? '\u2014' },
      { label: 'Max age', num: true, value: (k) => `${k.max_age_seconds} s` },
      { label: 'Sources', value: (k) => (k.source_cidrs.length ? k.source_cidrs.join(', ') : 'any') },
      { label: 'Refused', num: true, value: (k) => String(k.refused_count) },
      { label: 'State', value: (k) => (k.revoked_at ? `revoked ${when(k.revoked_at)}` : 'active') },
      {
        label: 'Alerts',
        value: (k) =>
          h(
            'button',
            { type: 'button', class: 'linkish', 'aria-label': `Show alerts of ${k.name}`, 'aria-pressed': String(k.id === state.open), onclick: () => open(k) },
            'Show alerts',
          ),
      },
      {
        label: 'Revoke',
        value: (k) =>
          k.revoked_at
            ? ''
            : h(
                'button',
                { type: 'button', class: 'button quiet', 'aria-label': `Revoke ${k.name}`, onclick: (event) => revoke(k, event.currentTarget) },
                'Revoke',
              ),
      },
    ],
  })
}

async function alertLog(ctx) {
  let hook
  try {
    hook = (await ctx.api('GET', `/alert-hooks/${encodeURIComponent(state.open)}`)).body
  } catch (error) {
    if (error.status !== 404) throw error
    state.open = null
    return null
  }
  const table = await pagedTable(ctx, {
    id: 'alerts-log-table',
    caption: `What arrived at “${hook.name}” with its secret, newest first`,
    path: `/alert-hooks/${encodeURIComponent(hook.id)}/alerts?limit=50`,
    empty: 'Nothing arrived yet.',
    columns: [
      { label: 'Received', value: (a) => when(a.received_at) },
      { label: 'Alert id', value: (a) => a.alert_id ?? '\u2014' },
      { label: 'Outcome', value: (a) => a.outcome },
      { label: 'Code', value: (a) => a.code ?? '' },
      { label: 'Reason', value: (a) => a.reason ?? '' },
      { label: 'Order', value: (a) => (a.order_id ? h('code', { class: 'hash' }, a.order_id) : '\u2014') },
      { label: 'Message', value: (a) => h('code', { class: 'hash full' }, a.message) },
    ],
  })
  const refused = hook.refused_count
    ? h('p', { class: 'hint' }, `${hook.refused_count} more refused before anything was recorded: a wrong secret or a source outside the hook's addresses.`)
    : null
  return h(
    'section',
    { class: 'panel', id: 'alerts-log', 'aria-labelledby': 'alerts-log-title' },
    h('h2', { id: 'alerts-log-title', tabindex: -1 }, `Alerts of “${hook.name}”`),
    refused,
    table,
  )
}

export const alerts = {
  id: 'alerts',
  title: 'Alerts',
  roles: ['owner', 'admin'],
  async render(ctx) {
    const models = (await ctx.api('GET', '/models')).body
    const once = h('div', {})
    const list = h('div', {})
    const log = h('div', {})
    const notice = h('p', { id: 'alerts-notice', role: 'status', class: 'verify' })
    const redraw = async () => {
      const [table, opened] = await Promise.all([hookList(ctx, revoke, open), state.open ? alertLog(ctx) : null])
      list.replaceChildren(table)
      log.replaceChildren(...(opened ? [opened] : []))
    }
    async function open(hook) {
      state.open = hook.id
      await redraw()
      document.getElementById('alerts-log-title')?.focus()
    }
    async function revoke(hook, button) {
      const summary = {
        title: `Revoke “${hook.name}”?`,
        text: `Alerts posted to ${hook.url} are refused from now on (404). What arrived stays listed. This cannot be undone.`,
        confirm: 'Revoke',
      }
      if (!(await confirmAction(summary))) return
      button.disabled = true
      try {
        const revoked = (await ctx.api('DELETE', `/alert-hooks/${encodeURIComponent(hook.id)}`)).body
        // The notice after the redraw: once it is read, the list says the same.
        await redraw()
        notice.textContent = `Alert hook “${revoked.name}” revoked at ${when(revoked.revoked_at)}.`
      } catch (error) {
        ctx.showProblem(error)
        button.disabled = false
      }
    }
    const form = createForm(ctx, models, async (answer) => {
      once.replaceChildren(shownOnce(answer))
      document.getElementById('alerts-secret')?.focus()
      await redraw()
    })
    await redraw()
    return h(
      'div',
      { class: 'stack' },
      once,
      h(
        'p',
        { class: 'muted' },
        'TradingView and other senders that cannot sign post alerts to a hook; each alert becomes an order through the same risk checks, breakers and kill switch as every other.',
      ),
      section('alerts-create', 'Create an alert hook', form),
      section('alerts-hooks', 'Alert hooks', notice, list),
      log,
    )
  },
}
