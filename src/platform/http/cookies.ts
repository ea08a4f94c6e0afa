// Reading the Cookie header and writing Set-Cookie headers (RFC 6265), for the few cookies the service sets.
// Values the service sets are base64url and dot only, so they need no quoting or encoding.

export interface CookieOptions {
  path: string
  /** Only over https; set when PUBLIC_URL is https. */
  secure: boolean
  /** Seconds until the browser drops it; 0 deletes it. */
  maxAgeSeconds: number
}

const COOKIE_VALUE = /^[A-Za-z0-9._-]*$/

/**
 * The value of cookie `name` in a Cookie request header; undefined when absent or sent more than once. Two cookies
 * of one name come from different scopes (a sibling subdomain's Domain cookie, a narrower Path), and the browser's
 * order, not the service, would decide which one counts: an attacker who can set one would choose the session.
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined
  let found: string | undefined
  for (const pair of header.split(';')) {
    const separator = pair.indexOf('=')
    if (separator === -1 || pair.slice(0, separator).trim() !== name) continue
    if (found !== undefined) return undefined
    const value = pair.slice(separator + 1).trim()
    found = value.startsWith('"') && value.endsWith('"') && value.length >= 2 ? value.slice(1, -1) : value
  }
  return found
}

/** A Set-Cookie value: always HttpOnly and SameSite=Lax, so scripts never read it and cross-site subrequests never carry it. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  if (!COOKIE_VALUE.test(value)) throw new Error(`Cookie ${name} has a value with characters that need encoding`)
  const parts = [`${name}=${value}`, `Path=${options.path}`, `Max-Age=${options.maxAgeSeconds}`, 'HttpOnly', 'SameSite=Lax']
  if (options.secure) parts.push('Secure')
  return parts.join('; ')
}

/** A Set-Cookie value that makes the browser forget cookie `name`. */
export function clearedCookie(name: string, options: Omit<CookieOptions, 'maxAgeSeconds'>): string {
  return serializeCookie(name, '', { ...options, maxAgeSeconds: 0 })
}
