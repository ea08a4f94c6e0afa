// Webhook operations for a project (API-key routes and dashboard routes alike), and the transactional outbox:
// the deliveries of an event are written in the transaction of the state change that caused it.
import type { ServiceEvents } from '../../events.js'
import type { Clock } from '../../platform/clock.js'
import { newId } from '../../platform/crypto/ids.js'
import type { SecretBox } from '../../platform/crypto/secret-box.js'
import type { Db, Dialect, Tx } from '../../platform/db/database.js'
import { lockRow } from '../../platform/db/row-lock.js'
import { conflict, forbidden, notFound, unprocessable } from '../../platform/errors.js'
import { PAYLOAD_EVENTS, type PayloadEvent, RESOLUTION_EVENTS } from '../payloads/model.js'
import type { PayloadTransition } from '../payloads/transitions.js'
import { type PlanName, planHasWebhooks } from '../projects/plans.js'
import { webhookDeliveriesRepository } from './deliveries-repository.js'
import {
  DELIVERY_NOT_FOUND_MESSAGE,
  isPayloadEvent,
  MAX_WEBHOOKS_PER_PROJECT,
  PRO_PLAN_REQUIRED_MESSAGE,
  payloadEventBody,
  REPLAYABLE_DELIVERY_STATES,
  RETRYABLE_DELIVERY_STATES,
  SECRET_ROTATION_OVERLAP_MS,
  testEventBody,
  WEBHOOK_NOT_FOUND_MESSAGE,
  WEBHOOK_TEST_EVENT,
  type Webhook,
  type WebhookDelivery,
} from './model.js'
import { webhooksRepository } from './repository.js'
import { newWebhookSecret } from './signature.js'
import { assertWebhookUrl } from './url-policy.js'

/** The project a caller acts for, and its plan: webhooks are a Pro feature. */
export interface ProjectScope {
  projectId: string
  plan: PlanName
}

export interface CreatedWebhook {
  webhook: Webhook
  /** The signing secret: returned once, stored only sealed. */
  secret: string
}

export interface WebhookServiceOptions {
  db: Db
  dialect: Dialect
  clock: Clock
  /** 'delivery.queued' after a retry or a test delivery has committed, so that a dispatcher sends it at once. */
  events: ServiceEvents
  secretBox: SecretBox
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS */
  allowPrivateTargets: boolean
}

export class WebhookService {
  constructor(private readonly options: WebhookServiceOptions) {}

  /** Registers a webhook. `alongside` runs inside the creation's transaction (an idempotent response is recorded there). */
  async create(
    scope: ProjectScope,
    input: { url: string; events?: readonly string[] },
    alongside?: (tx: Tx, created: CreatedWebhook) => Promise<void>,
  ): Promise<CreatedWebhook> {
    assertPro(scope)
    const events = validateEvents(input.events)
    await assertWebhookUrl(input.url, { allowPrivateTargets: this.options.allowPrivateTargets })
    const secret = newWebhookSecret()
    const webhook: Webhook = {
      id: newId('wh'),
      projectId: scope.projectId,
      url: input.url,
      events,
      createdAtMs: this.options.clock.now(),
      disabledAtMs: null,
      disabledReason: null,
    }
    await this.options.db.transaction().execute(async (tx) => {
      await lockRow(tx, this.options.dialect, 'projects', scope.projectId)
      if ((await webhooksRepository.countForProject(tx, scope.projectId)) >= MAX_WEBHOOKS_PER_PROJECT) {
        throw conflict(`A project can have at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks; delete one before adding another`)
      }
      await webhooksRepository.insert(tx, webhook, this.options.secretBox.seal(secret))
      if (alongside) await alongside(tx, { webhook, secret })
    })
    return { webhook, secret }
  }

  /** The project's webhooks, oldest first; deleted ones are gone, disabled ones are listed. */
  async list(scope: ProjectScope): Promise<Webhook[]> {
    assertPro(scope)
    return webhooksRepository.listForProject(this.options.db, scope.projectId)
  }

