// The page only ever navigates to, links to or loads http(s) URLs: no javascript:, data: or custom schemes from a payload.

/** The absolute URL when value is an http or https URL, otherwise null. */
export function httpUrl(value: string, base: string, options: { httpsOnly?: boolean } = {}): string | null {
  let url: URL
  try {
    url = new URL(value, base)
  } catch {
    return null
  }
  const allowed = options.httpsOnly ? ['https:'] : ['http:', 'https:']
  return allowed.includes(url.protocol) ? url.href : null
}
