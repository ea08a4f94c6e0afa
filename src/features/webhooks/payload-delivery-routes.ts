// The dashboard's view of one payload's webhook deliveries, to every webhook of the project (session scope).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { errorResponses } from '../../platform/http/schemas.js'
import { sessionOf } from '../../platform/http/session-auth.js'
import type { AccountProjects } from '../projects/account-projects.js'
import { toDeliveryView } from './model.js'
import { PayloadDeliveryList } from './schemas.js'
import { accountProject, sessionScope } from './scopes.js'
import type { WebhookService } from './service.js'

export interface PayloadDeliveryRoutesDeps {
  projects: AccountProjects
  webhooks: WebhookService
}

const PayloadParams = Type.Object(
  { id: Type.String({ description: 'Project id, proj_...' }), uuid: Type.String({ description: 'Payload UUID' }) },
  { additionalProperties: false },
)

/** The dashboard's view of one payload's deliveries, to every webhook of the project (session scope). */
export const payloadDeliveryRoutes: FastifyPluginAsyncTypebox<PayloadDeliveryRoutesDeps> = async (app, { projects, webhooks }) => {
  const { note, tags } = sessionScope(projects)
  app.get(
    '/projects/:id/payloads/:uuid/deliveries',
    {
      schema: {
        summary: "The webhook deliveries of a payload's events",
        description: `Newest first, to every webhook of the project. ${note}`,
        tags,
        params: PayloadParams,
        response: { 200: PayloadDeliveryList, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { id, uuid } = request.params
      // The payload must be the project's (404 otherwise), so that a uuid of another project reads as unknown.
      const payload = await projects.payload(sessionOf(request).account.id, id, uuid)
      const deliveries = await webhooks.listPayloadDeliveries(await accountProject(projects, request, id), payload.uuid)
      return { deliveries: deliveries.map((delivery) => ({ ...toDeliveryView(delivery), webhookId: delivery.webhookId })) }
    },
  )
}