  /** Deletes the webhook; its deliveries waiting for an attempt are cancelled with it. */
  async delete(scope: ProjectScope, webhookId: string): Promise<void> {
    assertPro(scope)
    const nowMs = this.options.clock.now()
    await this.options.db.transaction().execute(async (tx) => {
      if (!(await webhooksRepository.markDeleted(tx, scope.projectId, webhookId, nowMs))) throw notFound(WEBHOOK_NOT_FOUND_MESSAGE)
      await webhookDeliveriesRepository.cancelPendingForWebhook(tx, webhookId, nowMs)
    })
  }

  /** The webhook's deliveries, newest first. */
  async listDeliveries(scope: ProjectScope, webhookId: string, page: { limit: number; offset: number }): Promise<WebhookDelivery[]> {
    const webhook = await this.find(scope, webhookId)
    return webhookDeliveriesRepository.listForWebhook(this.options.db, webhook.id, page)
  }

  /** The deliveries of a payload's events, to every webhook of the project (deleted ones included), newest first. */
  async listPayloadDeliveries(scope: ProjectScope, payloadUuid: string): Promise<WebhookDelivery[]> {
    assertPro(scope)
    return webhookDeliveriesRepository.listForPayload(this.options.db, scope.projectId, payloadUuid)
  }

  /** Sends a finished delivery again as a new series of attempts, with the same delivery id and body. */
  async retryDelivery(scope: ProjectScope, webhookId: string, deliveryId: string): Promise<WebhookDelivery> {
    const webhook = await this.find(scope, webhookId)
    const existing = await webhookDeliveriesRepository.findForWebhook(this.options.db, webhook.id, deliveryId)
    if (!existing) throw notFound(DELIVERY_NOT_FOUND_MESSAGE)
    assertEnabled(webhook)
    const restarted = await webhookDeliveriesRepository.restart(
      this.options.db,
      webhook.id,
      deliveryId,
      RETRYABLE_DELIVERY_STATES,
      this.options.clock.now(),
    )
    if (!restarted) throw conflict('Delivery is already waiting for its next attempt or being sent; retry it once it has finished')
    this.options.events.emitCommitted('delivery.queued')
    return restarted
  }

  /**
   * Gives the webhook a new secret, returned once. The replaced secret keeps signing deliveries beside the new one in
   * webhook-signature for SECRET_ROTATION_OVERLAP_MS, so that receivers can switch without losing a delivery.
   */
  async rotateSecret(scope: ProjectScope, webhookId: string): Promise<{ webhook: Webhook; secret: string }> {
    const webhook = await this.find(scope, webhookId)
    const secret = newWebhookSecret()
    const rotated = await webhooksRepository.rotateSecret(this.options.db, scope.projectId, webhook.id, {
      secretCiphertext: this.options.secretBox.seal(secret),
      previousExpiresAtMs: this.options.clock.now() + SECRET_ROTATION_OVERLAP_MS,
    })
    if (!rotated) throw notFound(WEBHOOK_NOT_FOUND_MESSAGE)
    return { webhook, secret }
  }

  /**
   * Sends again, as new series of attempts with their ids and bodies, the webhook's payload-event deliveries created
   * at or after `sinceMs` that did not reach it (failed or cancelled). Returns how many.
   */
  async replay(scope: ProjectScope, webhookId: string, sinceMs: number): Promise<number> {
    const webhook = await this.find(scope, webhookId)
    const nowMs = this.options.clock.now()
    // A leap second (23:59:60) passes the date-time format but is no instant JavaScript can name.
    if (!Number.isFinite(sinceMs)) throw unprocessable([{ field: 'since', message: 'must be a date-time such as 2026-01-15T12:00:00Z' }])
    if (sinceMs > nowMs) throw unprocessable([{ field: 'since', message: 'must not be in the future' }])
    assertEnabled(webhook)
    const replayed = await webhookDeliveriesRepository.restartSince(
      this.options.db,
      webhook.id,
      { sinceMs, fromStates: REPLAYABLE_DELIVERY_STATES, events: PAYLOAD_EVENTS },
      nowMs,
    )
    if (replayed > 0) this.options.events.emitCommitted('delivery.queued')
    return replayed
  }

