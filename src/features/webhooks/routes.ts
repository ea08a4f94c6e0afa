// The webhook API for applications (docs/interface.md §4, and the delivery endpoints documented in docs/webhooks.md).
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { principalOf } from '../../platform/http/api-key-auth.js'
import {
  ApiKeyOnlyQuery,
  ApiKeyQuery,
  errorResponses,
  NullableTimestamp,
  PageFields,
  PageQuery,
  Timestamp,
} from '../../platform/http/schemas.js'
import { PAYLOAD_EVENTS } from '../payloads/model.js'
import { DELIVERY_STATES, MAX_WEBHOOKS_PER_PROJECT, toDeliveryView, toWebhookView, WEBHOOK_TEST_EVENT } from './model.js'
import type { WebhookService } from './service.js'
import { MAX_WEBHOOK_URL_LENGTH } from './url-policy.js'

const PRO_ONLY = 'Webhooks are a Pro plan feature: a Free project gets 403 on every webhook endpoint.'

const EventName = Type.String({
  enum: [...PAYLOAD_EVENTS],
  description: 'payload.signed, payload.rejected, payload.expired, or payload.signature_added (multisigned requests; only when listed)',
})
const Events = (description: string) => Type.Array(EventName, { minItems: 1, uniqueItems: true, description })
const SUBSCRIBED = 'The events this webhook receives'

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({
      maxLength: MAX_WEBHOOK_URL_LENGTH,
      description: 'Absolute http(s) URL that receives the deliveries; it must resolve to public addresses',
    }),
    events: Type.Optional(Events('The events to receive, a non-empty subset without repeats; all three when omitted')),
  },
  { additionalProperties: false },
)

export const CreatedWebhook = Type.Object({
  id: Type.String({ description: 'wh_<id>' }),
  url: Type.String(),
  secret: Type.String({ description: 'whsec_... signing secret for X-Service-Signature; shown only in this response' }),
  events: Events(SUBSCRIBED),
})

export const WebhookViewSchema = Type.Object(
  {
    id: Type.String({ description: 'wh_<id>' }),
    url: Type.String(),
    events: Events(SUBSCRIBED),
    createdAt: Timestamp(),
    disabledAt: Type.Optional(Timestamp('Present once the webhook is disabled (its receiver answered 410 Gone)')),
    disabledReason: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Why the webhook was disabled' })),
  },
  { $id: 'Webhook' },
)

export const DeliveryViewSchema = Type.Object(
  {
    id: Type.String({ description: 'dlv_<id>; sent as X-Countersign-Delivery, the same on every attempt' }),
    event: Type.String({ description: `payload.signed, payload.rejected, payload.expired, or ${WEBHOOK_TEST_EVENT}` }),
    payloadUuid: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'Null for a test delivery' }),
    state: Type.String({
      enum: [...DELIVERY_STATES],
      description:
        'pending (waiting for its next attempt), sending, succeeded, failed (last attempt failed, or the receiver answered 410), ' +
        'cancelled (webhook deleted or disabled, or the project left the Pro plan)',
    }),
    attempts: Type.Integer({ description: 'Attempts made in the current series; a retry starts a new series' }),
    lastStatusCode: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status at the last attempt" }),
    lastError: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed (timeout, connection error, status)' }),
    nextAttemptAt: NullableTimestamp('When the next attempt is due; null once the delivery has finished'),
    createdAt: Timestamp(),
    completedAt: NullableTimestamp('When the delivery succeeded, failed or was cancelled'),
  },
  { $id: 'WebhookDelivery' },
)

const WebhookParams = Type.Object({ id: Type.String({ description: 'Webhook id, wh_<id>' }) }, { additionalProperties: false })
const DeliveryParams = Type.Object(
  { id: Type.String({ description: 'Webhook id, wh_<id>' }), deliveryId: Type.String({ description: 'Delivery id, dlv_<id>' }) },
  { additionalProperties: false },
)

