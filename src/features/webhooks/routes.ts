// The webhook API (docs/interface.md §4, docs/webhooks.md): one plugin, registered under the API-key scope
// (/api/v1/webhooks/..., for applications) and under the session scope (/api/v1/projects/{projectId}/webhooks/...,
// for the dashboard). A scope says whose project a request acts for, and what its routes add to the OpenAPI document.
import { type TProperties, type TString, Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { notFound } from '../../platform/errors.js'
import { principalOf } from '../../platform/http/api-key-auth.js'
import { IdempotencyKeyHeaders } from '../../platform/http/idempotency.js'
import { ApiKeyQuery, errorResponses, NullableTimestamp, PageFields, PageQuery, Timestamp } from '../../platform/http/schemas.js'
import { sessionOf } from '../../platform/http/session-auth.js'
import { PAYLOAD_EVENTS } from '../payloads/model.js'
import type { AccountProjects } from '../projects/account-projects.js'
import { DELIVERY_STATES, MAX_WEBHOOKS_PER_PROJECT, toDeliveryView, toWebhookView, WEBHOOK_TEST_EVENT } from './model.js'
import type { ProjectScope, WebhookService } from './service.js'
import { MAX_WEBHOOK_URL_LENGTH } from './url-policy.js'

const EventName = Type.String({
  enum: [...PAYLOAD_EVENTS],
  description:
    'payload.signed, payload.rejected, payload.expired, payload.signature_added (multisigned requests) or payload.finalized (a submitted transaction is final); the last two only when listed',
})
const Events = (description: string) => Type.Array(EventName, { minItems: 1, uniqueItems: true, description })
const SUBSCRIBED = 'The events this webhook receives'

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({
      maxLength: MAX_WEBHOOK_URL_LENGTH,
      description: 'Absolute http(s) URL that receives the deliveries; it must resolve to public addresses',
    }),
    events: Type.Optional(
      Events(
        'The events to receive, a non-empty subset without repeats; payload.signed, payload.rejected and payload.expired when omitted (payload.finalized only when listed)',
      ),
    ),
  },
  { additionalProperties: false },
)

export const CreatedWebhook = Type.Object({
  id: Type.String({ description: 'wh_<id>' }),
  url: Type.String(),
  secret: Type.String({
    description: 'whsec_<base64 of 32 bytes>: the signing secret of X-Service-Signature and webhook-signature; shown only in this response',
  }),
  events: Events(SUBSCRIBED),
})

export const WebhookViewSchema = Type.Object(
  {
    id: Type.String({ description: 'wh_<id>' }),
    url: Type.String(),
    events: Events(SUBSCRIBED),
    createdAt: Timestamp(),
    disabledAt: Type.Optional(
      Timestamp('Present while the webhook is disabled (its receiver answered 410 Gone, or every delivery failed for 5 days)'),
    ),
    disabledReason: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Why the webhook was disabled' })),
  },
  { $id: 'Webhook' },
)

