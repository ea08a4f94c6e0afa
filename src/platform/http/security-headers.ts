// The security headers of the browser pages (the signing page, the dashboard and their assets), set by @fastify/helmet
// and configured here only. The JSON API is left out on purpose: @fastify/helmet builds its middleware on every
// request (about 16 µs here, a quarter of a GET /payloads/{uuid} at 15,000 req/s), and a JSON answer needs none of
// these beyond nosniff, which app.ts sends on every answer.
import fastifyHelmet, { type FastifyHelmetOptions } from '@fastify/helmet'
import type { FastifyInstance } from 'fastify'

/** A Content-Security-Policy, directive by directive. */
export type CspDirectives = Record<string, string[]>

/**
 * The pages' policy: their own scripts, styles and API only, no inline script or style (the shells have none), no
 * plugins, never framed. The pages' HTML shells hold no data and no inline code, which is what makes it possible.
 */
export const PAGE_CSP: CspDirectives = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'frame-ancestors': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
}

/**
 * The signing page's policy: the pages' one, plus Xaman's QR images (xumm.app). The wallet extensions talk to the
 * page through window messages and WebHID needs no network, so nothing else is opened.
 */
export const SIGNING_PAGE_CSP: CspDirectives = { ...PAGE_CSP, 'img-src': [...(PAGE_CSP['img-src'] ?? []), 'https://xumm.app'] }

/**
 * Sets the headers on every route of `pages` (an encapsulated plugin: helmet's hooks reach its routes only): the
 * pages' policy, no framing at all, no referrer (a signing URL's uuid is a capability), and helmet's other defaults
 * (nosniff, a same-origin opener and resource policy, Strict-Transport-Security).
 */
export async function registerPageSecurityHeaders(pages: FastifyInstance): Promise<void> {
  await pages.register(fastifyHelmet, {
    contentSecurityPolicy: { useDefaults: false, directives: PAGE_CSP },
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
  })
}

/** The route options of a page whose policy or referrer policy differs from the pages' defaults. */
export function pageHeaders(options: {
  csp?: CspDirectives
  referrerPolicy?: 'no-referrer' | 'same-origin'
}): Omit<FastifyHelmetOptions, 'global'> {
  return {
    ...(options.csp ? { contentSecurityPolicy: { useDefaults: false, directives: options.csp } } : {}),
    ...(options.referrerPolicy ? { referrerPolicy: { policy: options.referrerPolicy } } : {}),
  }
}