const DeliveriesQuery = Type.Object(
  {
    ...ApiKeyQuery,
    ...PageQuery('Deliveries'),
  },
  { additionalProperties: false },
)

export interface WebhookRoutesDeps {
  webhooks: WebhookService
}

export async function webhookRoutes(app: FastifyInstance, deps: WebhookRoutesDeps): Promise<void> {
  app.addSchema(WebhookViewSchema)
  app.addSchema(DeliveryViewSchema)

  app.post(
    '/webhooks',
    {
      schema: {
        summary: 'Register a webhook',
        description: `${PRO_ONLY} A project can have at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks (409 beyond). URLs on loopback, private, link-local or metadata addresses are refused (422).`,
        tags: ['webhooks'],
        querystring: ApiKeyOnlyQuery,
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook, ...errorResponses(400, 401, 403, 409, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      const body = request.body as typeof CreateWebhookBody.static
      const { webhook, secret } = await deps.webhooks.create(principalOf(request), body)
      return reply.code(201).send({ id: webhook.id, url: webhook.url, secret, events: webhook.events })
    },
  )

  app.get(
    '/webhooks',
    {
      schema: {
        summary: "List the project's webhooks",
        description: `${PRO_ONLY} Oldest first; never the secret.`,
        tags: ['webhooks'],
        querystring: ApiKeyOnlyQuery,
        response: { 200: Type.Object({ webhooks: Type.Array(Type.Ref(WebhookViewSchema)) }), ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => ({ webhooks: (await deps.webhooks.list(principalOf(request))).map(toWebhookView) }),
  )

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        summary: 'Delete a webhook',
        description: `${PRO_ONLY} Its deliveries waiting for an attempt are cancelled.`,
        tags: ['webhooks'],
        params: WebhookParams,
        querystring: ApiKeyOnlyQuery,
        response: {
          200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }),
          ...errorResponses(401, 403, 404, 429),
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      await deps.webhooks.delete(principalOf(request), id)
      return { id, deleted: true as const }
    },
  )

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        summary: "List a webhook's deliveries, newest first",
        description: `${PRO_ONLY} Each delivery with its attempts, last status code or error, next attempt time and state.`,
        tags: ['webhooks'],
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: {
          200: Type.Object({ deliveries: Type.Array(Type.Ref(DeliveryViewSchema)), ...PageFields }),
          ...errorResponses(401, 403, 404, 422, 429),
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      const page = request.query as { limit: number; offset: number }
      const deliveries = await deps.webhooks.listDeliveries(principalOf(request), id, page)
      return { deliveries: deliveries.map(toDeliveryView), limit: page.limit, offset: page.offset }
    },
  )

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        summary: 'Send a delivery again',
        description:
          `${PRO_ONLY} A succeeded, failed or cancelled delivery is queued again as a new series of attempts, ` +
          'with the same delivery id and the same body. 409 while it is still pending or being sent, or when the webhook is disabled.',
        tags: ['webhooks'],
        params: DeliveryParams,
        querystring: ApiKeyOnlyQuery,
        response: { 202: Type.Ref(DeliveryViewSchema), ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const { id, deliveryId } = request.params as { id: string; deliveryId: string }
      const delivery = await deps.webhooks.retryDelivery(principalOf(request), id, deliveryId)
      return reply.code(202).send(toDeliveryView(delivery))
    },
  )

  app.post(
    '/webhooks/:id/test',
    {
      schema: {
        summary: 'Send a test delivery',
        description:
          `${PRO_ONLY} Queues a signed delivery with the body {"event": "${WEBHOOK_TEST_EVENT}", "webhookId": "wh_...", "createdAt": "..."}, ` +
          'tried once; its outcome appears in the deliveries list. 409 when the webhook is disabled.',
        tags: ['webhooks'],
        params: WebhookParams,
        querystring: ApiKeyOnlyQuery,
        response: { 202: Type.Ref(DeliveryViewSchema), ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string }
      const delivery = await deps.webhooks.sendTest(principalOf(request), id)
      return reply.code(202).send(toDeliveryView(delivery))
    },
  )
}
