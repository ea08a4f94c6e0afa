// Builds DOM with createElement and text nodes only: payload data never passes through an HTML parser.

export type Child = Node | string | null | undefined | false

export interface Props {
  className?: string
  testId?: string
  /** Plain attributes; never href or src from payload data (see http-url.ts). */
  attrs?: Record<string, string>
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  if (props.className) element.className = props.className
  if (props.testId) element.dataset.testid = props.testId
  for (const [name, value] of Object.entries(props.attrs ?? {})) element.setAttribute(name, value)
  append(element, ...children)
  return element
}

function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child)
  }
}

/**
 * Text from an application (a project name, its note, a memo) in a <bdi>: whatever direction characters it holds
 * stay inside it, so they cannot reorder the page's own sentences around it.
 */
export function isolated(text: string, props: Props = {}): HTMLElement {
  return h('bdi', props, text)
}

/** Replaces everything inside parent. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren()
  append(parent, ...children)
}

export function button(label: string, props: Props, onClick: () => void): HTMLButtonElement {
  const element = h('button', { ...props, attrs: { type: 'button', ...props.attrs } }, label)
  element.addEventListener('click', onClick)
  return element
}