export const DeliveryViewSchema = Type.Object(
  {
    id: Type.String({ description: 'dlv_<id>; sent as webhook-id (and X-Countersign-Delivery), the same on every attempt' }),
    event: Type.String({
      description: `payload.signed, payload.rejected, payload.expired, payload.signature_added, payload.finalized, or ${WEBHOOK_TEST_EVENT}`,
    }),
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

/** Where the webhook routes are registered, and for which project a request there acts. */
export interface WebhookScope {
  /** Path parameters of the prefix the routes are registered under: none, or the project's (`projectId`). */
  params: { projectId?: TString }
  /** Query parameters every route accepts besides its own: `api_key` under the API-key scope. */
  query: TProperties
  /** Statuses any route may answer besides its own: 401, and 429 (the project's rate) or 404 (not the account's project). */
  errors: readonly (401 | 404 | 429)[]
  tags: string[]
  /** Ends every route's description in the OpenAPI document. */
  note: string
  /** Whether creations honour an Idempotency-Key (docs/api.md): under the API-key scope, whose hooks implement it. */
  idempotent: boolean
  /** The project the request acts for, with its plan (webhooks are a Pro feature). */
  projectOf(request: FastifyRequest): ProjectScope | Promise<ProjectScope>
}

/** For applications: the API key's project. */
export const apiKeyScope: WebhookScope = {
  params: {},
  query: ApiKeyQuery,
  errors: [401, 429],
  tags: ['webhooks'],
  note: 'Webhooks are a Pro plan feature: a Free project gets 403 on every webhook endpoint.',
  idempotent: true,
  projectOf: principalOf,
}

/** For the dashboard, under the prefix /projects/:projectId: the signed-in account's own project (404 for any other). */
export function sessionScope(projects: AccountProjects): WebhookScope {
  return {
    params: { projectId: Type.String({ description: 'Project id, proj_...' }) },
    query: {},
    errors: [401, 404],
    tags: ['projects'],
    note:
      'Session-authenticated (the dashboard cookie); API keys are not accepted. Changes need an Origin equal to PUBLIC_URL. ' +
      'Webhooks are a Pro plan feature: a Free project gets 403.',
    idempotent: false,
    projectOf: (request) => accountProject(projects, request, projectIdOf(request.params)),
  }
}

/** The signed-in account's own project (404 otherwise) as the webhook service sees it: its id and plan. */
async function accountProject(projects: AccountProjects, request: FastifyRequest, projectId: string): Promise<ProjectScope> {
  const project = await projects.project(sessionOf(request).account.id, projectId)
  return { projectId: project.id, plan: project.plan }
}

function projectIdOf(params: unknown): string {
  if (typeof params === 'object' && params !== null && 'projectId' in params && typeof params.projectId === 'string')
    return params.projectId
  throw notFound('Project not found')
}

export interface WebhookRoutesDeps {
  webhooks: WebhookService
  scope: WebhookScope
}

const RotatedSecret = Type.Object({
  id: Type.String({ description: 'wh_<id>' }),
  secret: Type.String({
    description: 'The new whsec_... secret, shown only in this response; the replaced one also signs webhook-signature for 24 hours',
  }),
})

const ReplayBody = Type.Object(
  { since: Type.String({ format: 'date-time', description: 'ISO 8601 timestamp: deliveries created at or after it are sent again' }) },
  { additionalProperties: false },
)

const ReplayResult = Type.Object({
  id: Type.String({ description: 'wh_<id>' }),
  since: Timestamp('The since of the request'),
  replayed: Type.Integer({ description: 'How many failed or cancelled deliveries were queued again' }),
})

const WebhookId = Type.String({ description: 'Webhook id, wh_<id>' })
const DeliveryId = Type.String({ description: 'Delivery id, dlv_<id>' })

export async function webhookRoutes(app: FastifyInstance, { webhooks, scope }: WebhookRoutesDeps): Promise<void> {
  app.addSchema(WebhookViewSchema)
  app.addSchema(DeliveryViewSchema)

  const params = (own: TProperties) => Type.Object({ ...scope.params, ...own }, { additionalProperties: false })
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
      const body = request.body as typeof CreateWebhookBody.static
      const idempotency = request.idempotency
      const view = ({ webhook, secret }: { webhook: { id: string; url: string; events: string[] }; secret: string }) => ({
        id: webhook.id,
        url: webhook.url,
        secret,
        events: webhook.events,
      })
      const created = await webhooks.create(
        await scope.projectOf(request),
        body,
        idempotency ? (tx, created) => idempotency.complete(tx, 201, view(created)) : undefined,
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
        response: { 200: Type.Object({ webhooks: Type.Array(Type.Ref(WebhookViewSchema)) }), ...errorResponses(403, ...scope.errors) },
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
        response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...errorResponses(403, 404, ...scope.errors) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
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
        response: {
          200: Type.Object({ deliveries: Type.Array(Type.Ref(DeliveryViewSchema)), ...PageFields }),
          ...errorResponses(403, 404, 422, ...scope.errors),
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      const page = request.query as { limit: number; offset: number }
      const deliveries = await webhooks.listDeliveries(await scope.projectOf(request), id, page)
      return { deliveries: deliveries.map(toDeliveryView), limit: page.limit, offset: page.offset }
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
        response: { 202: Type.Ref(DeliveryViewSchema), ...errorResponses(403, 404, 409, ...scope.errors) },
      },
    },
    async (request, reply) => {
      const { id, deliveryId } = request.params as { id: string; deliveryId: string }
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
        response: { 202: Type.Ref(DeliveryViewSchema), ...errorResponses(403, 404, 409, ...scope.errors) },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string }
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
      const { id } = request.params as { id: string }
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
      const { id } = request.params as { id: string }
      const { since } = request.body as typeof ReplayBody.static
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
        response: { 200: Type.Ref(WebhookViewSchema), ...errorResponses(403, 404, ...scope.errors) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      return toWebhookView(await webhooks.enable(await scope.projectOf(request), id))
    },
  )
}

export interface PayloadDeliveryRoutesDeps {
  projects: AccountProjects
  webhooks: WebhookService
}

const PayloadDeliveryView = Type.Object({
  ...DeliveryViewSchema.properties,
  webhookId: Type.String({ description: 'The webhook it went to, wh_<id>' }),
})
const PayloadParams = Type.Object(
  { id: Type.String({ description: 'Project id, proj_...' }), uuid: Type.String({ description: 'Payload UUID' }) },
  { additionalProperties: false },
)

/** The dashboard's view of one payload's deliveries, to every webhook of the project (session scope). */
export async function payloadDeliveryRoutes(app: FastifyInstance, { projects, webhooks }: PayloadDeliveryRoutesDeps): Promise<void> {
  const { note, tags } = sessionScope(projects)
  app.get(
    '/projects/:id/payloads/:uuid/deliveries',
    {
      schema: {
        summary: "The webhook deliveries of a payload's events",
        description: `Newest first, to every webhook of the project. ${note}`,
        tags,
        params: PayloadParams,
        response: { 200: Type.Object({ deliveries: Type.Array(PayloadDeliveryView) }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { id, uuid } = request.params as { id: string; uuid: string }
      // The payload must be the project's (404 otherwise), so that a uuid of another project reads as unknown.
      const payload = await projects.payload(sessionOf(request).account.id, id, uuid)
      const deliveries = await webhooks.listPayloadDeliveries(await accountProject(projects, request, id), payload.uuid)
      return { deliveries: deliveries.map((delivery) => ({ ...toDeliveryView(delivery), webhookId: delivery.webhookId })) }
    },
  )
}
