// The webhook API for applications (docs/interface.md §4, and the delivery endpoints documented in docs/webhooks.md).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { principalOf } from '../../platform/http/api-key-auth.js'
import { ApiKeyOnlyQuery, errorResponses, pageOf, RefTo } from '../../platform/http/schemas.js'
import { MAX_WEBHOOKS_PER_PROJECT, toDeliveryView, toWebhookView, WEBHOOK_TEST_EVENT } from './model.js'
import {
  ApiKeyDeliveriesQuery,
  CreatedWebhook,
  CreateWebhookBody,
  DeletedWebhook,
  DeliveryList,
  DeliveryView,
  WebhookList,
} from './schemas.js'
import type { WebhookService } from './service.js'

const PRO_ONLY = 'Webhooks are a Pro plan feature: a Free project gets 403 on every webhook endpoint.'

const WebhookParams = Type.Object({ id: Type.String({ description: 'Webhook id, wh_<id>' }) }, { additionalProperties: false })
const DeliveryParams = Type.Object(
  { id: Type.String({ description: 'Webhook id, wh_<id>' }), deliveryId: Type.String({ description: 'Delivery id, dlv_<id>' }) },
  { additionalProperties: false },
)

export interface WebhookRoutesDeps {
  webhooks: WebhookService
}

export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRoutesDeps> = async (app, deps) => {
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
      const { webhook, secret } = await deps.webhooks.create(principalOf(request), request.body)
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
        response: { 200: WebhookList, ...errorResponses(401, 403, 429) },
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
        response: { 200: DeletedWebhook, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) => {
      const { id } = request.params
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
        querystring: ApiKeyDeliveriesQuery,
        response: { 200: DeliveryList, ...errorResponses(401, 403, 404, 422, 429) },
      },
    },
    async (request) => {
      const { id } = request.params
      const page = pageOf(request.query)
      const deliveries = await deps.webhooks.listDeliveries(principalOf(request), id, page)
      return { deliveries: deliveries.map(toDeliveryView), ...page }
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
        response: { 202: RefTo(DeliveryView), ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const { id, deliveryId } = request.params
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
        response: { 202: RefTo(DeliveryView), ...errorResponses(401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const { id } = request.params
      const delivery = await deps.webhooks.sendTest(principalOf(request), id)
      return reply.code(202).send(toDeliveryView(delivery))
    },
  )
}