  /** Enables a disabled webhook (after a 410 or days of failures): events are delivered to it again from now on. */
  async enable(scope: ProjectScope, webhookId: string): Promise<Webhook> {
    const webhook = await this.find(scope, webhookId)
    await webhooksRepository.enable(this.options.db, scope.projectId, webhook.id)
    return { ...webhook, disabledAtMs: null, disabledReason: null }
  }

  /** Queues a signed test delivery, `{event: "webhook.test", webhookId, createdAt}`, tried once. */
  async sendTest(scope: ProjectScope, webhookId: string): Promise<WebhookDelivery> {
    const webhook = await this.find(scope, webhookId)
    assertEnabled(webhook)
    const nowMs = this.options.clock.now()
    const delivery = newDelivery(webhook.id, scope.projectId, null, WEBHOOK_TEST_EVENT, testEventBody(webhook.id, nowMs), nowMs)
    await webhookDeliveriesRepository.insertMany(this.options.db, [delivery])
    this.options.events.emitCommitted('delivery.queued')
    return delivery
  }

  /**
   * Runs inside the transaction of a project's change of plan: a project moved to a plan without webhooks has the
   * deliveries that wait for an attempt cancelled, so that a move back does not send what was due meanwhile.
   */
  async planChanged(tx: Tx, change: { projectId: string; plan: PlanName }): Promise<void> {
    if (planHasWebhooks(change.plan)) return
    await webhookDeliveriesRepository.cancelPendingForProject(tx, change.projectId, this.options.clock.now())
  }

  /**
   * Runs inside the transaction of payloads' state changes: for each change, one delivery per webhook that receives
   * its event now, all with the same body, serialised once here; written with the read of the subscribers (repository).
   */
  async enqueueForTransitions(tx: Tx, transitions: readonly PayloadTransition[]): Promise<void> {
    await webhookDeliveriesRepository.insertForSubscribers(
      tx,
      this.options.dialect,
      transitions.map(({ payload, event }) => ({
        projectId: payload.projectId,
        payloadUuid: payload.uuid,
        event,
        body: payloadEventBody(event, payload),
      })),
      this.options.clock.now(),
    )
  }

  private async find(scope: ProjectScope, webhookId: string): Promise<Webhook> {
    assertPro(scope)
    const webhook = await webhooksRepository.findForProject(this.options.db, scope.projectId, webhookId)
    if (!webhook) throw notFound(WEBHOOK_NOT_FOUND_MESSAGE)
    return webhook
  }
}

function newDelivery(
  webhookId: string,
  projectId: string,
  payloadUuid: string | null,
  event: WebhookDelivery['event'],
  body: string,
  nowMs: number,
): WebhookDelivery {
  return {
    id: newId('dlv'),
    webhookId,
    projectId,
    payloadUuid,
    event,
    body,
    state: 'pending',
    attempts: 0,
    nextAttemptAtMs: nowMs,
    leaseExpiresAtMs: null,
    lastStatusCode: null,
    lastError: null,
    createdAtMs: nowMs,
    completedAtMs: null,
  }
}

function assertPro(scope: ProjectScope): void {
  if (!planHasWebhooks(scope.plan)) throw forbidden(PRO_PLAN_REQUIRED_MESSAGE)
}

function assertEnabled(webhook: Webhook): void {
  if (webhook.disabledAtMs !== null) {
    throw conflict(
      `Webhook is disabled (${webhook.disabledReason ?? 'no reason recorded'}); enable it with POST /api/v1/webhooks/${webhook.id}/enable first`,
    )
  }
}

/** A non-empty list of distinct payload events; the three moves out of pending when omitted. */
function validateEvents(events: readonly string[] | undefined): PayloadEvent[] {
  if (events === undefined) return [...RESOLUTION_EVENTS]
  const allowed = PAYLOAD_EVENTS.join(', ')
  if (events.length === 0) throw unprocessable([{ field: 'events', message: `must list at least one of ${allowed}` }])
  const unknown = events.find((event) => !isPayloadEvent(event))
  if (unknown !== undefined) throw unprocessable([{ field: 'events', message: `"${unknown}" is not an event; use ${allowed}` }])
  if (new Set(events).size !== events.length) throw unprocessable([{ field: 'events', message: 'must not list an event twice' }])
  return events as PayloadEvent[]
}
