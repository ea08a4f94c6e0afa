// Small building blocks shared by the dashboard's pages: secrets shown once, confirmations, empty states, errors.
import { ApiError } from '../shared/api-client.js'
import { copyButton } from '../shared/copy.js'
import { type Child, h, type Props, button as plainButton } from '../shared/dom.js'

export { copyButton, grouped } from '../shared/copy.js'
export { type Child, h, replaceChildren } from '../shared/dom.js'

export function button(label: string, onClick: () => void, props: Props = {}): HTMLButtonElement {
  return plainButton(label, { className: 'button', ...props }, onClick)
}

export function link(href: string, label: Child, props: Props = {}): HTMLAnchorElement {
  return h('a', { ...props, attrs: { href, ...props.attrs } }, label)
}

let fieldCount = 0

/** A labelled form control; the label names the control for screen readers and enlarges its tap target. */
export function field(label: string, control: HTMLInputElement | HTMLSelectElement, hint?: string): HTMLElement {
  fieldCount += 1
  control.id ||= `field-${fieldCount}`
  const hintElement = hint ? h('small', { className: 'hint', attrs: { id: `${control.id}-hint` } }, hint) : null
  if (hintElement) control.setAttribute('aria-describedby', hintElement.id)
  return h('div', { className: 'field' }, h('label', { attrs: { for: control.id } }, label), control, hintElement)
}

export function input(props: {
  name: string
  type?: string
  placeholder?: string
  required?: boolean
  maxLength?: number
}): HTMLInputElement {
  const element = h('input', { attrs: { name: props.name, type: props.type ?? 'text', autocomplete: 'off' } })
  if (props.placeholder) element.placeholder = props.placeholder
  if (props.required) element.required = true
  if (props.maxLength) element.maxLength = props.maxLength
  return element
}

export function select(name: string, options: [value: string, label: string][], selected: string): HTMLSelectElement {
  const element = h('select', { attrs: { name } })
  for (const [value, label] of options) {
    const option = h('option', { attrs: { value } }, label)
    option.selected = value === selected
    element.append(option)
  }
  return element
}

/**
 * A secret the server returns once (an API key, a webhook signing secret): in a read-only field that selects on
 * focus, with a copy button and a plain warning that it cannot be shown again.
 */
export function secretOnce(title: string, secret: string, testId: string): HTMLElement {
  const value = h('input', { className: 'secret-value', testId: `${testId}-value`, attrs: { readonly: '', 'aria-label': title } })
  value.value = secret
  value.addEventListener('focus', () => value.select())
  return h(
    'section',
    { className: 'secret-once', testId, attrs: { role: 'status' } },
    h('h2', {}, title),
    h(
      'p',
      { className: 'warning' },
      h('strong', {}, 'Copy it now: you will not see this again.'),
      ' Keep it where your server keeps its secrets.',
    ),
    h('div', { className: 'secret-row' }, value, copyButton(secret, { className: 'button secondary', select: value })),
  )
}

/**
 * Puts a confirmation step in place of `trigger`: the question, the destructive action and a way back. Focus moves
 * to the way back, so that a second Enter does not confirm by accident.
 */
export function confirmInPlace(trigger: HTMLElement, question: string, confirmLabel: string, onConfirm: () => Promise<void>): void {
  const cancel = button('Cancel', () => box.replaceWith(trigger), { className: 'button secondary' })
  const confirm = button(
    confirmLabel,
    async () => {
      confirm.disabled = true
      try {
        await onConfirm()
      } catch (error) {
        confirm.disabled = false
        box.append(errorMessage(error))
      }
    },
    { className: 'button danger' },
  )
  const box = h(
    'div',
    { className: 'confirm', attrs: { role: 'alertdialog', 'aria-label': question } },
    h('p', {}, question),
    confirm,
    cancel,
  )
  trigger.replaceWith(box)
  cancel.focus()
}

/** What a list without items says instead; `level` keeps the page's headings in order (an h2 under the h1, an h3 under an h2). */
export function emptyState(level: 'h2' | 'h3', title: string, ...children: Child[]): HTMLElement {
  return h('div', { className: 'empty', testId: 'empty-state' }, h(level, {}, title), ...children)
}

/**
 * Preformatted text that may be wider than its box (a command, a transaction's JSON): it scrolls sideways, so it takes
 * keyboard focus (a keyboard user scrolls it with the arrow keys) and is a region named by `label`.
 */
export function scrollingPre(label: string, text: string, props: Props = {}): HTMLElement {
  return h('pre', { ...props, attrs: { tabindex: '0', role: 'region', 'aria-label': label, ...props.attrs } }, h('code', {}, text))
}

/** Words for screen readers only, e.g. the header of a column of buttons. */
export function visuallyHidden(text: string): HTMLElement {
  return h('span', { className: 'visually-hidden' }, text)
}

/** A duration in words: "5 minutes", "24 hours", "3 seconds"; the largest unit that measures it whole. */
export function formatDuration(seconds: number): string {
  const [count, unit] =
    seconds >= 3600 && seconds % 3600 === 0
      ? [seconds / 3600, 'hour']
      : seconds >= 60 && seconds % 60 === 0
        ? [seconds / 60, 'minute']
        : [seconds, 'second']
  return `${count.toLocaleString()} ${unit}${count === 1 ? '' : 's'}`
}

/** The first request a developer can paste: creates a signMessage payload with their key. */
export function firstPayloadCurl(origin: string): HTMLElement {
  const command = [
    `curl -X POST ${origin}/api/v1/payloads \\`,
    "  -H 'Authorization: Bearer YOUR_API_KEY' \\",
    "  -H 'Content-Type: application/json' \\",
    `  -d '{"type": "signMessage", "message": "Hello from my app"}'`,
  ].join('\n')
  return h(
    'div',
    { className: 'snippet' },
    scrollingPre('Command to create a first payload', command, { testId: 'first-payload-curl' }),
    copyButton(command, { className: 'button secondary', label: 'Copy command' }),
  )
}

export function errorMessage(error: unknown): HTMLElement {
  const text = error instanceof Error ? error.message : String(error)
  // ApiError's own messages start in lower case, for the signing page's sentences; here a message stands alone.
  const message = text.charAt(0).toUpperCase() + text.slice(1)
  const details = error instanceof ApiError ? error.details.map((detail) => `${detail.field} ${detail.message}`) : []
  return h(
    'div',
    { className: 'error', testId: 'error', attrs: { role: 'alert' } },
    h('p', {}, message),
    details.length > 0 ? h('ul', {}, ...details.map((detail) => h('li', {}, detail))) : null,
  )
}

export function badge(text: string, kind: string): HTMLElement {
  return h('span', { className: `badge badge-${kind}` }, text)
}

export function formatTime(iso: string | null): string {
  if (iso === null) return '—'
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

export function loading(text = 'Loading…'): HTMLElement {
  return h('p', { className: 'loading', attrs: { role: 'status' } }, text)
}

/** Runs a form's submit as one request at a time, with its errors shown in the form. */
export function onSubmit(form: HTMLFormElement, action: () => Promise<void>): void {
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')
    if (submit?.disabled) return
    form.querySelector('.error')?.remove()
    if (submit) submit.disabled = true
    try {
      await action()
    } catch (error) {
      form.append(errorMessage(error))
    } finally {
      if (submit) submit.disabled = false
    }
  })
}

export function submitButton(label: string): HTMLButtonElement {
  return h('button', { className: 'button', attrs: { type: 'submit' } }, label)
}
