// The webhook API (docs/interface.md §4, docs/webhooks.md): a project's webhooks and their deliveries, as one plugin
// registered under each scope of scopes.ts, which says whose project a request acts for.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { type TProperties, Type } from 'typebox'
import { IdempotencyKeyHeaders, recordKeptResponse } from '../../platform/http/idempotency.js'
import { errorResponses, PageQuery, RefTo, readPage } from '../../platform/http/schemas.js'
import { MAX_WEBHOOKS_PER_PROJECT, toDeliveryView, toWebhookView, WEBHOOK_TEST_EVENT } from './model.js'
import {
  CreatedWebhook,
  type CreatedWebhook as CreatedWebhookView,
  CreateWebhookBody,
  DeletedWebhook,
  DeliveryList,
  DeliveryView,
  ReplayBody,
  ReplayResult,
  RotatedSecret,
  WebhookList,
  WebhookView,
} from './schemas.js'
import type { WebhookScope } from './scopes.js'
import type { WebhookService } from './service.js'

export interface WebhookRoutesDeps {
  webhooks: WebhookService
  scope: WebhookScope
}

const WebhookId = Type.String({ description: 'Webhook id, wh_<id>' })
const DeliveryId = Type.String({ description: 'Delivery id, dlv_<id>' })

export const webhookRoutes: FastifyPluginAsyncTypebox<WebhookRoutesDeps> = async (app, { webhooks, scope }) => {
  const params = <Own extends TProperties>(own: Own) => Type.Object({ ...scope.params, ...own }, { additionalProperties: false })
  const ProjectParams = params({})
  const WebhookParams = params({ id: WebhookId })
  const DeliveryParams = params({ id: WebhookId, deliveryId: DeliveryId })
  // Without query parameters of its own or of the scope, a route leaves the query string alone (no schema).
  const query = Object.keys(scope.query).length > 0 ? { querystring: Type.Object(scope.query, { additionalProperties: false }) } : {}
  const DeliveriesQuery = Type.Object({ ...scope.query, ...PageQuery('Deliveries') }, { additionalProperties: false })
  const describe = (summary: string, description: string) => ({ summary, description: `${description} ${scope.note}`, tags: scope.tags })

  app.post(
    '/webhooks',
    {
      config: { idempotent: scope.idempotent },
      schema: {
        ...describe(
          'Register a webhook',
          `The signing secret is in this response only. A project can have at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks (409 beyond). ` +
            'URLs on loopback, private, link-local or metadata addresses are refused (422).',
        ),
        ...(scope.idempotent ? { headers: IdempotencyKeyHeaders } : {}),
        params: ProjectParams,
        ...query,
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook, ...errorResponses(400, 403, 409, 415, 422, ...scope.errors) },
      },
    },
    async (request, reply) => {
      const idempotency = request.idempotency
      const view = ({ webhook, secret }: { webhook: Omit<CreatedWebhookView, 'secret'>; secret: string }): CreatedWebhookView => ({
        id: webhook.id,
        url: webhook.url,
        secret,
        events: webhook.events,
      })
      const created = await webhooks.create(
        await scope.projectOf(request),
        request.body,
        idempotency ? (tx, created) => recordKeptResponse(tx, idempotency.keep(201, view(created))) : undefined,
      )
      return reply.code(201).send(view(created))
    },
  )

  app.get(
    '/webhooks',
    {
      schema: {
        ...describe("List the project's webhooks", 'Oldest first; never the secret.'),
        params: ProjectParams,
        ...query,
        response: { 200: WebhookList, ...errorResponses(403, ...scope.errors) },
      },
    },
    async (request) => ({ webhooks: (await webhooks.list(await scope.projectOf(request))).map(toWebhookView) }),
  )

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        ...describe('Delete a webhook', 'Its deliveries waiting for an attempt are cancelled.'),
        params: WebhookParams,
        ...query,
        response: { 200: DeletedWebhook, ...errorResponses(403, 404, ...scope.errors) },
      },
    },
    async (request) => {
      const { id } = request.params
      await webhooks.delete(await scope.projectOf(request), id)
      return { id, deleted: true as const }
    },
  )

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        ...describe(
          "List a webhook's deliveries, newest first",
          'Each delivery with its attempts, last status code or error, next attempt time and state.',
        ),
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: { 200: DeliveryList, ...errorResponses(403, 404, 422, ...scope.errors) },
      },
    },
    async (request) => {
      const { id } = request.params
      const project = await scope.projectOf(request)
      const { items, ...paging } = await readPage(request.query, (rows) => webhooks.listDeliveries(project, id, rows))
      return { deliveries: items.map(toDeliveryView), ...paging }
    },
  )

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        ...describe(
          'Send a delivery again',
          'A succeeded, failed or cancelled delivery is queued again as a new series of attempts, with the same delivery id and ' +
            'the same body. 409 while it is still pending or being sent, or when the webhook is disabled.',
        ),
        params: DeliveryParams,
        ...query,
        response: { 202: RefTo(DeliveryView), ...errorResponses(403, 404, 409, ...scope.errors) },
      },
    },
    async (request, reply) => {
      const { id, deliveryId } = request.params
      const delivery = await webhooks.retryDelivery(await scope.projectOf(request), id, deliveryId)
      return reply.code(202).send(toDeliveryView(delivery))
    },
  )

  app.post(
    '/webhooks/:id/test',
    {
      schema: {
        ...describe(
          'Send a test delivery',
          `Queues a signed delivery with the body {"event": "${WEBHOOK_TEST_EVENT}", "webhookId": "wh_...", "createdAt": "..."}, ` +
            'tried once; its outcome appears in the deliveries list. 409 when the webhook is disabled.',
        ),
        params: WebhookParams,
        ...query,
        response: { 202: RefTo(DeliveryView), ...errorResponses(403, 404, 409, ...scope.errors) },
      },
    },
    async (request, reply) => {
      const { id } = request.params
      const delivery = await webhooks.sendTest(await scope.projectOf(request), id)
      return reply.code(202).send(toDeliveryView(delivery))
    },
  )

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      schema: {
        ...describe(
          "Replace a webhook's signing secret",
          'Returns the new secret, once. X-Service-Signature uses it at once; for 24 hours webhook-signature carries two ' +
            'signatures, with the new secret and with the replaced one, so that receivers can switch without losing a delivery.',
        ),
        params: WebhookParams,
        ...query,
        response: { 200: RotatedSecret, ...errorResponses(403, 404, ...scope.errors) },
      },
    },
    async (request) => {
      const { id } = request.params
      const { webhook, secret } = await webhooks.rotateSecret(await scope.projectOf(request), id)
      return { id: webhook.id, secret }
    },
  )

  app.post(
    '/webhooks/:id/replay',
    {
      schema: {
        ...describe(
          'Send the failed deliveries since a time again',
          'Every payload-event delivery created at or after since that failed or was cancelled is queued again, with its ' +
            'delivery id and body. 409 when the webhook is disabled (enable it first); 422 for a since in the future.',
        ),
        params: WebhookParams,
        ...query,
        body: ReplayBody,
        response: { 202: ReplayResult, ...errorResponses(400, 403, 404, 409, 415, 422, ...scope.errors) },
      },
    },
    async (request, reply) => {
      const { id } = request.params
      const { since } = request.body
      const sinceMs = Date.parse(since)
      const replayed = await webhooks.replay(await scope.projectOf(request), id, sinceMs)
      return reply.code(202).send({ id, since: new Date(sinceMs).toISOString(), replayed })
    },
  )

  app.post(
    '/webhooks/:id/enable',
    {
      schema: {
        ...describe(
          'Enable a disabled webhook',
          'A webhook disabled by a 410 Gone or by 5 days of failed deliveries receives events again from now on. ' +
            'Enabling an enabled webhook changes nothing. Events of the time it was disabled made no deliveries.',
        ),
        params: WebhookParams,
        ...query,
        response: { 200: RefTo(WebhookView), ...errorResponses(403, 404, ...scope.errors) },
      },
    },
    async (request) => {
      const { id } = request.params
      return toWebhookView(await webhooks.enable(await scope.projectOf(request), id))
    },
  )
}
