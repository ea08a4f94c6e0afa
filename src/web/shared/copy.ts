// Copying a value (an address, a hash, a key): a button that says whether it worked, and text that reads in groups.
import { type Child, h, type Props } from './dom.js'

/**
 * A "Copy" button for `text`. It says "Copied" for two seconds; where the clipboard is closed (plain http, an old
 * browser) it selects `select` when given, so that the person can copy by hand, and says so.
 */
export function copyButton(
  text: string,
  props: Props & { label?: string; accessibleName?: string; select?: Element } = {},
): HTMLButtonElement {
  const label = props.label ?? 'Copy'
  const attrs: Record<string, string> = { type: 'button', ...props.attrs }
  if (props.accessibleName !== undefined) attrs['aria-label'] = props.accessibleName
  const element = h('button', { className: props.className ?? 'copy', testId: props.testId, attrs }, label)
  element.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text)
      element.textContent = 'Copied'
    } catch {
      if (props.select !== undefined) window.getSelection()?.selectAllChildren(props.select)
      element.textContent = 'Select and copy by hand'
    }
    setTimeout(() => {
      element.textContent = label
    }, 2000)
  })
  return element
}

/**
 * A long identifier (an address, a hash) in groups of `size` characters, set apart by CSS (`.grouped > span`), never
 * by characters: a copy of the text is the identifier itself. Lines break between groups only.
 */
export function grouped(text: string, props: Props = {}, size = 4): HTMLElement {
  const groups: Child[] = []
  for (let index = 0; index < text.length; index += size) groups.push(h('span', {}, text.slice(index, index + size)))
  return h('span', { ...props, className: `grouped ${props.className ?? ''}`.trim() }, ...groups)
}
