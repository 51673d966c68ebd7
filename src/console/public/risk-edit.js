// Changing the risk profile from the Risk view (PATCH /risk/profile, risk:admin: the view draws this
// for owner and admin only): the order limits and the circuit breakers. Only the fields that changed
// are sent, so the RISK_PROFILE_UPDATED incident names just those; an empty field sends null, which
// turns an optional limit off (and is refused, with the API's detail, for one that cannot be off).
import { h, section } from './dom.js'
import { field, formError, sending } from './form.js'

/** [field, label, optional] per group; an optional one is off (null) when empty. */
const GROUPS = [
  [
    'Limits',
    [
      ['capital_usd', 'Capital (USD)', false],
      ['max_open_trades', 'Max open trades', false],
      ['max_exposure_usd', 'Max exposure (USD)', false],
      ['fee_bps', 'Fee (bps)', false],
      ['slippage_bps', 'Slippage (bps)', false],
      ['max_order_notional_usd', 'Max order notional (USD)', true],
      ['price_band_pct', 'Price band (%)', true],
      ['max_trades_per_day', 'Max trades per day', true],
    ],
  ],
  [
    'Circuit breakers',
    [
      ['max_daily_loss_usd', 'Max daily loss (USD)', true],
      ['max_drawdown_pct', 'Max drawdown (%)', true],
      ['max_consecutive_losses', 'Max losses in a row', true],
      ['max_orders_per_minute', 'Max orders per minute', true],
    ],
  ],
]
const ACTIONS = [
  ['CANCEL_AND_PAUSE', 'Cancel and pause'],
  ['FLATTEN', 'Flatten: also close open trades'],
]
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i

/** What a field's text means to the API: empty is null, a number is that number, anything else goes as typed for the API to refuse. */
function parsed(text) {
  const t = text.trim().replaceAll(',', '')
  if (t === '') return null
  return NUMBER.test(t) ? Number(t) : text.trim()
}

const shown = (x) => (x === null ? 'off' : String(x))

/**
 * The "Change the profile" panel for the profile the view just read; saving redraws the view, whose
 * Profile panel then shows the values the API answered.
 * @example ctx.canChange ? profileEditor(ctx, profile) : null
 */
export function profileEditor(ctx, profile) {
  const inputs = new Map()
  const labels = new Map()
  const fieldsets = GROUPS.map(([legend, fields]) =>
    h(
      'fieldset',
      { class: 'limits-grid' },
      h('legend', {}, legend),
      ...fields.map(([name, label, optional]) => {
        const id = `edit-${name}`
        const input = h('input', {
          id,
          name,
          type: 'text',
          inputmode: 'decimal',
          autocomplete: 'off',
          value: profile[name] === null ? '' : String(profile[name]),
        })
        inputs.set(name, input)
        labels.set(name, label)
        return field(id, label, input, optional ? 'Empty: off.' : null)
      }),
      legend === 'Circuit breakers'
        ? field(
            'edit-breaker_action',
            'When a breaker trips',
            h(
              'select',
              { id: 'edit-breaker_action', name: 'breaker_action' },
              ...ACTIONS.map(([v, l]) => h('option', { value: v, selected: v === profile.breaker_action }, l)),
            ),
            'The breaker action: what a breaker at its limit does to the whole fleet.',
          )
        : null,
    ),
  )
  labels.set('breaker_action', 'Breaker action')
  const error = formError('edit-profile-error')
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Save the profile')
  const form = h(
    'form',
    { id: 'edit-profile', class: 'stack', method: 'post', novalidate: true, 'aria-labelledby': 'profile-editor-title' },
    h('p', { class: 'muted' }, "A loss limit set below today's loss trips its breaker at once; every change is recorded in the incident trail."),
    ...fieldsets,
    error,
    h('div', { class: 'row' }, button),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const change = {}
    for (const [name, input] of inputs) {
      const value = parsed(input.value)
      if (value !== profile[name]) change[name] = value
    }
    const action = form.querySelector('#edit-breaker_action').value
    if (action !== profile.breaker_action) change.breaker_action = action
    const names = Object.keys(change)
    if (names.length === 0) {
      error.textContent = 'Nothing changed: edit a value first.'
      return
    }
    sending(form, button, error, async () => {
      const after = (await ctx.api('PATCH', '/risk/profile', change)).body
      const what = names.map((n) => `${labels.get(n)} ${shown(profile[n])} → ${shown(after[n])}`).join('; ')
      const tripped = !profile.trading_paused && after.trading_paused ? ' A breaker tripped at this change: trading is paused.' : ''
      await ctx.rerender(`Profile saved: ${what}.${tripped}`)
    })
  })
  return section('profile-editor', 'Change the profile', form)
}
