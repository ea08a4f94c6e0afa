// Live status routes: GET /payloads/{uuid}/events for applications (API key) and GET /sign/{uuid}/events for the
// signing page (public, the uuid is the capability). Both are Server-Sent Events (docs/api.md, "Live status").
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { isUuid } from '../../../platform/crypto/ids.js'
import { notFound } from '../../../platform/errors.js'
import { principalOf } from '../../../platform/http/api-key-auth.js'
import { ApiKeyOnlyQuery, errorResponses, UuidParams } from '../../../platform/http/schemas.js'
import { clientAddressKey } from '../../../platform/ip-address.js'
import { PLAN_LABELS, type PlanLimits, type PlanName } from '../../projects/plans.js'
import { SIGN_REQUESTS_PER_MINUTE } from '../../signing/routes.js'
import type { SignView } from '../../signing/schemas.js'
import type { SigningService } from '../../signing/service.js'
import type { PayloadView } from '../schemas.js'
import { NOT_FOUND_MESSAGE, type PayloadService } from '../service.js'
import { toPayloadView } from '../view.js'
import type { LiveStreams, StreamState } from './live-streams.js'

/** Signing pages open on one payload at once: a few tabs or devices, not a crowd. */
const SIGN_STREAMS_PER_PAYLOAD = 5
/** Signing pages open at once from one client address (an IPv6 client by its /64): a household or an office, not a crowd. */
const SIGN_STREAMS_PER_CLIENT = 20

const EventStreamResponse = {
  200: {
    description:
      'text/event-stream. Each `data:` line is the JSON shown by the matching GET, the current state first, then each change; ' +
      'the stream ends once the payload is signed, rejected or expired (a signed signAndSubmit payload: once its `submission.outcome` is final). A comment line (`: heartbeat`) comes every LIVE_HEARTBEAT_MS (15 s by default).',
    content: { 'text/event-stream': { schema: Type.String() } },
  },
}

/** An application's stream of a signed signAndSubmit payload stays open for the transaction's final outcome. */
const viewState = (view: PayloadView): StreamState => ({
  data: view,
  status: view.status,
  expiresAtMs: Date.parse(view.expiresAt),
  awaitingOutcome: view.status === 'signed' && view.submission !== undefined && view.submission.outcome === null,
})
const signState = (view: SignView): StreamState => ({ data: view, status: view.status, expiresAtMs: Date.parse(view.expiresAt) })

export interface PayloadEventRoutesDeps {
  streams: LiveStreams
  payloads: PayloadService
  limits: Record<PlanName, PlanLimits>
}

/** Registered under the API-key hook, which counts the opening request against the project's rate; the stream itself is not counted. */
export const payloadEventRoutes: FastifyPluginAsyncTypebox<PayloadEventRoutesDeps> = async (app, deps) => {
  app.get(
    '/payloads/:uuid/events',
    {
      schema: {
        summary: "A payload's live status (Server-Sent Events)",
        description:
          "Counts once against the request rate. Open streams are capped per project (the plan's maxLiveStreams: Free 10, Pro 500); " +
          'one more is refused with 429.',
        tags: ['payloads'],
        params: UuidParams,
        querystring: ApiKeyOnlyQuery,
        response: { ...EventStreamResponse, ...errorResponses(401, 404, 422, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request)
      const { uuid } = request.params
      if (!isUuid(uuid)) throw notFound(NOT_FOUND_MESSAGE)
      const limit = deps.limits[principal.plan].maxLiveStreams
      return deps.streams.serve(reply, {
        uuid: uuid.toLowerCase(),
        slots: [
          {
            key: `project:${principal.projectId}`,
            limit,
            overLimitMessage: `Too many live streams: the ${PLAN_LABELS[principal.plan]} plan allows ${limit} open at once per project; close one first`,
          },
        ],
        read: async () => viewState(toPayloadView(await deps.payloads.getForProject(principal.projectId, uuid))),
        fromChange: viewState,
      })
    },
  )
}

export interface SignEventRoutesDeps {
  streams: LiveStreams
  signing: SigningService
}

/** The signing page's stream: each event is what GET /sign/{uuid} answers. Registered under signRequestHook (features/signing/routes.ts). */
export const signEventRoutes: FastifyPluginAsyncTypebox<SignEventRoutesDeps> = async (app, deps) => {
  app.get(
    '/sign/:uuid/events',
    {
      schema: {
        summary: "A signing request's live status (Server-Sent Events; the signing page)",
        description:
          `Public: the uuid is the capability. At most ${SIGN_STREAMS_PER_PAYLOAD} open at once per payload and ${SIGN_STREAMS_PER_CLIENT} per client address; opening one counts ` +
          `against the ${SIGN_REQUESTS_PER_MINUTE} requests a minute per payload of the wallet-facing API.`,
        tags: ['signing'],
        params: UuidParams,
        response: { ...EventStreamResponse, ...errorResponses(404, 429) },
      },
    },
    async (request, reply) => {
      const { uuid } = request.params
      return deps.streams.serve(reply, {
        uuid: uuid.toLowerCase(),
        slots: [
          {
            key: `sign:${uuid.toLowerCase()}`,
            limit: SIGN_STREAMS_PER_PAYLOAD,
            overLimitMessage: `Too many live streams for this signing request: at most ${SIGN_STREAMS_PER_PAYLOAD} open at once`,
          },
          // Per client address too: uncounted, anyone with signing links (or a key to make them) had held any number
          // open (750 on one Pro project). Not per project: two links would then have been enough to shut every other
          // user of a Free project out.
          {
            key: `sign-client:${clientAddressKey(request.ip)}`,
            limit: SIGN_STREAMS_PER_CLIENT,
            overLimitMessage: `Too many live streams from this address: at most ${SIGN_STREAMS_PER_CLIENT} signing pages open at once`,
          },
        ],
        read: async () => signState(await deps.signing.view(uuid)),
      })
    },
  )
}
