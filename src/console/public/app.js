// The console's shell: sign-in and sign-out, the hash router over the list of views (views.js),
// the banner shown on every view while trading is paused, and the one place a failed load is shown.
// Routes are "#/<view id>"; any other hash (the skip link's "#main") is an in-page jump, left alone.
import { api, token, whenSessionEnds } from './api.js'
import { h } from './dom.js'
import { VIEWS } from './views.js'

const main = document.getElementById('main')
const nav = document.getElementById('nav')
const navList = document.getElementById('nav-list')
const who = document.getElementById('who')
const whoText = document.getElementById('who-text')
const paused = document.getElementById('paused')
const problem = document.getElementById('problem')

/** The signed-in user as GET /auth/session answers ({email, role, tenant_slug, ...}), or null. */
let session = null
let renders = 0

function showProblem(error) {
  problem.replaceChildren(h('strong', {}, 'Error: '), error.message)
  problem.hidden = false
}

function hideProblem() {
  problem.hidden = true
  problem.replaceChildren()
}

/** What every view gets: the API, who is signed in, what they may change, and a way to redraw. */
function context(view) {
  return {
    api,
    session,
    canChange: session?.role === 'owner' || session?.role === 'admin',
    rerender: (notice) => show(view, { notice, focus: false, keepFocus: true }),
    showProblem,
  }
}

async function refreshPaused() {
  const profile = (await api('GET', '/risk/profile')).body
  const models = profile.paused_model_ids
  if (!profile.trading_paused && models.length === 0) {
    paused.hidden = true
    paused.removeAttribute('data-paused')
    return
  }
  const what = profile.trading_paused
    ? 'Trading is paused for the whole fleet.'
    : `Trading is paused for ${models.length === 1 ? 'model' : 'models'} ${models.join(', ')}.`
  const also = profile.trading_paused && models.length ? ` Also paused on their own: ${models.join(', ')}.` : ''
  const link = session && (session.role === 'owner' || session.role === 'admin') ? h('a', { href: '#/risk' }, 'Resume on the Risk view') : null
  paused.replaceChildren(h('span', {}, h('strong', {}, what), also, link ? ' ' : null, link))
  paused.dataset.paused = profile.trading_paused ? 'fleet' : 'models'
  paused.hidden = false
}

/** The views the signed-in role may open: a view with `roles` (e.g. ['owner', 'admin']) is left out for any other. */
function allowedViews() {
  return VIEWS.filter((v) => !v.roles || v.roles.includes(session?.role))
}

function renderNav(current) {
  navList.replaceChildren(
    ...allowedViews().map((v) => h('li', {}, h('a', { href: `#/${v.id}`, 'aria-current': v.id === current ? 'page' : null, 'data-view': v.id }, v.title))),
  )
}

/** Replaces what follows the heading; the heading stays in place, as moving it would drop its focus. */
function replaceBelow(title, ...nodes) {
  while (title.nextSibling) title.nextSibling.remove()
  title.after(...nodes)
}

/** Draws one view: its heading at once, its content once the API has answered. */
async function show(view, options = {}) {
  const run = ++renders
  const title = h('h1', { id: 'view-title', tabindex: -1 }, view.title)
  main.removeAttribute('data-ready')
  main.replaceChildren(title, h('p', { class: 'muted' }, 'Loading…'))
  document.title = `${view.title} · Bulwark console`
  renderNav(view.id)
  hideProblem()
  if (options.focus) title.focus()
  try {
    const [content] = await Promise.all([view.render(context(view)), refreshPaused()])
    if (run !== renders) return
    const notice = options.notice ? h('p', { class: 'notice', role: 'status', id: 'notice' }, options.notice) : null
    replaceBelow(title, ...(notice ? [notice] : []), content)
    // A redraw after an action removed the control that had focus: the heading takes it, so a
    // keyboard user goes on from the top of the view instead of from the start of the page.
    if (options.keepFocus && (!document.activeElement || document.activeElement === document.body)) title.focus()
    main.dataset.ready = view.id
  } catch (error) {
    if (run !== renders || !token.get()) return
    replaceBelow(title, h('p', { class: 'muted' }, 'This view could not be loaded.'))
    showProblem(error)
    main.dataset.ready = view.id
  }
}

function showSignIn(message) {
  renders++
  session = null
  nav.hidden = true
  who.hidden = true
  paused.hidden = true
  hideProblem()
  document.title = 'Sign in · Bulwark console'
  const error = h('p', { class: 'form-error', id: 'sign-in-error', role: 'alert' }, message ?? '')
  const email = h('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'username', required: true, 'aria-describedby': 'sign-in-error' })
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true })
  const button = h('button', { type: 'submit', class: 'button primary' }, 'Sign in')
  const form = h(
    'form',
    { id: 'sign-in', method: 'post', class: 'stack narrow', 'aria-labelledby': 'view-title' },
    h('div', { class: 'field' }, h('label', { for: 'email' }, 'E-mail'), email),
    h('div', { class: 'field' }, h('label', { for: 'password' }, 'Password'), password),
    error,
    button,
  )
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    button.disabled = true
    error.textContent = ''
    try {
      const answer = (await api('POST', '/auth/login', { email: email.value.trim(), password: password.value })).body
      token.set(answer.access_token)
      await start(true)
    } catch (failure) {
      error.textContent = failure.message
      password.select()
    } finally {
      button.disabled = false
    }
  })
  main.replaceChildren(h('h1', { id: 'view-title', tabindex: -1 }, 'Sign in'), form)
  main.dataset.ready = 'sign-in'
  if (location.hash !== '#/sign-in') history.replaceState(null, '', '#/sign-in')
  email.focus()
}

function route(focus) {
  const hash = location.hash
  if (hash && !hash.startsWith('#/')) return
  if (!session) return
  const id = hash.slice(2)
  const view = allowedViews().find((v) => v.id === id)
  if (!view) {
    history.replaceState(null, '', `#/${VIEWS[0].id}`)
    return show(VIEWS[0], { focus })
  }
  return show(view, { focus })
}

/** With a token: learn who it is (role, tenant), then show the view the hash names. */
async function start(focus = false) {
  if (!token.get()) return showSignIn()
  try {
    session = (await api('GET', '/auth/session')).body
  } catch (error) {
    token.forget()
    return showSignIn(error.message)
  }
  whoText.textContent = `${session.email} (${session.role}, ${session.tenant_slug})`
  who.hidden = false
  nav.hidden = false
  if (location.hash === '#/sign-in' || !location.hash.startsWith('#/')) history.replaceState(null, '', `#/${VIEWS[0].id}`)
  return route(focus)
}

document.getElementById('sign-out').addEventListener('click', () => {
  token.forget()
  showSignIn('Signed out.')
})
whenSessionEnds((error) => showSignIn(`Your session ended: ${error.message}`))
window.addEventListener('hashchange', () => route(true))
start()
