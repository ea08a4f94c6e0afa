// The signing page (the signingUrl, /sign/{uuid}) and its bundled assets (dist/web, served under /assets/).
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'
import { htmlShellHandler } from '../../platform/http/html-shell.js'
import { renderSigningPageHtml, SIGNING_PAGE_CSP } from '../../web/sign/page-html.js'

/** dist/web beside the repository root: the same directory whether this runs from src/ (tsx) or dist/ (the build). */
export const DEFAULT_WEB_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'dist', 'web')

/** esbuild names split chunks by content hash (chunks/[name]-[hash].js): a changed chunk is a new URL. */
const HASHED_CACHE_CONTROL = 'public, max-age=31536000, immutable'
/** The entry files keep their names across builds: caches revalidate them (ETag) on every load. */
const REVALIDATE_CACHE_CONTROL = 'no-cache'

export interface SignPageDeps {
  /** The directory the web build wrote (scripts/build-web.mjs). */
  webRoot?: string
}

export async function signPageRoutes(app: FastifyInstance, deps: SignPageDeps): Promise<void> {
  const webRoot = deps.webRoot ?? DEFAULT_WEB_ROOT
  // The shell holds no payload data: one document for every uuid, and the script fetches the rest.
  const serveShell = htmlShellHandler({
    html: renderSigningPageHtml({ title: 'Countersign', scriptSrc: '/assets/sign.js', styleHref: '/assets/sign.css' }),
    contentSecurityPolicy: SIGNING_PAGE_CSP,
    referrerPolicy: 'no-referrer',
    webRoot,
    bundleFile: 'sign.js',
    pageName: 'signing page',
    log: app.log,
  })
  app.get('/sign/:uuid', { schema: { hide: true } }, serveShell)

  await app.register(fastifyStatic, {
    root: webRoot,
    prefix: '/assets/',
    decorateReply: false,
    index: false,
    cacheControl: false,
    preCompressed: true,
    schemaHide: true,
    suppressWarning: true,
    setHeaders(reply, filePath) {
      const relative = path.relative(webRoot, filePath)
      reply.header('cache-control', relative.startsWith(`chunks${path.sep}`) ? HASHED_CACHE_CONTROL : REVALIDATE_CACHE_CONTROL)
    },
  })
}
