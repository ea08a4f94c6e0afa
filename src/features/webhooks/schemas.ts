// The webhook API's shapes (docs/webhooks.md): webhooks, their deliveries, and the bodies a receiver gets. Routes
// validate with them, the domain and the dashboard take their types from them, the SDK's are generated from them.
import { type Static, Type } from 'typebox'
import { AnyObject, Nullable, NullableTimestamp, PageFields, RefTo, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { PAYLOAD_EVENTS } from '../payloads/model.js'
import { PayloadStatusSchema, PayloadTypeSchema, SubmissionSchema } from '../payloads/schemas.js'
import { MultisignViewSchema } from '../signing/multisign/schema.js'
import { DELIVERY_STATES, WEBHOOK_TEST_EVENT } from './model.js'
import { MAX_WEBHOOK_URL_LENGTH } from './url-policy.js'

export const PayloadEventSchema = StringEnum(PAYLOAD_EVENTS, {
  description:
    'payload.signed, payload.rejected, payload.expired, payload.signature_added (multisigned requests) or payload.finalized (a submitted transaction is final); the last two only when listed',
})
const Events = (description: string) => Type.Array(PayloadEventSchema, { minItems: 1, uniqueItems: true, description })
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
export type CreateWebhookRequest = Static<typeof CreateWebhookBody>

export const CreatedWebhook = Type.Object({
  id: Type.String({ description: 'wh_<id>' }),
  url: Type.String(),
  secret: Type.String({
    description: 'whsec_<base64 of 32 bytes>: the signing secret of X-Service-Signature and webhook-signature; shown only in this response',
  }),
  events: Events(SUBSCRIBED),
})
export type CreatedWebhook = Static<typeof CreatedWebhook>

export const WebhookView = Type.Object(
  {
    id: Type.String({ description: 'wh_<id>' }),
    url: Type.String(),
    events: Events(SUBSCRIBED),
    createdAt: Timestamp(),
    disabledAt: Type.Optional(
      Timestamp('Present while the webhook is disabled (its receiver answered 410 Gone, or every delivery failed for 5 days)'),
    ),
    disabledReason: Type.Optional(Nullable(Type.String(), 'Why the webhook was disabled')),
  },
  { $id: 'Webhook' },
)
export type WebhookView = Static<typeof WebhookView>

export const DeliveryEventSchema = StringEnum([...PAYLOAD_EVENTS, WEBHOOK_TEST_EVENT], {
  description: `payload.signed, payload.rejected, payload.expired, payload.signature_added, payload.finalized, or ${WEBHOOK_TEST_EVENT}`,
})

export const DeliveryView = Type.Object(
  {
    id: Type.String({ description: 'dlv_<id>; sent as webhook-id (and X-Countersign-Delivery), the same on every attempt' }),
    event: DeliveryEventSchema,
    payloadUuid: Nullable(Type.String({ format: 'uuid' }), 'Null for a test delivery'),
    state: StringEnum(DELIVERY_STATES, {
      description:
        'pending (waiting for its next attempt), sending, succeeded, failed (last attempt failed, or the receiver answered 410), ' +
        'cancelled (webhook deleted or disabled, or the project left the Pro plan)',
    }),
    attempts: Type.Integer({ description: 'Attempts made in the current series; a retry starts a new series' }),
    lastStatusCode: Nullable(Type.Integer(), "The receiver's HTTP status at the last attempt"),
    lastError: Nullable(Type.String(), 'Why the last attempt failed (timeout, connection error, status)'),
    nextAttemptAt: NullableTimestamp('When the next attempt is due; null once the delivery has finished'),
    createdAt: Timestamp(),
    completedAt: NullableTimestamp('When the delivery succeeded, failed or was cancelled'),
  },
  { $id: 'WebhookDelivery' },
)
export type DeliveryView = Static<typeof DeliveryView>

/** A delivery listed under its payload: which webhook it went to as well. */
export const PayloadDeliveryView = Type.Object({
  ...DeliveryView.properties,
  webhookId: Type.String({ description: 'The webhook it went to, wh_<id>' }),
})
export type PayloadDeliveryView = Static<typeof PayloadDeliveryView>

export const WebhookList = Type.Object({ webhooks: Type.Array(RefTo(WebhookView)) })
export type WebhookList = Static<typeof WebhookList>
export const DeliveryList = Type.Object({ deliveries: Type.Array(RefTo(DeliveryView)), ...PageFields })
export type DeliveryList = Static<typeof DeliveryList>
export const PayloadDeliveryList = Type.Object({ deliveries: Type.Array(PayloadDeliveryView) })
export type PayloadDeliveryList = Static<typeof PayloadDeliveryList>
export const DeletedWebhook = Type.Object({ id: Type.String(), deleted: Type.Literal(true) })
export type DeletedWebhook = Static<typeof DeletedWebhook>

export const RotatedSecret = Type.Object({
  id: Type.String({ description: 'wh_<id>' }),
  secret: Type.String({
    description: 'The new whsec_... secret, shown only in this response; the replaced one also signs webhook-signature for 24 hours',
  }),
})
export type RotatedSecret = Static<typeof RotatedSecret>

export const ReplayBody = Type.Object(
  { since: Type.String({ format: 'date-time', description: 'ISO 8601 timestamp: deliveries created at or after it are sent again' }) },
  { additionalProperties: false },
)
export type ReplayRequest = Static<typeof ReplayBody>

export const ReplayResult = Type.Object({
  id: Type.String({ description: 'wh_<id>' }),
  since: Timestamp('The since of the request'),
  replayed: Type.Integer({ description: 'How many failed or cancelled deliveries were queued again' }),
})
export type ReplayResult = Static<typeof ReplayResult>

/** The payload object of a payload event's delivery (docs/webhooks.md): null for fields the payload does not have. */
export const WebhookPayload = Type.Object(
  {
    uuid: Type.String({ format: 'uuid' }),
    type: PayloadTypeSchema,
    status: PayloadStatusSchema,
    signerAddress: Nullable(Type.String()),
    txHash: Nullable(Type.String()),
    txBlob: Nullable(Type.String()),
    walletAdapter: Nullable(Type.String()),
    createdAt: Timestamp(),
    resolvedAt: Nullable(Timestamp()),
    submission: Type.Optional(SubmissionSchema),
    multisign: Type.Optional(MultisignViewSchema),
    externalId: Nullable(Type.String(), 'options.externalId, null when not given'),
    metadata: Nullable(AnyObject(), 'options.metadata, null when not given'),
  },
  { $id: 'WebhookPayload' },
)
export type WebhookPayload = Static<typeof WebhookPayload>

/** The body of a delivery telling that a payload was signed, rejected or expired. */
export const PayloadEventDelivery = Type.Object(
  { event: PayloadEventSchema, payload: RefTo(WebhookPayload) },
  { $id: 'PayloadEventDelivery', description: 'A delivery telling that a payload was signed, rejected or expired' },
)
export type PayloadEventDelivery = Static<typeof PayloadEventDelivery>

/** The body of a test delivery (POST /webhooks/{id}/test): sent whatever the webhook's events, with no payload. */
export const WebhookTestDelivery = Type.Object(
  { event: Type.Literal(WEBHOOK_TEST_EVENT), webhookId: Type.String(), createdAt: Timestamp() },
  { $id: 'WebhookTestDelivery', description: 'The delivery of "Send test event": sent whatever the webhook\'s events, with no payload' },
)
export type WebhookTestDelivery = Static<typeof WebhookTestDelivery>

/** The schemas of what a receiver gets: not answers of any route, so the app adds them to the OpenAPI document itself. */
export const DELIVERY_BODY_SCHEMAS = [WebhookPayload, PayloadEventDelivery, WebhookTestDelivery]
