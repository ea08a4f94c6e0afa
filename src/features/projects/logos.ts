// Project logos, public (the signing page shows them): served from the database by hash, as images only.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { notFound } from '../../platform/errors.js'
import type { ProjectService } from './service.js'

/**
 * A logo is an image and nothing else: its type is the one its bytes were checked to be, the browser may not guess
 * another (nosniff, sent on every answer), and opened on its own it can run nothing (a CSP with sandbox). Its URL
 * names its hash, so it is cached for good and a new logo is a new URL.
 */
const LOGO_HEADERS = {
  'content-security-policy': "default-src 'none'; sandbox",
  'cache-control': 'public, max-age=31536000, immutable',
  'cross-origin-resource-policy': 'same-origin',
  'content-disposition': 'inline; filename="logo"',
}

const LogoParams = Type.Object({ projectId: Type.String(), sha256: Type.String() }, { additionalProperties: false })

export async function logoRoutes(app: FastifyInstance, { projects }: { projects: ProjectService }): Promise<void> {
  app.get('/logos/:projectId/:sha256', { schema: { hide: true, params: LogoParams } }, async (request, reply) => {
    const { projectId, sha256 } = request.params as typeof LogoParams.static
    const logo = /^[0-9a-f]{64}$/.test(sha256) ? await projects.publicLogo(projectId, sha256) : undefined
    if (logo === undefined) throw notFound('Logo not found')
    return reply.headers(LOGO_HEADERS).type(logo.contentType).send(logo.bytes)
  })
}
