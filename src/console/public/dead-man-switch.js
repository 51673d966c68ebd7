// The dead man's switch on the Risk view (SPEC 9): its state (GET /risk/dead-man-switch) and, while
// armed, the time left to its deadline, counted down each second. The ticking text is a timer
// (aria-live off: a screen reader is not told every second) whose accessible name is the deadline
// itself, which never changes while nothing is done. Owner and admin also get arming (PUT, with the
// timeout, the action and the scope), the heartbeat (POST .../heartbeat) and disarming (DELETE); a
// viewer sees the state only. Each action redraws this panel alone, so focus stays where it was; a
// refusal is shown with the API's detail. When the deadline passes on screen, the switch is read
// again a moment later: fired, the whole view is redrawn (the paused banner, the resume form).
import { h, when } from './dom.js'
import { field, formError, sending } from './form.js'

const ACTIONS = [
  ['CANCEL_AND_PAUSE', 'Cancel and pause: cancel pending orders and stop new ones'],
  ['FLATTEN', 'Flatten: also close open trades at the last price'],
]
const PATH = '/risk/dead-man-switch'
const DEFAULT_TIMEOUT = 300

const pad = (n) => String(n).padStart(2, '0')

/** Milliseconds as "h:mm:ss" from an hour up, else "m:ss"; never below zero. */
export function clock(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000))
  const hours = Math.floor(s / 3600)
  const minutes = Math.floor((s % 3600) / 60)
  return hours ? `${hours}:${pad(minutes)}:${pad(s % 60)}` : `${minutes}:${pad(s % 60)}`
}

const scopeOf = (modelId) => (modelId === null || modelId === 'all' ? 'the whole fleet' : `model ${modelId}`)

function statusList(s) {
  const rows = [
    ['status', 'Status', h('span', { class: `state state-${s.status === 'ARMED' ? 'warning' : s.status === 'FIRED' ? 'tripped' : 'ok'}` }, s.status)],
    ['action', 'Action when it fires', s.action ?? '\u2014'],
    ['model_id', 'Applies to', s.model_id === null ? '\u2014' : scopeOf(s.model_id)],
    ['timeout_seconds', 'Timeout', s.timeout_seconds === null ? '\u2014' : `${s.timeout_seconds} s`],
    ['armed_at', 'Armed', when(s.armed_at)],
    ['last_heartbeat_at', 'Last heartbeat', when(s.last_heartbeat_at)],
    ['deadline', 'Deadline', when(s.deadline)],
  ]
  if (s.status === 'FIRED') rows.push(['fired_at', 'Fired', when(s.fired_at)])
  if (s.incident_id) rows.push(['incident_id', 'Last incident', s.incident_id])
  return h(
    'dl',
    { class: 'pairs', id: 'dms-status' },
    ...rows.map(([name, label, value]) => h('div', { 'data-field': name }, h('dt', {}, label), h('dd', {}, value))),
  )
}

/** The number typed, or the text as typed for the API to refuse with its detail. */
function seconds(text) {
  const t = text.trim()
  return /^\d+$/.test(t) ? Number(t) : t
}

function armForm(ctx, s, models, error, draw) {
  const timeout = h('input', {
    id: 'dms-timeout',
    name: 'timeout_seconds',
    type: 'text',
    inputmode: 'numeric',
    autocomplete: 'off',
    value: String(s.timeout_seconds ?? DEFAULT_TIMEOUT),
  })
  const action = h('select', { id: 'dms-action', name: 'action' }, ...ACTIONS.map(([v, l]) => h('option', { value: v, selected: v === s.action }, l)))
  const scope = h(
    'select',
    { id: 'dms-scope', name: 'model_id' },
    h('option', { value: 'all' }, 'The whole fleet'),
    ...models.map((m) => h('option', { value: m.id, selected: m.id === s.model_id }, `Model ${m.name} (${m.id})`)),
  )
  const armed = s.status === 'ARMED'
  const button = h('button', { type: 'submit', class: 'button primary', id: 'dms-arm' }, armed ? 'Re-arm' : 'Arm')
  const form = h(
    'form',
    {
      id: 'dms-arm-form',
      class: 'stack',
      method: 'post',
      novalidate: true,
      'aria-label': armed ? "Re-arm the dead man's switch" : "Arm the dead man's switch",
    },
    h(
      'div',
      { class: 'grid-fields' },
      field('dms-timeout', 'Timeout (seconds)', timeout, '10 to 86400 (24 h) without a heartbeat.'),
      field('dms-action', 'When it fires', action),
      field('dms-scope', 'Applies to', scope),
    ),
    h('div', { class: 'row' }, button),
  )
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const body = { timeout_seconds: seconds(timeout.value), action: action.value }
    if (scope.value !== 'all') body.model_id = scope.value
    sending(form, button, error, async () => {
      const after = (await ctx.api('PUT', PATH, body)).body
      draw(
        after,
        `Armed: ${after.action} for ${scopeOf(after.model_id)} after ${after.timeout_seconds} s without a heartbeat; deadline ${when(after.deadline)}.`,
        'dms-arm',
      )
    })
  })
  return form
}

