// The handler of a browser page's HTML shell: one fixed document whose script does the rest, revalidated by its ETag.
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import path from 'node:path'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'

export interface HtmlShell {
  html: string
  contentSecurityPolicy: string
  referrerPolicy: string
  /** The directory the web build wrote (scripts/build-web.mjs); only checked, to warn when the page's bundle is missing. */
  webRoot: string
  /** The page's entry file in webRoot, e.g. sign.js. */
  bundleFile: string
  /** Names the page in that warning. */
  pageName: string
  log: FastifyBaseLogger
}

export function htmlShellHandler(shell: HtmlShell) {
  if (!existsSync(path.join(shell.webRoot, shell.bundleFile))) {
    shell.log.warn({ webRoot: shell.webRoot }, `the ${shell.pageName} bundle is missing: run \`npm run build\``)
  }
  const etag = `"${createHash('sha256').update(shell.html).digest('base64url').slice(0, 27)}"`

  return async function serveHtmlShell(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    reply.headers({
      'content-security-policy': shell.contentSecurityPolicy,
      'x-frame-options': 'DENY',
      'referrer-policy': shell.referrerPolicy,
      // The entry files keep their names across builds: caches revalidate the shell on every load.
      'cache-control': 'no-cache',
      etag,
    })
    if (request.headers['if-none-match'] === etag) return reply.code(304).send()
    return reply.type('text/html; charset=utf-8').send(shell.html)
  }
}
