// Records what became of each attempt (attemptOutcome decides it): a success, a retry on the schedule, a failure with
// its alert, or a disabled webhook. Every record is conditional on the dispatcher's claim (outbox.ts, claimHolds): a
// result that comes back after another instance took the delivery over changes nothing.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { ServiceEvents } from '../../../events.js'
import type { Clock } from '../../../platform/clock.js'
import type { Storage, Tx } from '../../../platform/db/database.js'
import type { WebhookDisabled, WebhookFailure } from '../../email/service.js'
import { claimOf, type DeliveryOutcome, webhookDeliveriesRepository } from '../deliveries-repository.js'
import type { WebhookDelivery } from '../model.js'
import { type DeliveryTarget, webhooksRepository } from '../repository.js'
import type { WebhookSendResult } from '../send.js'
import { attemptOutcome, FAILING_TOO_LONG_REASON, failingTooLong } from './attempt-outcome.js'

/**
 * How long a success waits for others before they are recorded together, in one write. Nothing waits on the record:
 * the receiver already has the delivery, and its slot is free once the response is in.
 */
const SUCCESS_RECORD_COALESCE_MS = 10

/**
 * A record that failed (no database connection free within the pool's timeout, under load) is tried again after this,
 * as long as the claim holds. A success that is never recorded is sent again by whoever takes the delivery over.
 */
const RECORD_RETRY_DELAY_MS = 1_000

export interface RecorderContext {
  storage: Storage
  clock: Clock
  logger: Logger
  /** 'delivery.failed' when a payload's delivery fails its last attempt: its alert mail is queued with the failure. */
  events: ServiceEvents
}

export type RecordedAttempt =
  /** A success: its record follows shortly, with others', and settles `recorded`. */
  | { kind: 'success'; recorded: Promise<void> }
  /** Any other outcome, recorded. `webhookDisabled`: the deliveries waiting for the webhook must not be sent. */
  | { kind: 'other'; webhookDisabled: boolean }

interface PendingSuccess {
  delivery: WebhookDelivery
  /** Its webhook was in a run of failures when the delivery was claimed: this success ends it. */
  endsFailures: boolean
  statusCode: number
  recorded: () => void
  failed: (error: unknown) => void
}

export class AttemptRecorder {
  private successes: PendingSuccess[] = []
  private stopping = false

  constructor(
    private readonly ctx: RecorderContext,
    /** Jitter of the retry schedule, a number in [0, 1). */
    private readonly random: () => number,
  ) {}

  /** Records the result of one send of a claimed delivery. */
  async record(delivery: WebhookDelivery, target: DeliveryTarget, result: WebhookSendResult): Promise<RecordedAttempt> {
    const nowMs = this.ctx.clock.now()
    const attempts = delivery.attempts + 1
    const outcome = attemptOutcome({ event: delivery.event, payloadUuid: delivery.payloadUuid, attempts, result, nowMs }, this.random)
    if (outcome.kind === 'succeeded') return { kind: 'success', recorded: this.recordSuccess(delivery, target, outcome.statusCode) }

    const { db } = this.ctx.storage
    const claim = claimOf(delivery)
    const attempted = { attempts, nextAttemptAtMs: delivery.nextAttemptAtMs, lastStatusCode: result.statusCode, lastError: result.error }
    const failed: DeliveryOutcome = { ...attempted, state: 'failed', completedAtMs: nowMs }
    const { projectId, webhookId } = target

    if (outcome.kind === 'disable-webhook') {
      await this.whileClaimHolds(delivery, () =>
        db.transaction().execute(async (tx) => {
          if (!(await webhookDeliveriesRepository.complete(tx, claim, failed))) return
          await webhooksRepository.disable(tx, webhookId, nowMs, outcome.reason)
          await webhookDeliveriesRepository.cancelPendingForWebhook(tx, webhookId, nowMs)
        }),
      )
      // The receiver asked to stop: what waits for it is not sent, even when another instance recorded this attempt.
      this.ctx.logger.warn({ webhookId, projectId }, 'webhook disabled: its receiver answered 410 Gone')
      return { kind: 'other', webhookDisabled: true }
    }

    const recordedOutcome: DeliveryOutcome =
      outcome.kind === 'retry' ? { ...attempted, state: 'pending', nextAttemptAtMs: outcome.nextAttemptAtMs, completedAtMs: null } : failed
    const lastError = result.error ?? 'unknown error'
    const failure: WebhookFailure | null =
      outcome.kind === 'failed' && outcome.alert && delivery.payloadUuid !== null
        ? {
            deliveryId: delivery.id,
            projectId,
            projectName: target.projectName,
            webhookId,
            webhookUrl: target.url,
            event: delivery.event,
            payloadUuid: delivery.payloadUuid,
            attempts,
            lastError,
          }
        : null
    // The attempt, its alert and the webhook's run of failures are recorded together.
    const recorded = await this.whileClaimHolds(delivery, () =>
      db.transaction().execute(async (tx) => {
        if (!(await webhookDeliveriesRepository.complete(tx, claim, recordedOutcome))) return false
        if (failure !== null) await this.ctx.events.emitInTransaction(tx, 'delivery.failed', failure)
        return { disabled: await this.disableIfFailingTooLong(tx, target, nowMs, lastError) }
      }),
    )
    if (recorded === false) return { kind: 'other', webhookDisabled: false }
    if (failure !== null) this.ctx.events.emitCommitted('delivery.failed', failure)
    if (recorded.disabled) {
      this.ctx.logger.warn({ webhookId, projectId }, `webhook disabled: ${FAILING_TOO_LONG_REASON}`)
      this.ctx.events.emitCommitted('webhook.disabled', recorded.disabled)
    }
    return { kind: 'other', webhookDisabled: recorded.disabled !== null }
  }

