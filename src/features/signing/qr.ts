// GET /sign/{uuid}/qr.svg: the signing URL as an SVG QR code, so that an application can show it on its own desktop page.
import type { FastifyInstance } from 'fastify'
import QRCode from 'qrcode'
import { errorResponses, UuidParams } from '../../platform/http/schemas.js'
import type { PayloadService } from '../payloads/service.js'

/** The SVG holds paths only: nothing in it may run or load, whoever opens it. */
const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors *"

export interface SignQrDeps {
  payloads: PayloadService
}

/** Registered under signRequestHook: public like the signing page, and counted with its requests per payload. */
export async function signQrRoutes(app: FastifyInstance, deps: SignQrDeps): Promise<void> {
  app.get(
    '/sign/:uuid/qr.svg',
    {
      schema: {
        summary: 'The signing URL as an SVG QR code (public, like the signing page)',
        description: 'For an application to show on its own page, e.g. `<img src="…/sign/{uuid}/qr.svg">`. 404 for an unknown uuid.',
        tags: ['signing'],
        params: UuidParams,
        produces: ['image/svg+xml'],
        response: { 200: { description: 'image/svg+xml', type: 'string' }, ...errorResponses(404, 429) },
      },
    },
    async (request, reply) => {
      const { uuid } = request.params as { uuid: string }
      const payload = await deps.payloads.getForSigning(uuid)
      const svg = await QRCode.toString(deps.payloads.signingUrl(payload.uuid), { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
      return reply
        .headers({
          'content-type': 'image/svg+xml; charset=utf-8',
          'content-security-policy': SVG_CSP,
          // The code of a uuid never changes; a page that shows it may keep it while the payload can be signed.
          'cache-control': 'private, max-age=3600',
        })
        .send(svg)
    },
  )
}