/** A button that sends one request; the answer redraws the panel with a notice, a refusal goes to `error`. */
function actionButton(id, label, kind, error, send) {
  const button = h('button', { type: 'button', class: `button ${kind}`, id }, label)
  button.addEventListener('click', async () => {
    button.disabled = true
    error.textContent = ''
    try {
      await send()
    } catch (failure) {
      error.textContent = failure.message
    } finally {
      if (button.isConnected) button.disabled = false
    }
  })
  return button
}

/** The time left, ticking each second while the panel is in the document; `onPassed` once the deadline is behind. */
function countdown(s, onPassed) {
  const deadline = Date.parse(s.deadline)
  const label = `Time left until the deadline, ${when(s.deadline)}`
  const text = h('span', { id: 'dms-remaining', class: 'countdown', role: 'timer', 'aria-live': 'off', 'aria-atomic': 'true', 'aria-label': label })
  const block = h('p', { id: 'dms-countdown', class: 'countdown-row' }, h('span', { class: 'muted' }, 'Time left: '), text)
  let passed = false
  const tick = () => {
    const left = deadline - Date.now()
    text.textContent = left > 0 ? clock(left) : '0:00 (deadline passed: the kill switch fires)'
    block.dataset.remainingMs = String(Math.max(0, left))
    if (left <= 0 && !passed) {
      passed = true
      // The watch fires within a second of the deadline: the switch is read again after that.
      setTimeout(() => block.isConnected && onPassed(), 1500)
    }
  }
  tick()
  const timer = setInterval(() => (block.isConnected ? tick() : clearInterval(timer)), 1000)
  return block
}

/**
 * The "Dead man's switch" panel for the switch the view just read; `models` (owner and admin) fill
 * the scope choice.
 * @example deadManSwitchPanel(ctx, (await ctx.api('GET', '/risk/dead-man-switch')).body, models)
 */
export function deadManSwitchPanel(ctx, state, models) {
  const title = h('h2', { id: 'dead-man-switch-title', tabindex: -1 }, "Dead man's switch")
  const panel = h('section', { class: 'panel', id: 'dead-man-switch', 'aria-labelledby': 'dead-man-switch-title' }, title)
  // `focus`: the id of the control that was used (it was disabled while its request ran, which took
  // its focus away); it gets the focus back if it is still drawn, else the panel's heading does.
  const draw = (s, notice, focus) => {
    const focused = focus ?? (panel.contains(document.activeElement) ? document.activeElement.id : undefined)
    while (title.nextSibling) title.nextSibling.remove()
    const error = formError('dms-error')
    const armed = s.status === 'ARMED'
    const refresh = async () => {
      try {
        const now = (await ctx.api('GET', PATH)).body
        if (now.status === 'FIRED')
          await ctx.rerender(`The dead man's switch fired at ${when(now.fired_at)}: no heartbeat by ${when(now.deadline)}; incident ${now.incident_id}.`)
        else draw(now)
      } catch (failure) {
        ctx.showProblem(failure)
      }
    }
    const buttons =
      ctx.canChange && armed
        ? h(
            'div',
            { class: 'row' },
            actionButton('dms-heartbeat', 'Send a heartbeat', 'primary', error, async () => {
              const after = (await ctx.api('POST', `${PATH}/heartbeat`)).body
              draw(after, `Heartbeat received: the deadline moved to ${when(after.deadline)}.`, 'dms-heartbeat')
            }),
            actionButton('dms-disarm', 'Disarm', 'quiet', error, async () => {
              const after = (await ctx.api('DELETE', PATH)).body
              draw(after, `Disarmed: no deadline is running; incident ${after.incident_id}.`, 'dms-disarm')
            }),
          )
        : null
    const intro = armed
      ? 'Without a heartbeat by the deadline the kill switch fires by itself. A bot sends POST /api/v1/risk/dead-man-switch/heartbeat with a risk:admin or orders:write key.'
      : s.status === 'FIRED'
        ? 'It fired: no heartbeat came by its deadline. Trading stays paused until it is resumed; arming it again starts a new deadline.'
        : 'Not armed. Armed, it fires the kill switch when no heartbeat comes within its timeout.'
    const parts = [
      h('p', { class: 'muted' }, intro),
      notice ? h('p', { class: 'notice', role: 'status', id: 'dms-notice' }, notice) : null,
      statusList(s),
      armed ? countdown(s, refresh) : null,
      buttons,
      ctx.canChange ? error : null,
      ctx.canChange ? armForm(ctx, s, models, error, draw) : null,
    ]
    title.after(...parts.filter(Boolean))
    const again = focused ? document.getElementById(focused) : null
    if (focused) (again && panel.contains(again) ? again : title).focus()
  }
  draw(state)
  return panel
}
