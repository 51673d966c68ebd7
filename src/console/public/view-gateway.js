// Gateway (SPEC 14; owner and admin: the routes refuse a viewer, so the view is not in a viewer's
// navigation): the keys a bot that speaks Binance's API signs with (GET /gateway/keys, never a key
// or a secret), a new one (POST /gateway/keys) shown once with copy buttons and the URLs the bot
// sets, built from this page's origin, and revoking one after a confirmation. The new key and
// secret live in this page only: a reload or another view forgets them, as the API does. Without a
// connected Binance venue the API refuses a key; the view says so before the form is used.
import { confirmAction } from './confirm.js'
import { h, section, when } from './dom.js'
import { copyField, field, formError, sending } from './form.js'
import { pagedTable } from './paged.js'

/** What a bot sets: ccxt's urls.api entries, by name, under this server's /gateway/binance. */
function botUrls() {
  const base = `${location.origin}/gateway/binance`
  return [
    ['public', `${base}/api/v3`],
    ['private', `${base}/api/v3`],
    ['sapi', `${base}/sapi/v1`],
  ]
}

function urlList(id) {
  return h(
    'dl',
    { class: 'pairs', id },
    ...botUrls().map(([name, url]) =>
      h('div', { 'data-url': name }, h('dt', {}, h('code', {}, `urls.api.${name}`)), h('dd', {}, h('code', { class: 'hash full' }, url))),
    ),
  )
}

function howTo() {
  return section(
    'gateway-how',
    'Connecting a bot',
    h(
      'p',
      { class: 'muted' },
      "A bot that speaks Binance's spot REST API (Freqtrade, Jesse, OctoBot, a ccxt script) trades through Bulwark's risk controls without a code change: give it a gateway key and secret below, and point its exchange URLs here. Every order then passes the pre-trade checks, the breakers and the kill switch, and reaches the tenant's venue.",
    ),
    urlList('gateway-urls'),
    h(
      'p',
      { class: 'hint' },
      'REST only: turn WebSocket streams off in the bot (Freqtrade: "enable_ws": false). A gateway key is not an API key of the API keys view, nor the other way round.',
    ),
  )
}

/** The new key and secret, once, with what the bot sets. */
function shownOnce(created) {
  return section(
    'gateway-created',
    `New gateway key “${created.name}”`,
    h(
      'p',
      { class: 'warning', id: 'gateway-once-warning' },
      h('strong', {}, 'Copy the API key and the secret now: the secret will not be shown again.'),
      ' Only the SHA-256 of the key is stored, and the secret is stored encrypted.',
    ),
    copyField('gateway-api-key', 'API key', created.api_key, 'gateway-once-warning'),
    copyField('gateway-api-secret', 'API secret', created.api_secret, 'gateway-once-warning'),
    h('p', { class: 'muted' }, `Key ${created.id}, created ${when(created.created_at)}. In the bot, set the exchange's key and secret to these, and:`),
    urlList('gateway-created-urls'),
  )
}

function venueNote(account) {
  if (account.status !== 'DISCONNECTED' && account.exchange === 'binance') return null
  const what = account.status === 'DISCONNECTED' ? 'No venue is connected.' : `The venue connected is ${account.exchange}.`
  return h(
    'p',
    { class: 'warning', id: 'gateway-venue-note' },
    `${what} The gateway speaks Binance's API and needs a connected Binance account: `,
    h('a', { href: '#/venue' }, 'connect one on the Venue view'),
    ' before creating a key.',
  )
}

function createForm(ctx, created) {
  const name = h('input', { id: 'gateway-key-name', name: 'name', type: 'text', maxlength: 100, autocomplete: 'off', required: true })
  const error = formError('gateway-key-error')
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Create gateway key')
  const form = h(
    'form',
    { id: 'gateway-key-form', class: 'stack', method: 'post', novalidate: true, 'aria-labelledby': 'gateway-create-title' },
    field('gateway-key-name', 'Name', name, 'Which bot uses it, for people to tell keys apart.'),
    error,
    h('div', { class: 'row' }, button),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    sending(form, button, error, async () => {
      const answer = (await ctx.api('POST', '/gateway/keys', { name: name.value.trim() })).body
      form.reset()
      await created(answer)
    })
  })
  return form
}

function keyList(ctx, revoke) {
  return pagedTable(ctx, {
    id: 'gateway-keys-table',
    caption: "The tenant's gateway keys, newest first (the keys and secrets are never shown again)",
    path: '/gateway/keys?limit=50',
    empty: 'No gateway key yet.',
    columns: [
      { label: 'Name', value: (k) => k.name },
      { label: 'Key', value: (k) => h('code', { class: 'hash' }, `${k.api_key_prefix}\u2026`) },
      { label: 'Created', value: (k) => when(k.created_at) },
      { label: 'State', value: (k) => (k.revoked_at ? `revoked ${when(k.revoked_at)}` : 'active') },
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

export const gateway = {
  id: 'gateway',
  title: 'Gateway',
  roles: ['owner', 'admin'],
  async render(ctx) {
    const account = (await ctx.api('GET', '/venue')).body
    const once = h('div', {})
    const list = h('div', {})
    const notice = h('p', { id: 'gateway-notice', role: 'status', class: 'verify' })
    const redraw = async () => list.replaceChildren(await keyList(ctx, revoke))
    async function revoke(key, button) {
      const summary = {
        title: `Revoke “${key.name}”?`,
        text: `Gateway key ${key.api_key_prefix}… stops working at once: the bot's next request is refused. This cannot be undone.`,
        confirm: 'Revoke',
      }
      if (!(await confirmAction(summary))) return
      button.disabled = true
      try {
        const revoked = (await ctx.api('DELETE', `/gateway/keys/${encodeURIComponent(key.id)}`)).body
        notice.textContent = `Gateway key “${revoked.name}” (${revoked.api_key_prefix}…) revoked at ${when(revoked.revoked_at)}.`
        await redraw()
      } catch (error) {
        ctx.showProblem(error)
        button.disabled = false
      }
    }
    const form = createForm(ctx, async (answer) => {
      once.replaceChildren(shownOnce(answer))
      document.getElementById('gateway-api-key')?.focus()
      await redraw()
    })
    await redraw()
    return h(
      'div',
      { class: 'stack' },
      once,
      section('gateway-create', 'Create a gateway key', venueNote(account), form),
      section('gateway-keys', 'Gateway keys', notice, list),
      howTo(),
    )
  },
}
