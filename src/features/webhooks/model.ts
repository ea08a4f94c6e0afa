// Webhooks and their deliveries: the records, what a delivery's body is, and how both are shown to applications.
import { toIso } from '../../platform/utc.js'
import { PAYLOAD_EVENTS, type Payload, type PayloadEvent } from '../payloads/model.js'
import { toWebhookPayload } from '../payloads/view.js'
import type { DeliveryView, PayloadEventDelivery, WebhookTestDelivery, WebhookView } from './schemas.js'

/** Webhooks a project may have at once (not counting deleted ones), so that one event cannot fan out without bound. */
export const MAX_WEBHOOKS_PER_PROJECT = 10

export const PRO_PLAN_REQUIRED_MESSAGE = 'Webhooks require the Pro plan'
export const WEBHOOK_NOT_FOUND_MESSAGE = 'Webhook not found'
export const DELIVERY_NOT_FOUND_MESSAGE = 'Delivery not found'

/** Success is a 2xx within this time, counted from the start of the attempt (docs/webhooks.md). */
export const DELIVERY_TIMEOUT_MS = 10_000

/** The event of a delivery sent by POST /webhooks/{id}/test; never an event a webhook subscribes to. */
export const WEBHOOK_TEST_EVENT = 'webhook.test'
export type DeliveryEvent = PayloadEvent | typeof WEBHOOK_TEST_EVENT

/**
 * pending: waiting for its next attempt; sending: claimed by a dispatcher (until its lease expires);
 * succeeded: a 2xx; failed: the last attempt failed, or the receiver answered 410; cancelled: not sent because
 * the webhook was deleted or disabled, or the project left the Pro plan.
 */
export const DELIVERY_STATES = ['pending', 'sending', 'succeeded', 'failed', 'cancelled'] as const
export type DeliveryState = (typeof DELIVERY_STATES)[number]

/** States a delivery can be sent again from (POST .../retry): every state in which no attempt is due. */
export const RETRYABLE_DELIVERY_STATES: readonly DeliveryState[] = ['succeeded', 'failed', 'cancelled']

/** Deliveries POST /webhooks/{id}/replay sends again: those that ended without reaching the receiver. */
export const REPLAYABLE_DELIVERY_STATES: readonly DeliveryState[] = ['failed', 'cancelled']

/** After a rotation, the replaced secret signs deliveries beside the new one for this long, so receivers can switch. */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000

/** A test delivery is tried once: it asks whether the receiver works now, and a failure is shown, not mailed. */
export const TEST_DELIVERY_MAX_ATTEMPTS = 1

export interface Webhook {
  id: string
  projectId: string
  url: string
  events: PayloadEvent[]
  createdAtMs: number
  disabledAtMs: number | null
  disabledReason: string | null
}

export interface WebhookDelivery {
  id: string
  webhookId: string
  projectId: string
  /** Null for a test delivery. */
  payloadUuid: string | null
  event: DeliveryEvent
  /** The exact bytes sent and signed at every attempt, serialised once when the event happened. */
  body: string
  state: DeliveryState
  /** Attempts made in the current series (a retry requested by the user starts a new series). */
  attempts: number
  nextAttemptAtMs: number
  leaseExpiresAtMs: number | null
  lastStatusCode: number | null
  lastError: string | null
  createdAtMs: number
  completedAtMs: number | null
}

export function isPayloadEvent(value: string): value is PayloadEvent {
  return (PAYLOAD_EVENTS as readonly string[]).includes(value)
}

/** The delivery body of a payload event: docs/interface.md §6, `{event, payload}`. */
export function payloadEventBody(event: PayloadEvent, payload: Payload): string {
  const body: PayloadEventDelivery = { event, payload: toWebhookPayload(payload, event) }
  return JSON.stringify(body)
}

/** The delivery body of a test: `{event: "webhook.test", webhookId, createdAt}`. */
export function testEventBody(webhookId: string, nowMs: number): string {
  const body: WebhookTestDelivery = { event: WEBHOOK_TEST_EVENT, webhookId, createdAt: toIso(nowMs) }
  return JSON.stringify(body)
}

/** A webhook as the API lists it: never its secret; disabledAt and disabledReason only once it is disabled. */
export function toWebhookView(webhook: Webhook): WebhookView {
  const view: WebhookView = { id: webhook.id, url: webhook.url, events: webhook.events, createdAt: toIso(webhook.createdAtMs) }
  if (webhook.disabledAtMs !== null) {
    view.disabledAt = toIso(webhook.disabledAtMs)
    view.disabledReason = webhook.disabledReason
  }
  return view
}

/** A delivery as the API lists it: its history, not its body. nextAttemptAt only while an attempt is due. */
export function toDeliveryView(delivery: WebhookDelivery): DeliveryView {
  const due = delivery.state === 'pending' || delivery.state === 'sending'
  return {
    id: delivery.id,
    event: delivery.event,
    payloadUuid: delivery.payloadUuid,
    state: delivery.state,
    attempts: delivery.attempts,
    lastStatusCode: delivery.lastStatusCode,
    lastError: delivery.lastError,
    nextAttemptAt: due ? toIso(delivery.nextAttemptAtMs) : null,
    createdAt: toIso(delivery.createdAtMs),
    completedAt: delivery.completedAtMs === null ? null : toIso(delivery.completedAtMs),
  }
}
