// What the forms of the webhooks, venue and profile editing share: a labelled field, and sending a
// form with its button disabled meanwhile. The API is the one validator: a refusal's `detail` is
// shown next to the form, and the field the problem names is marked invalid and focused.
import { h } from './dom.js'

/** A label above its control, with an optional hint the control is described by. */
export function field(id, label, control, hint) {
  if (hint) control.setAttribute('aria-describedby', `${id}-hint`)
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null)
}

/** The line a form's refusal is written to (read out when it changes). */
export function formError(id) {
  return h('p', { class: 'form-error', id, role: 'alert' })
}

/**
 * Runs send() with the button disabled; a failure's message goes to `error` and the problem's first
 * field ("url", "events[0]", "max_drawdown_pct") is marked aria-invalid and focused.
 * @example form.addEventListener('submit', (e) => { e.preventDefault(); sending(form, button, error, () => ctx.api(...)) })
 */
export async function sending(form, button, error, send) {
  button.disabled = true
  error.textContent = ''
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid')
  try {
    await send()
  } catch (failure) {
    error.textContent = failure.message
    const name = failure.problem?.errors?.[0]?.field?.replace(/\[.*$/, '')
    const named = name ? form.querySelector(`[name="${CSS.escape(name)}"]`) : null
    if (named) {
      named.setAttribute('aria-invalid', 'true')
      named.focus()
    }
  } finally {
    if (button.isConnected) button.disabled = false
  }
}

/**
 * A read-only field with its own Copy button, for what is shown once (a secret, a URL); the
 * clipboard refused (an insecure origin), the text is selected for Ctrl+C. `describedBy`: the
 * warning that says it is shown once.
 */
export function copyField(id, label, value, describedBy) {
  const input = h('input', { id, type: 'text', readonly: true, value, spellcheck: 'false', autocomplete: 'off', 'aria-describedby': describedBy })
  const result = h('p', { class: 'hint', id: `${id}-copied`, role: 'status' })
  const copy = h('button', { type: 'button', class: 'button primary', id: `${id}-copy`, 'aria-label': `Copy the ${label}` }, 'Copy')
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value)
      result.textContent = `The ${label} is copied to the clipboard.`
    } catch {
      input.focus()
      input.select()
      result.textContent = `The clipboard is not available here: the ${label} is selected, copy it with Ctrl+C (Cmd+C).`
    }
  })
  input.addEventListener('focus', () => input.select())
  return h('div', { class: 'field' }, h('label', { for: id }, label), h('div', { class: 'copy-row' }, input, copy), result)
}
