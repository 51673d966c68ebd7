// Risk: the profile's limits and venue protection (GET /risk/profile), the kill switch and resume
// (POST /risk/kill-switch), and the dead man's switch (./dead-man-switch.js). The controls are drawn
// only for owner and admin: a viewer would be refused (403), so it sees none. The kill switch and
// resume each ask for a reason (it goes into the incident) and a confirmation before anything is sent.
import { confirmAction } from './confirm.js'
import { deadManSwitchPanel } from './dead-man-switch.js'
import { h, money, section } from './dom.js'
import { profileEditor } from './risk-edit.js'

const ACTIONS = [
  ['CANCEL_AND_PAUSE', 'Cancel and pause', 'cancel pending orders and stop new ones'],
  ['PAUSE', 'Pause', 'stop new orders, keep the pending ones'],
  ['CANCEL_ORDERS', 'Cancel orders', 'cancel pending orders, leave the pause as it is'],
  ['FLATTEN', 'Flatten', 'cancel, pause and close open trades at the last price'],
]

const LIMITS = [
  ['capital_usd', 'Capital (USD)', money],
  ['max_open_trades', 'Max open trades', String],
  ['max_exposure_usd', 'Max exposure (USD)', money],
  ['fee_bps', 'Fee (bps)', String],
  ['slippage_bps', 'Slippage (bps)', String],
  ['max_daily_loss_usd', 'Max daily loss (USD)', money],
  ['max_drawdown_pct', 'Max drawdown (%)', String],
  ['max_consecutive_losses', 'Max losses in a row', String],
  ['breaker_action', 'Breaker action', String],
  ['max_order_notional_usd', 'Max order notional (USD)', money],
  ['price_band_pct', 'Price band (%)', String],
  ['max_trades_per_day', 'Max trades per day', String],
  ['max_orders_per_minute', 'Max orders per minute', String],
  ['venue_stop_loss_pct', 'Venue stop-loss (%)', String],
  ['venue_take_profit_pct', 'Venue take-profit (%)', String],
  ['stop_limit_offset_pct', 'Stop-limit offset (%)', String],
  ['unprotected_action', 'Unprotected action', String],
]

function profileList(profile) {
  const state = profile.trading_paused
    ? 'paused (whole fleet)'
    : profile.paused_model_ids.length
      ? `paused for ${profile.paused_model_ids.join(', ')}`
      : 'active'
  return h(
    'dl',
    { class: 'pairs', id: 'profile' },
    h('div', { 'data-field': 'trading' }, h('dt', {}, 'Trading'), h('dd', {}, state)),
    ...LIMITS.map(([field, label, format]) =>
      h('div', { 'data-field': field }, h('dt', {}, label), h('dd', {}, profile[field] === null ? 'off' : format(profile[field]))),
    ),
  )
}

function field(id, label, control) {
  return h('div', { class: 'field' }, h('label', { for: id }, label), control)
}

/** Sends one kill switch request after the confirmation; the view is redrawn with the result. */
async function operate(ctx, body, summary, button) {
  if (!(await confirmAction(summary))) return
  button.disabled = true
  try {
    const result = (await ctx.api('POST', '/risk/kill-switch', body)).body
    const scope = result.model_id === 'all' ? 'the whole fleet' : `model ${result.model_id}`
    const state = result.trading_paused ? 'paused' : 'not paused'
    await ctx.rerender(
      `${result.status}: ${scope} is ${state}; ${result.canceled_orders} pending ${result.canceled_orders === 1 ? 'order' : 'orders'} canceled; incident ${result.incident_id}.`,
    )
  } catch (error) {
    ctx.showProblem(error)
    button.disabled = false
  }
}

function reasonInput(id) {
  return h('input', { id, name: 'reason', type: 'text', maxlength: 500, required: true, autocomplete: 'off', 'aria-describedby': `${id}-hint ${id}-error` })
}

/** The reason is asked for before anything else: an empty one is refused here, next to the field. */
function reasonGiven(reason) {
  const error = document.getElementById(`${reason.id}-error`)
  if (reason.value.trim()) {
    error.textContent = ''
    reason.removeAttribute('aria-invalid')
    return true
  }
  error.textContent = 'Give a reason: it is recorded in the incident trail.'
  reason.setAttribute('aria-invalid', 'true')
  reason.focus()
  return false
}

