// The cookies the service sets (the dashboard session, the sign-in flow), through @fastify/cookie: registered once,
// every cookie HttpOnly and SameSite=Lax, so that scripts never read it and cross-site subrequests never carry it.
// Reading is readCookie's: @fastify/cookie's request.cookies keeps the first of two cookies of one name, and the
// service refuses both (see readCookie).
import fastifyCookie, { type CookieSerializeOptions } from '@fastify/cookie'
import type { FastifyInstance } from 'fastify'

export interface CookieOptions {
  path: string
  /** Only over https; set when PUBLIC_URL is https. */
  secure: boolean
  /** Seconds until the browser drops it. */
  maxAgeSeconds: number
}

/** Adds reply.setCookie and reply.clearCookie; no request.cookies (the service reads cookies with readCookie, below). */
export async function registerCookies(app: FastifyInstance): Promise<void> {
  await app.register(fastifyCookie, { hook: false })
}

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

/** The attributes of a cookie the service sets. */
export function cookieAttributes(options: CookieOptions): CookieSerializeOptions {
  return { path: options.path, secure: options.secure, maxAge: options.maxAgeSeconds, httpOnly: true, sameSite: 'lax' }
}
