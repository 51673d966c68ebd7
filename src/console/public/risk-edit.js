// Changing the risk profile from the Risk view (PATCH /risk/profile, risk:admin: the view draws this
// for owner and admin only): the order limits, the circuit breakers and the protection resting on the
// venue (SPEC 13). Only the fields that changed are sent, so the RISK_PROFILE_UPDATED incident names
// just those; an empty field sends null, which turns an optional limit off (and is refused, with the
// API's detail, for one that cannot be off). The hints say the API's ranges, but the API is still the
// one validator: a second copy of its rules here could only drift from it.
import { h, section } from './dom.js'
import { field, formError, sending } from './form.js'

/**
 * Per group: its legend, [field, label, optional, hint?] (an optional one is off, null, when empty;
 * without a hint it says just that), and the choice it ends with: [field, label, options, hint].
 */
const GROUPS = [
  {
    legend: 'Limits',
    fields: [
      ['capital_usd', 'Capital (USD)', false],
      ['max_open_trades', 'Max open trades', false],
      ['max_exposure_usd', 'Max exposure (USD)', false],
      ['fee_bps', 'Fee (bps)', false],
      ['slippage_bps', 'Slippage (bps)', false],
      ['max_order_notional_usd', 'Max order notional (USD)', true],
      ['price_band_pct', 'Price band (%)', true],
      ['max_trades_per_day', 'Max trades per day', true],
    ],
  },
  {
    legend: 'Circuit breakers',
    fields: [
      ['max_daily_loss_usd', 'Max daily loss (USD)', true],
      ['max_drawdown_pct', 'Max drawdown (%)', true],
      ['max_consecutive_losses', 'Max losses in a row', true],
      ['max_orders_per_minute', 'Max orders per minute', true],
    ],
    choice: [
      'breaker_action',
      'When a breaker trips',
      [
        ['CANCEL_AND_PAUSE', 'Cancel and pause'],
        ['FLATTEN', 'Flatten: also close open trades'],
      ],
      'The breaker action: what a breaker at its limit does to the whole fleet.',
    ],
  },
  {
    legend: 'Protection on the venue (LIVE positions)',
    fields: [
      ['venue_stop_loss_pct', 'Venue stop-loss (%)', true, "0.1 to 50, below the position's average entry. Empty: off."],
      ['venue_take_profit_pct', 'Venue take-profit (%)', true, "0.1 to 1000, above the position's average entry. Empty: off."],
      ['stop_limit_offset_pct', 'Stop-limit offset (%)', false, 'Where a market has no stop-market orders: the limit this far below the stop, 0.1 to 10.'],
    ],
    choice: [
      'unprotected_action',
      'When the venue refuses a protection',
      [
        ['ALERT', 'Alert'],
        ['FLATTEN', 'Flatten that pair'],
      ],
      "Alert: an incident, an event, /health degraded. Flatten: also sell that pair's position at market. Trading is not paused either way.",
    ],
  },
]
/** The names the notice gives each field: the label, or a shorter one for a choice. */
const NAMES = new Map([
  ...GROUPS.flatMap((g) => g.fields.map(([name, label]) => [name, label])),
  ['breaker_action', 'Breaker action'],
  ['unprotected_action', 'Unprotected action'],
])
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i

/** What a field's text means to the API: empty is null, a number is that number, anything else goes as typed for the API to refuse. */
function parsed(text) {
  const t = text.trim().replaceAll(',', '')
  if (t === '') return null
  return NUMBER.test(t) ? Number(t) : text.trim()
}

const shown = (x) => (x === null ? 'off' : String(x))

/** A group's closing choice (a select of the API's values), remembered in `choices` for the submit. */
function choiceField([name, label, options, hint], profile, choices) {
  const id = `edit-${name}`
  const select = h('select', { id, name }, ...options.map(([v, l]) => h('option', { value: v, selected: v === profile[name] }, l)))
  choices.set(name, select)
  return field(id, label, select, hint)
}

/**
 * The "Change the profile" panel for the profile the view just read; saving redraws the view, whose
 * Profile panel then shows the values the API answered.
 * @example ctx.canChange ? profileEditor(ctx, profile) : null
 */
export function profileEditor(ctx, profile) {
  const inputs = new Map()
  const choices = new Map()
  const fieldsets = GROUPS.map(({ legend, fields, choice }) =>
    h(
      'fieldset',
      { class: 'limits-grid' },
      h('legend', {}, legend),
      ...fields.map(([name, label, optional, hint]) => {
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
        return field(id, label, input, hint ?? (optional ? 'Empty: off.' : null))
      }),
      choice ? choiceField(choice, profile, choices) : null,
    ),
  )
  const error = formError('edit-profile-error')
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Save the profile')
  const form = h(
    'form',
    { id: 'edit-profile', class: 'stack', method: 'post', novalidate: true, 'aria-labelledby': 'profile-editor-title' },
    h(
      'p',
      { class: 'muted' },
      "A loss limit set below today's loss trips its breaker at once; a new venue stop-loss or take-profit re-places the protections of open LIVE positions (both empty cancels them); every change is recorded in the incident trail.",
    ),
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
    for (const [name, select] of choices) if (select.value !== profile[name]) change[name] = select.value
    const names = Object.keys(change)
    if (names.length === 0) {
      error.textContent = 'Nothing changed: edit a value first.'
      return
    }
    sending(form, button, error, async () => {
      const after = (await ctx.api('PATCH', '/risk/profile', change)).body
      const what = names.map((n) => `${NAMES.get(n)} ${shown(profile[n])} → ${shown(after[n])}`).join('; ')
      const tripped = !profile.trading_paused && after.trading_paused ? ' A breaker tripped at this change: trading is paused.' : ''
      await ctx.rerender(`Profile saved: ${what}.${tripped}`)
    })
  })
  return section('profile-editor', 'Change the profile', form)
}