function reasonField(reason) {
  return h(
    'div',
    { class: 'field' },
    h('label', { for: reason.id }, 'Reason'),
    reason,
    h('p', { class: 'hint', id: `${reason.id}-hint` }, 'Recorded in the incident trail.'),
    h('p', { class: 'form-error', id: `${reason.id}-error`, role: 'alert' }),
  )
}

function killSwitchForm(ctx, models) {
  const action = h('select', { id: 'ks-action', name: 'action' }, ...ACTIONS.map(([value, label, what]) => h('option', { value }, `${label}: ${what}`)))
  const scope = h(
    'select',
    { id: 'ks-scope', name: 'scope' },
    h('option', { value: 'all' }, 'The whole fleet'),
    ...models.map((m) => h('option', { value: m.id }, `Model ${m.name} (${m.id})`)),
  )
  const reason = reasonInput('ks-reason')
  const button = h('button', { type: 'submit', class: 'button danger' }, 'Engage kill switch…')
  const form = h(
    'form',
    { id: 'kill-switch', class: 'stack', method: 'post', novalidate: true, 'aria-labelledby': 'kill-switch-title' },
    field('ks-action', 'Action', action),
    field('ks-scope', 'Scope', scope),
    reasonField(reason),
    h('div', { class: 'row' }, button),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    if (!reasonGiven(reason)) return
    const chosen = ACTIONS.find(([value]) => value === action.value)
    const body = { action: action.value, pause: action.value !== 'CANCEL_ORDERS', reason: reason.value.trim() }
    if (scope.value !== 'all') body.model_id = scope.value
    const target = scope.value === 'all' ? 'the whole fleet' : `model ${scope.value}`
    operate(
      ctx,
      body,
      { title: `${chosen[1]} ${target}?`, text: `${chosen[1]} (${chosen[2]}) for ${target}. Reason: “${body.reason}”.`, confirm: chosen[1] },
      button,
    )
  })
  return section('kill-switch', 'Kill switch', form)
}

function resumeForm(ctx, profile) {
  const scope = h(
    'select',
    { id: 'resume-scope', name: 'scope' },
    h('option', { value: 'all' }, profile.trading_paused ? 'The whole fleet (every model too)' : 'Every paused model'),
    ...profile.paused_model_ids.map((id) => h('option', { value: id }, `Model ${id}`)),
  )
  const reason = reasonInput('resume-reason')
  const reset = h('input', { id: 'resume-reset', name: 'reset_breakers', type: 'checkbox' })
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Resume trading…')
  const form = h(
    'form',
    { id: 'resume', class: 'stack', method: 'post', novalidate: true, 'aria-labelledby': 'resume-title' },
    field('resume-scope', 'Scope', scope),
    reasonField(reason),
    h(
      'div',
      { class: 'check' },
      reset,
      h('label', { for: 'resume-reset' }, "Reset the breakers: resume although a loss breaker's condition still holds (whole fleet only)"),
    ),
    h('div', { class: 'row' }, button),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    if (!reasonGiven(reason)) return
    const body = { action: 'RESUME', pause: false, reason: reason.value.trim() }
    if (scope.value !== 'all') body.model_id = scope.value
    if (reset.checked) body.reset_breakers = true
    const target = scope.value === 'all' ? 'the whole fleet' : `model ${scope.value}`
    const text = `Resume trading for ${target}${reset.checked ? ', resetting the breakers' : ''}. Reason: “${body.reason}”.`
    operate(ctx, body, { title: `Resume ${target}?`, text, confirm: 'Resume' }, button)
  })
  return section('resume-panel', 'Resume', form)
}

export const risk = {
  id: 'risk',
  title: 'Risk',
  async render(ctx) {
    const [profile, models, deadMan] = await Promise.all([
      ctx.api('GET', '/risk/profile'),
      ctx.canChange ? ctx.api('GET', '/models') : { body: [] },
      ctx.api('GET', '/risk/dead-man-switch'),
    ])
    const p = profile.body
    const paused = p.trading_paused || p.paused_model_ids.length > 0
    return h(
      'div',
      { class: 'stack' },
      ctx.canChange && paused ? resumeForm(ctx, p) : null,
      ctx.canChange ? killSwitchForm(ctx, models.body) : null,
      deadManSwitchPanel(ctx, deadMan.body, models.body),
      section('limits', 'Profile', profileList(p)),
      ctx.canChange ? profileEditor(ctx, p) : null,
    )
  },
}
