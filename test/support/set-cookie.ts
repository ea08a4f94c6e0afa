// A Set-Cookie header taken apart, so that tests assert every attribute without depending on their order (which
// means nothing to a browser).

export interface SetCookie {
  name: string
  value: string
  /** Every attribute, e.g. "HttpOnly" or "Max-Age=60", sorted. */
  attributes: string[]
}

export function parseSetCookie(header: string | undefined): SetCookie {
  const [pair = '', ...attributes] = (header ?? '').split(';').map((part) => part.trim())
  const separator = pair.indexOf('=')
  return { name: pair.slice(0, separator), value: pair.slice(separator + 1), attributes: attributes.sort() }
}
