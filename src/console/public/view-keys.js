// API keys (owner and admin: the routes refuse a viewer, so the view is not in a viewer's
// navigation): the workspace's keys (GET /auth/api-tokens), a new one (name, scopes, optional
// expiry) shown once with a copy button, and revoking one after a confirmation. The new key lives
// in this page only: a reload or another view forgets it, as the API does.
import { confirmAction } from './confirm.js'
import { h, section, when } from './dom.js'
import { pagedTable } from './paged.js'

const SCOPES = [
  ['signals:read', 'read signals'],
  ['trades:read', 'read orders and trades'],
  ['orders:write', 'place and cancel orders'],
  ['risk:read', 'read the risk profile, equity and incidents'],
  ['risk:admin', 'change the risk profile and use the kill switch'],
  ['webhooks:write', 'manage webhooks'],
]

function state(key) {
  if (key.revoked_at) return `revoked ${when(key.revoked_at)}`
  if (key.expires_at && Date.parse(key.expires_at) <= Date.now()) return 'expired'
  return 'active'
}

function keyList(ctx, revoke) {
  return pagedTable(ctx, {
    id: 'keys-table',
    caption: "The workspace's API keys, newest first (the keys themselves are never shown again)",
    path: '/auth/api-tokens?limit=50',
    empty: 'No API key yet.',
    columns: [
      { label: 'Name', value: (k) => k.name },
      { label: 'Prefix', value: (k) => h('code', { class: 'hash' }, k.prefix) },
      { label: 'Scopes', value: (k) => k.scopes.join(', ') },
      { label: 'Created', value: (k) => when(k.created_at) },
      { label: 'Expires', value: (k) => (k.expires_at ? when(k.expires_at) : 'never') },
      { label: 'Last used', value: (k) => (k.last_used_at ? when(k.last_used_at) : 'never') },
      { label: 'State', value: (k) => state(k) },
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

/** The new key once: in a read-only field, a copy button and the warning that it is not shown again. */
function shownOnce(created) {
  const input = h('input', {
    id: 'new-key',
    type: 'text',
    readonly: true,
    value: created.token,
    spellcheck: 'false',
    autocomplete: 'off',
    'aria-describedby': 'new-key-warning',
  })
  const copied = h('p', { class: 'hint', id: 'copy-result', role: 'status' })
  const copy = h('button', { type: 'button', class: 'button primary', id: 'copy-key' }, 'Copy')
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(created.token)
      copied.textContent = 'Copied to the clipboard.'
    } catch {
      // No clipboard (an insecure origin, or permission refused): the key is selected for Ctrl+C.
      input.focus()
      input.select()
      copied.textContent = 'The clipboard is not available here: the key is selected, copy it with Ctrl+C (Cmd+C).'
    }
  })
  input.addEventListener('focus', () => input.select())
  return section(
    'created-key',
    `New key “${created.name}”`,
    h('p', { class: 'warning', id: 'new-key-warning' }, h('strong', {}, 'Copy this key now: it will not be shown again.'), ' Only its SHA-256 is stored.'),
    h('div', { class: 'field' }, h('label', { for: 'new-key' }, 'API key'), h('div', { class: 'copy-row' }, input, copy)),
    copied,
    h(
      'p',
      { class: 'muted' },
      `Scopes ${created.scopes.join(', ')}; ${created.expires_at ? `expires ${when(created.expires_at)}` : 'does not expire'}. Send it as Authorization: Bearer <key>.`,
    ),
  )
}

function createForm(ctx, created) {
  const name = h('input', { id: 'key-name', name: 'name', type: 'text', maxlength: 100, autocomplete: 'off' })
  const expires = h('input', { id: 'key-expires', name: 'expires', type: 'date', 'aria-describedby': 'key-expires-hint' })
  const scopes = SCOPES.map(([scope, what]) =>
    h(
      'div',
      { class: 'check' },
      h('input', { type: 'checkbox', id: `scope-${scope.replace(':', '-')}`, name: 'scopes', value: scope }),
      h('label', { for: `scope-${scope.replace(':', '-')}` }, h('code', {}, scope), `: ${what}`),
    ),
  )
  const error = h('p', { class: 'form-error', id: 'key-error', role: 'alert' })
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Create key')
  const form = h(
    'form',
    { id: 'key-form', class: 'stack', method: 'post', novalidate: true, 'aria-labelledby': 'create-key-title' },
    h('div', { class: 'field' }, h('label', { for: 'key-name' }, 'Name'), name),
    h('fieldset', { class: 'params' }, h('legend', {}, 'Scopes'), ...scopes),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'key-expires' }, 'Expires (optional)'),
      expires,
      h('p', { class: 'hint', id: 'key-expires-hint' }, 'The key stops working at 00:00 UTC that day; left empty, it never expires.'),
    ),
    error,
    h('div', { class: 'row' }, button),
  )
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    error.textContent = ''
    const body = { name: name.value.trim(), scopes: [...form.querySelectorAll('input[name="scopes"]:checked')].map((c) => c.value) }
    if (expires.value) body.expires_at = `${expires.value}T00:00:00Z`
    button.disabled = true
    try {
      const answer = (await ctx.api('POST', '/auth/api-tokens', body)).body
      form.reset()
      await created(answer)
    } catch (failure) {
      error.textContent = failure.message
    } finally {
      button.disabled = false
    }
  })
  return section('create-key', 'Create a key', form)
}

export const keys = {
  id: 'api-keys',
  title: 'API keys',
  roles: ['owner', 'admin'],
  async render(ctx) {
    const once = h('div', {})
    const list = h('div', {})
    const notice = h('p', { id: 'keys-notice', role: 'status', class: 'verify' })
    const redraw = async () => list.replaceChildren(await keyList(ctx, revoke))
    async function revoke(key, button) {
      const summary = { title: `Revoke “${key.name}”?`, text: `Key ${key.prefix}… stops working at once; this cannot be undone.`, confirm: 'Revoke' }
      if (!(await confirmAction(summary))) return
      button.disabled = true
      try {
        const revoked = (await ctx.api('DELETE', `/auth/api-tokens/${encodeURIComponent(key.id)}`)).body
        notice.textContent = `Key “${revoked.name}” (${revoked.prefix}…) revoked at ${when(revoked.revoked_at)}.`
        await redraw()
      } catch (error) {
        ctx.showProblem(error)
        button.disabled = false
      }
    }
    const form = createForm(ctx, async (answer) => {
      once.replaceChildren(shownOnce(answer))
      document.getElementById('new-key')?.focus()
      await redraw()
    })
    await redraw()
    return h('div', { class: 'stack' }, once, form, section('keys', 'Keys', notice, list))
  },
}
