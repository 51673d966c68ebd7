// The confirmation step before a change that stops or restarts trading: a modal <dialog> (the
// browser keeps focus inside it and Escape cancels), resolved true only by its confirm button.
import { h } from './dom.js'

/** Resolves true when the user confirms. summary: { title, text, confirm } (the confirm button's label). */
export function confirmAction(summary) {
  return new Promise((resolve) => {
    const cancel = h('button', { type: 'button', class: 'button quiet', id: 'confirm-cancel' }, 'Cancel')
    const ok = h('button', { type: 'button', class: 'button danger', id: 'confirm-ok' }, summary.confirm)
    const dialog = h(
      'dialog',
      { id: 'confirm', 'aria-labelledby': 'confirm-title', 'aria-describedby': 'confirm-text' },
      h('h2', { id: 'confirm-title' }, summary.title),
      h('p', { id: 'confirm-text' }, summary.text),
      h('div', { class: 'row' }, ok, cancel),
    )
    const opener = document.activeElement
    let answer = false
    ok.addEventListener('click', () => {
      answer = true
      dialog.close()
    })
    cancel.addEventListener('click', () => dialog.close())
    dialog.addEventListener('close', () => {
      dialog.remove()
      if (!answer && opener instanceof HTMLElement) opener.focus()
      resolve(answer)
    })
    document.body.append(dialog)
    dialog.showModal()
    cancel.focus()
  })
}
