// The payload API for applications (docs/interface.md §4, docs/api.md): create, read, cancel and list payloads.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { isUuid } from '../../platform/crypto/ids.js'
import { notFound, tooManyRequests } from '../../platform/errors.js'
import { principalOf, type RequestCounter } from '../../platform/http/api-key-auth.js'
import { IdempotencyKeyHeaders } from '../../platform/http/idempotency.js'
import { ApiKeyOnlyQuery, errorResponses, RefTo, readPage, UuidParams } from '../../platform/http/schemas.js'
import { retryAfterSeconds } from '../../platform/rate-limit/rate-limiter.js'
import { PLAN_LABELS, type PlanLimits, type PlanName } from '../projects/plans.js'
import {
  ApiKeyPayloadListQuery,
  CancelledPayload,
  CreateConflict,
  CreatedPayload,
  CreatePayloadBody,
  PayloadList,
  PayloadView,
} from './schemas.js'
import { NOT_FOUND_MESSAGE, type PayloadService } from './service.js'
import { toCreatedView, toPayloadView } from './view.js'

export interface PayloadRoutesDeps {
  payloads: PayloadService
  /** The project's request rate, counted by the GET of a payload with its poll gate in one trip to the store. */
  countRequest: RequestCounter
  limits: Record<PlanName, PlanLimits>
  signingOrigin: string
  now: () => number
}

export const payloadRoutes: FastifyPluginAsyncTypebox<PayloadRoutesDeps> = async (app, deps) => {
  app.post(
    '/payloads',
    {
      config: { idempotent: true },
      schema: {
        summary: 'Create a payload',
        tags: ['payloads'],
        headers: IdempotencyKeyHeaders,
        querystring: ApiKeyOnlyQuery,
        body: CreatePayloadBody,
        response: { 201: CreatedPayload, ...errorResponses(400, 401, 403, 413, 415, 422, 429), 409: CreateConflict },
      },
    },
    async (request, reply) => {
      const idempotency = request.idempotency
      const payload = await deps.payloads.create(
        principalOf(request),
        request.body,
        idempotency ? (created) => idempotency.keep(201, toCreatedView(created, deps.signingOrigin)) : undefined,
      )
      return reply.code(201).send(toCreatedView(payload, deps.signingOrigin))
    },
  )

  app.get(
    '/payloads/:uuid',
    {
      // The rate and the poll gate are counted together here, once the request is known to be valid (api-key-auth.ts).
      config: { countsInHandler: true },
      attachValidation: true,
      schema: {
        summary: 'Get a payload',
        description: "Polling faster than the plan's minimum interval (Free 3 s, Pro 1 s) per payload is refused with 429 and Retry-After.",
        tags: ['payloads'],
        params: UuidParams,
        querystring: ApiKeyOnlyQuery,
        response: { 200: RefTo(PayloadView), ...errorResponses(401, 404, 422, 429) },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request)
      const { uuid } = request.params
      const intervalMs = deps.limits[principal.plan].minPollIntervalMs
      // 0 means no poll gate (config takes 0 or whole seconds). The limiter is not asked: Redis would make 0 a 1 s gate.
      // A request refused by validation, or for an id that cannot be a payload's, is counted but passes no gate.
      const wellFormed = isUuid(uuid)
      const gated = intervalMs > 0 && request.validationError === undefined && wellFormed
      const pollGate = gated ? { key: `poll:${principal.projectId}:${uuid}`, limit: 1, windowMs: intervalMs } : undefined
      const gate = await deps.countRequest(request, reply, pollGate)
      if (request.validationError) throw request.validationError
      if (!wellFormed) throw notFound(NOT_FOUND_MESSAGE)
      if (gate && !gate.allowed) {
        const retryAfter = retryAfterSeconds(gate, deps.now())
        throw tooManyRequests(
          `Polling too fast: the ${PLAN_LABELS[principal.plan]} plan allows one GET of a payload every ${intervalMs / 1000} s; ` +
            `retry after ${retryAfter} s, or use webhooks or the live stream`,
          retryAfter,
        )
      }
      return toPayloadView(await deps.payloads.getForProject(principal.projectId, uuid))
    },
  )

  app.delete(
    '/payloads/:uuid',
    {
      schema: {
        summary: 'Cancel a pending payload',
        description: 'The payload becomes expired. 409 when it is not pending.',
        tags: ['payloads'],
        params: UuidParams,
        querystring: ApiKeyOnlyQuery,
        response: { 200: CancelledPayload, ...errorResponses(401, 404, 409, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request)
      const { uuid } = request.params
      if (!isUuid(uuid)) throw notFound(NOT_FOUND_MESSAGE)
      const payload = await deps.payloads.cancel(principal.projectId, uuid)
      return { uuid: payload.uuid, status: 'expired' as const }
    },
  )

  app.get(
    '/payloads',
    {
      schema: {
        summary: "List the project's payloads, newest first",
        tags: ['payloads'],
        querystring: ApiKeyPayloadListQuery,
        response: { 200: PayloadList, ...errorResponses(401, 422, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request)
      const { status, type, externalId, after } = request.query
      const { items, ...paging } = await readPage(request.query, (rows) =>
        deps.payloads.list(principal.projectId, { ...rows, status, type, externalId, after }),
      )
      return { payloads: items.map(toPayloadView), ...paging }
    },
  )
}