  /** From now on a record that fails is not tried again: the service is stopping. */
  stop(): void {
    this.stopping = true
  }

  /**
   * Successes are recorded together, SUCCESS_RECORD_COALESCE_MS after the first: with a healthy receiver they are most
   * of the writes, and one statement for all the responses of those milliseconds costs little more than one for each.
   */
  private recordSuccess(delivery: WebhookDelivery, target: DeliveryTarget, statusCode: number): Promise<void> {
    return new Promise((recorded, failed) => {
      if (this.successes.length === 0) setTimeout(() => this.flushSuccesses(), SUCCESS_RECORD_COALESCE_MS)
      this.successes.push({ delivery, endsFailures: target.failingSinceMs !== null, statusCode, recorded, failed })
    })
  }

  private async flushSuccesses(): Promise<void> {
    let batch = this.successes
    this.successes = []
    for (;;) {
      try {
        const items = batch.map(({ delivery, statusCode }) => ({ claim: claimOf(delivery), statusCode }))
        await webhookDeliveriesRepository.completeSucceeded(this.ctx.storage.db, this.ctx.storage.dialect, items, this.ctx.clock.now())
        const recovered = new Set(batch.filter((success) => success.endsFailures).map((success) => success.delivery.webhookId))
        await webhooksRepository.clearFailing(this.ctx.storage.db, [...recovered])
        for (const success of batch) success.recorded()
        return
      } catch (error) {
        // Both writes are conditional or idempotent: trying the batch again cannot record anything twice.
        const lapsed = batch.filter((success) => !this.mayRetry(success.delivery))
        for (const success of lapsed) success.failed(error)
        batch = batch.filter((success) => !lapsed.includes(success))
        if (batch.length === 0) return
        this.logRetry(error, batch.length)
        await sleep(RECORD_RETRY_DELAY_MS)
      }
    }
  }

  /**
   * Runs a conditional record, and runs it again after a failure while the claim holds: a repeat of one that did commit
   * finds the claim gone and changes nothing.
   */
  private async whileClaimHolds<T>(delivery: WebhookDelivery, write: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await write()
      } catch (error) {
        if (!this.mayRetry(delivery)) throw error
        this.logRetry(error, 1)
        await sleep(RECORD_RETRY_DELAY_MS)
      }
    }
  }

  private mayRetry(delivery: WebhookDelivery): boolean {
    return !this.stopping && delivery.leaseExpiresAtMs !== null && this.ctx.clock.now() < delivery.leaseExpiresAtMs
  }

  private logRetry(error: unknown, deliveries: number): void {
    this.ctx.logger.warn({ err: error, deliveries }, 'could not record webhook delivery attempts; trying again while their claims hold')
  }

  /**
   * Records a failed attempt in the webhook's run of failures; when the run has lasted long enough (failingTooLong),
   * disables the webhook, cancels what waits for it, and emits 'webhook.disabled' (its owner is mailed).
   */
  private async disableIfFailingTooLong(tx: Tx, target: DeliveryTarget, nowMs: number, lastError: string): Promise<WebhookDisabled | null> {
    const failingSinceMs = await webhooksRepository.markFailing(tx, target.webhookId, nowMs)
    if (failingSinceMs === undefined || !failingTooLong(failingSinceMs, nowMs)) return null
    await webhooksRepository.disable(tx, target.webhookId, nowMs, FAILING_TOO_LONG_REASON)
    await webhookDeliveriesRepository.cancelPendingForWebhook(tx, target.webhookId, nowMs)
    const notice: WebhookDisabled = {
      projectId: target.projectId,
      projectName: target.projectName,
      webhookId: target.webhookId,
      webhookUrl: target.url,
      failingSinceMs,
      disabledAtMs: nowMs,
      lastError,
    }
    await this.ctx.events.emitInTransaction(tx, 'webhook.disabled', notice)
    return notice
  }
}
