// The dashboard's webhook endpoints: the webhook API of docs/webhooks.md for a project of the signed-in account,
// authenticated by the session (registered under the session hook), plus the deliveries of one payload's events.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { errorResponses, PageFields, PageQuery } from '../../platform/http/schemas.js'
import { sessionOf } from '../../platform/http/session-auth.js'
import type { AccountProjects } from '../projects/account-projects.js'
import { toDeliveryView, toWebhookView } from './model.js'
import { CreatedWebhook, CreateWebhookBody, DeliveryViewSchema, WebhookViewSchema } from './routes.js'
import type { ProjectScope, WebhookService } from './service.js'

const TAGS = ['projects']
const NOTE =
  'Session-authenticated (the dashboard cookie); API keys are not accepted. Changes need an Origin equal to PUBLIC_URL. ' +
  'Webhooks are a Pro plan feature: a Free project gets 403.'

const WebhookView = Type.Object(WebhookViewSchema.properties)
const DeliveryView = Type.Object(DeliveryViewSchema.properties)
const PayloadDeliveryView = Type.Object({
  ...DeliveryViewSchema.properties,
  webhookId: Type.String({ description: 'The webhook it went to, wh_<id>' }),
})

const ProjectParams = Type.Object({ id: Type.String({ description: 'Project id, proj_...' }) }, { additionalProperties: false })
const WebhookParams = Type.Object(
  { id: Type.String(), webhookId: Type.String({ description: 'Webhook id, wh_<id>' }) },
  { additionalProperties: false },
)
const DeliveryParams = Type.Object(
  { id: Type.String(), webhookId: Type.String(), deliveryId: Type.String({ description: 'Delivery id, dlv_<id>' }) },
  { additionalProperties: false },
)
const PayloadParams = Type.Object(
  { id: Type.String(), uuid: Type.String({ description: 'Payload UUID' }) },
  { additionalProperties: false },
)
const DeliveriesQuery = Type.Object(PageQuery('Deliveries'), { additionalProperties: false })

export interface ProjectWebhookRoutesDeps {
  projects: AccountProjects
  webhooks: WebhookService
}

export async function projectWebhookRoutes(app: FastifyInstance, { projects, webhooks }: ProjectWebhookRoutesDeps): Promise<void> {
  /** The account's own project (404 otherwise) as the webhook service sees it: its id and plan. */
  const scopeOf = async (request: FastifyRequest): Promise<ProjectScope> => {
    const { id } = request.params as { id: string }
    const project = await projects.project(sessionOf(request).account.id, id)
    return { projectId: project.id, plan: project.plan }
  }

  app.get(
    '/projects/:id/webhooks',
    {
      schema: {
        summary: "List the project's webhooks",
        description: `Oldest first; never the secret. ${NOTE}`,
        tags: TAGS,
        params: ProjectParams,
        response: { 200: Type.Object({ webhooks: Type.Array(WebhookView) }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => ({ webhooks: (await webhooks.list(await scopeOf(request))).map(toWebhookView) }),
  )

  app.post(
    '/projects/:id/webhooks',
    {
      schema: {
        summary: 'Register a webhook',
        description: `The signing secret is in this response only. ${NOTE}`,
        tags: TAGS,
        params: ProjectParams,
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook, ...errorResponses(400, 401, 403, 404, 409, 422) },
      },
    },
    async (request, reply) => {
      const body = request.body as typeof CreateWebhookBody.static
      const { webhook, secret } = await webhooks.create(await scopeOf(request), body)
      return reply.code(201).send({ id: webhook.id, url: webhook.url, secret, events: webhook.events })
    },
  )

  app.delete(
    '/projects/:id/webhooks/:webhookId',
    {
      schema: {
        summary: 'Delete a webhook',
        description: `Its deliveries waiting for an attempt are cancelled. ${NOTE}`,
        tags: TAGS,
        params: WebhookParams,
        response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { webhookId } = request.params as { webhookId: string }
      await webhooks.delete(await scopeOf(request), webhookId)
      return { id: webhookId, deleted: true as const }
    },
  )

  app.get(
    '/projects/:id/webhooks/:webhookId/deliveries',
    {
      schema: {
        summary: "List a webhook's deliveries, newest first",
        description: NOTE,
        tags: TAGS,
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: {
          200: Type.Object({ deliveries: Type.Array(DeliveryView), ...PageFields }),
          ...errorResponses(401, 403, 404, 422),
        },
      },
    },
    async (request) => {
      const { webhookId } = request.params as { webhookId: string }
      const page = request.query as { limit: number; offset: number }
      const deliveries = await webhooks.listDeliveries(await scopeOf(request), webhookId, page)
      return { deliveries: deliveries.map(toDeliveryView), limit: page.limit, offset: page.offset }
    },
  )

  app.post(
    '/projects/:id/webhooks/:webhookId/deliveries/:deliveryId/retry',
    {
      schema: {
        summary: 'Send a delivery again',
        description: `A finished delivery is queued again with the same id and body; 409 while it is pending or being sent. ${NOTE}`,
        tags: TAGS,
        params: DeliveryParams,
        response: { 202: DeliveryView, ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const { webhookId, deliveryId } = request.params as { webhookId: string; deliveryId: string }
      const delivery = await webhooks.retryDelivery(await scopeOf(request), webhookId, deliveryId)
      return reply.code(202).send(toDeliveryView(delivery))
    },
  )

  app.post(
    '/projects/:id/webhooks/:webhookId/test',
    {
      schema: {
        summary: 'Send a test delivery',
        description: `Queues a signed webhook.test delivery, tried once; its outcome appears in the deliveries. ${NOTE}`,
        tags: TAGS,
        params: WebhookParams,
        response: { 202: DeliveryView, ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const { webhookId } = request.params as { webhookId: string }
      const delivery = await webhooks.sendTest(await scopeOf(request), webhookId)
      return reply.code(202).send(toDeliveryView(delivery))
    },
  )

  app.get(
    '/projects/:id/payloads/:uuid/deliveries',
    {
      schema: {
        summary: "The webhook deliveries of a payload's events",
        description: `Newest first, to every webhook of the project. ${NOTE}`,
        tags: TAGS,
        params: PayloadParams,
        response: { 200: Type.Object({ deliveries: Type.Array(PayloadDeliveryView) }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { id, uuid } = request.params as { id: string; uuid: string }
      // The payload must be the project's (404 otherwise), so that a uuid of another project reads as unknown.
      const payload = await projects.payload(sessionOf(request).account.id, id, uuid)
      const deliveries = await webhooks.listPayloadDeliveries(await scopeOf(request), payload.uuid)
      return { deliveries: deliveries.map((delivery) => ({ ...toDeliveryView(delivery), webhookId: delivery.webhookId })) }
    },
  )
}
