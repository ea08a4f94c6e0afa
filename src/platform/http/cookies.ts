// The cookies the service sets (the dashboard session, the sign-in flow), through @fastify/cookie: registered once,
// every cookie HttpOnly and SameSite=Lax, so that scripts never read it and cross-site subrequests never carry it.
import fastifyCookie, { type CookieSerializeOptions } from '@fastify/cookie'
import type { FastifyInstance } from 'fastify'

export interface CookieOptions {
  path: string
  /** Only over https; set when PUBLIC_URL is https. */
  secure: boolean
  /** Seconds until the browser drops it. */
  maxAgeSeconds: number
}

/** Parses the Cookie header of every request into request.cookies, and adds reply.setCookie and reply.clearCookie. */
export async function registerCookies(app: FastifyInstance): Promise<void> {
  await app.register(fastifyCookie)
}

/** The attributes of a cookie the service sets. */
export function cookieAttributes(options: CookieOptions): CookieSerializeOptions {
  return { path: options.path, secure: options.secure, maxAge: options.maxAgeSeconds, httpOnly: true, sameSite: 'lax' }
}
