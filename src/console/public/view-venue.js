// Venue (SPEC 10): the tenant's exchange account as GET /venue has it (a hint of the key, never the
// key or the secret), and for owner and admin, whose session PUT and DELETE need: connecting a key,
// which the API checks with the venue before anything is stored, and disconnecting after a
// confirmation. A viewer sees the status only.
import { confirmAction } from './confirm.js'
import { h, section, when } from './dom.js'
import { field, formError, sending } from './form.js'

const DASH = '\u2014'
const yesNo = (x) => (x === null ? 'not told by the venue' : x ? 'yes' : 'no')

const STATUS = [
  ['status', 'Status', String],
  ['exchange', 'Exchange', String],
  ['api_key_hint', 'Key', String],
  ['can_trade', 'Can trade', yesNo],
  ['can_withdraw', 'Can withdraw', yesNo],
  ['checked_at', 'Last accepted by the venue', when],
  ['connected_at', 'Connected', when],
  ['connected_by', 'Connected by', String],
]

function statusList(account) {
  const connected = account.status !== 'DISCONNECTED'
  return h(
    'dl',
    { class: 'pairs', id: 'venue-status' },
    ...STATUS.filter(([name]) => connected || name === 'status').map(([name, label, format]) =>
      h('div', { 'data-field': name }, h('dt', {}, label), h('dd', {}, account[name] === null && format !== yesNo ? DASH : format(account[name]))),
    ),
  )
}

function connectForm(ctx, account) {
  const input = (id, name, type, autocomplete, value) => h('input', { id, name, type, autocomplete, spellcheck: 'false', required: true, value })
  const exchange = input('venue-exchange', 'exchange', 'text', 'off', account.exchange ?? 'binance')
  const key = input('venue-key', 'api_key', 'text', 'off', '')
  const secret = input('venue-secret', 'api_secret', 'password', 'new-password', '')
  const password = input('venue-password', 'password', 'password', 'new-password', '')
  password.required = false
  const error = formError('venue-error')
  const replacing = account.status !== 'DISCONNECTED'
  const button = h('button', { type: 'submit', class: 'button primary' }, replacing ? 'Replace the key' : 'Connect')
  const form = h(
    'form',
    { id: 'venue-connect', class: 'stack', method: 'post', novalidate: true, 'aria-labelledby': 'connect-title' },
    field('venue-exchange', 'Exchange', exchange, 'A ccxt exchange id, such as binance.'),
    field('venue-key', 'API key', key),
    field('venue-secret', 'API secret', secret, 'Stored encrypted; never shown again.'),
    field('venue-password', 'Passphrase (optional)', password, 'Only for a venue that gave one with the key.'),
    error,
    h('div', { class: 'row' }, button),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const body = { exchange: exchange.value.trim(), api_key: key.value.trim(), api_secret: secret.value }
    if (password.value) body.password = password.value
    sending(form, button, error, async () => {
      const a = (await ctx.api('PUT', '/venue', body)).body
      await ctx.rerender(`Connected: ${a.exchange}, key ${a.api_key_hint}; can trade: ${yesNo(a.can_trade)}; can withdraw: ${yesNo(a.can_withdraw)}.`)
    })
  })
  const intro = replacing
    ? 'A new key replaces the current one once the venue accepts it.'
    : 'The key is checked with the venue before anything is stored; a key that can withdraw funds is refused.'
  return section('connect', replacing ? 'Replace the key' : 'Connect a venue', h('p', { class: 'muted' }, intro), form)
}

function disconnectButton(ctx, account) {
  const button = h('button', { type: 'button', class: 'button danger', id: 'venue-disconnect' }, 'Disconnect…')
  button.addEventListener('click', async () => {
    const summary = {
      title: 'Disconnect the venue?',
      text: `Bulwark forgets the ${account.exchange} key ${account.api_key_hint} and its secret: no LIVE order can be placed until a key is connected again. Refused while LIVE orders are open.`,
      confirm: 'Disconnect',
    }
    if (!(await confirmAction(summary))) return
    button.disabled = true
    try {
      const gone = (await ctx.api('DELETE', '/venue')).body
      await ctx.rerender(`Disconnected: the ${gone.exchange} key ${gone.api_key_hint} is forgotten.`)
    } catch (error) {
      ctx.showProblem(error)
      button.disabled = false
    }
  })
  return h('div', { class: 'row' }, button)
}

export const venue = {
  id: 'venue',
  title: 'Venue',
  async render(ctx) {
    const account = (await ctx.api('GET', '/venue')).body
    const connected = account.status !== 'DISCONNECTED'
    return h(
      'div',
      { class: 'stack' },
      section(
        'venue-account',
        'Account',
        connected ? null : h('p', { class: 'muted' }, 'No venue is connected: LIVE trading needs one; paper trading does not.'),
        statusList(account),
        ctx.canChange && connected ? disconnectButton(ctx, account) : null,
      ),
      ctx.canChange ? connectForm(ctx, account) : null,
    )
  },
}
