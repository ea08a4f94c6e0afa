// Sends webhook deliveries from the outbox: claims due ones under a lease, sends them concurrently within a global
// cap and a per-webhook cap, and records each outcome: success, a retry on the schedule, or failure with one alert.
import type { Logger } from 'pino'
import type { Config } from '../../../config.js'
import { type ServiceEvents, wakeOnEvents } from '../../../events.js'
import type { Clock } from '../../../platform/clock.js'
import type { Storage, Tx } from '../../../platform/db/database.js'
import { type PeriodicTask, startPeriodicTask } from '../../../platform/periodic-task.js'
import type { WebhookDisabled, WebhookFailure } from '../../email/service.js'
import { planHasWebhooks } from '../../projects/plans.js'
import { claimOf, type DeliveryOutcome, webhookDeliveriesRepository } from '../deliveries-repository.js'
import { DELIVERY_TIMEOUT_MS, type WebhookDelivery } from '../model.js'
import { type DeliveryTarget, webhooksRepository } from '../repository.js'
import type { SecretBox } from '../secret-box.js'
import { sendWebhook, type WebhookSendResult } from '../send.js'
import { signStandardWebhook, signWebhookBody } from '../signature.js'
import { attemptOutcome, FAILING_TOO_LONG_REASON, failingTooLong } from './attempt-outcome.js'

/** Deliveries one process holds at once, being sent or claimed and waiting for a slot of their webhook, across all webhooks. */
const MAX_HELD_DELIVERIES = 256

/**
 * Sends in flight to one webhook. A receiver that hangs holds at most this many slots for the timeout, and the others
 * keep being served from the rest; it is below the per-host socket pool of the sender (64), so a send never queues
 * for a socket while its timeout runs.
 */
const MAX_CONCURRENT_SENDS_PER_WEBHOOK = 32

/**
 * Deliveries claimed in one statement. Claims are small so that a webhook's share of a claim fits its free slots and
 * its short local queue: what is claimed is sent, not handed back.
 */
const CLAIM_BATCH_SIZE = 32

/**
 * A webhook with this many deliveries sending or waiting here, in units of its slots, is left out of further claims.
 * Its waiting deliveries are then sent within a few timeouts of their claim, well inside the lease.
 */
const MAX_HELD_PER_WEBHOOK_IN_SLOTS = 2

/**
 * How long a claim holds. A delivery waits at most about three timeouts for a slot of its webhook (two slots' worth
 * held, and one claim beyond), then takes one more to send: the lease is longer than that, so a live dispatcher's claim
 * is never taken over; a dead one's is, after this.
 */
const LEASE_MS = 60_000
const LEASE_IN_TIMEOUTS = 6

const POLL_INTERVAL_MS = 1_000

/**
 * How long a woken dispatcher waits for more events before it claims. Under load events commit every millisecond or
 * so; one claim for the few that arrive together costs little more than one for a single delivery, and each claim is
 * a write. The wait adds at most this much to a delivery's time.
 */
const CLAIM_COALESCE_MS = 3

/**
 * How long a success waits for others before they are recorded together, in one write. Nothing waits on the record:
 * the receiver already has the delivery, and its slot is free once the response is in.
 */
const SUCCESS_RECORD_COALESCE_MS = 10

export interface DispatcherContext {
  config: Pick<Config, 'webhookAllowPrivateTargets'>
  storage: Storage
  clock: Clock
  logger: Logger
  secretBox: SecretBox
  /** 'delivery.failed' when a payload's delivery fails its last attempt: its alert mail is queued with the failure. */
  events: ServiceEvents
}

export interface WebhookDispatcherOptions {
  /** One attempt's time limit; DELIVERY_TIMEOUT_MS unless a test needs a shorter one. */
  timeoutMs?: number
  /** Jitter of the retry schedule, a number in [0, 1); Math.random unless a test needs exact times. */
  random?: () => number
  /** Deliveries held at once, being sent or waiting for a slot; MAX_HELD_DELIVERIES by default. */
  maxHeldDeliveries?: number
  /** Sends in flight to one webhook; MAX_CONCURRENT_SENDS_PER_WEBHOOK by default. */
  maxConcurrentSendsPerWebhook?: number
  /** Called when a send has ended and its slot is free again (a success may still be waiting to be recorded). */
  onSendFinished?: () => void
}

interface Success {
  delivery: WebhookDelivery
  /** Its webhook was in a run of failures when the delivery was claimed: this success ends it. */
  endsFailures: boolean
  statusCode: number
  recorded: () => void
  failed: (error: unknown) => void
}

interface ClaimedDelivery {
  delivery: WebhookDelivery
  target: DeliveryTarget
}

/** One webhook's deliveries in this process: how many are being sent, and the claimed ones waiting for a slot. */
interface Lane {
  sending: number
  waiting: ClaimedDelivery[]
}

export class WebhookDispatcher {
  /** Sends, and records of their outcomes, not finished yet: what settled() waits for. */
  private readonly inFlight = new Set<Promise<void>>()
  private readonly lanes = new Map<string, Lane>()
  private waitingCount = 0
  private stopping = false
  /** The last claim may have been cut short by this process's caps: a finished send should prompt another. */
  private heldBack = false
  private successes: Success[] = []
  private readonly timeoutMs: number
  private readonly leaseMs: number
  private readonly random: () => number
  private readonly maxHeldDeliveries: number
  private readonly maxConcurrentSendsPerWebhook: number

  constructor(
    private readonly ctx: DispatcherContext,
    private readonly options: WebhookDispatcherOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS
    this.leaseMs = Math.max(LEASE_MS, LEASE_IN_TIMEOUTS * this.timeoutMs)
    this.random = options.random ?? Math.random
    this.maxHeldDeliveries = options.maxHeldDeliveries ?? MAX_HELD_DELIVERIES
    this.maxConcurrentSendsPerWebhook = options.maxConcurrentSendsPerWebhook ?? MAX_CONCURRENT_SENDS_PER_WEBHOOK
  }

  /**
   * Claims due deliveries, as many as this process may still hold, and starts sending them as their webhooks' slots
   * allow; it does not wait for the sends. Returns true when it claimed a full batch, so that more may be due now.
   */
  async dispatchDue(): Promise<boolean> {
    if (this.stopping) return false
    let sending = 0
    for (const lane of this.lanes.values()) sending += lane.sending
    const limit = Math.min(CLAIM_BATCH_SIZE, this.maxHeldDeliveries - sending - this.waitingCount)
    if (limit <= 0) {
      this.heldBack = true
      return false
    }
    const { db, dialect } = this.ctx.storage
    const nowMs = this.ctx.clock.now()
    const leaseExpiresAtMs = nowMs + this.leaseMs
    const maxHeld = MAX_HELD_PER_WEBHOOK_IN_SLOTS * this.maxConcurrentSendsPerWebhook
    const busy = [...this.lanes].filter(([, lane]) => lane.sending + lane.waiting.length >= maxHeld).map(([id]) => id)
    this.heldBack = busy.length > 0
    const claimed = await webhookDeliveriesRepository.claimDue(db, dialect, { nowMs, leaseExpiresAtMs, limit, excludeWebhookIds: busy })
    if (claimed.length === 0) return false

    const targets = await webhooksRepository.findTargets(db, [...new Set(claimed.map((delivery) => delivery.webhookId))])
    const cancelled: string[] = []
    const accepted: ClaimedDelivery[] = []
    for (const delivery of claimed) {
      const target = targets.get(delivery.webhookId)
      // Checked at dispatch, not only when the event was queued: a project moved back to Free stops receiving at once.
      if (!target || target.deleted || target.disabled || !planHasWebhooks(target.plan)) cancelled.push(delivery.id)
      else accepted.push({ delivery, target })
    }
    await webhookDeliveriesRepository.cancelClaimed(db, cancelled, leaseExpiresAtMs, nowMs)
    for (const claim of accepted) this.lane(claim.target.webhookId).waiting.push(claim)
    this.waitingCount += accepted.length
    for (const webhookId of new Set(accepted.map((claim) => claim.target.webhookId))) this.startWaiting(webhookId)
    return claimed.length === limit
  }

  /** True when the last claim may have left due deliveries behind for want of free slots here. */
  get waitingForSlots(): boolean {
    return this.heldBack
  }

  /** Resolves once every delivery claimed so far has been sent and recorded. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight)
  }

  /** Stops claiming, hands back the deliveries still waiting for a slot, and waits for the sends in flight. */
  async stop(): Promise<void> {
    this.stopping = true
    const waiting = [...this.lanes.values()].flatMap((lane) => lane.waiting.splice(0))
    this.waitingCount = 0
    await this.handBack(waiting, (ids, leaseExpiresAtMs) => webhookDeliveriesRepository.release(this.ctx.storage.db, ids, leaseExpiresAtMs))
    await this.settled()
  }

  private lane(webhookId: string): Lane {
    let lane = this.lanes.get(webhookId)
    if (!lane) {
      lane = { sending: 0, waiting: [] }
      this.lanes.set(webhookId, lane)
    }
    return lane
  }

  private startWaiting(webhookId: string): void {
    const lane = this.lanes.get(webhookId)
    if (!lane) return
    while (!this.stopping && lane.sending < this.maxConcurrentSendsPerWebhook && lane.waiting.length > 0) {
      this.waitingCount -= 1
      this.start(lane, lane.waiting.shift() as ClaimedDelivery)
    }
    if (lane.sending === 0 && lane.waiting.length === 0) this.lanes.delete(webhookId)
  }

  private start(lane: Lane, { delivery, target }: ClaimedDelivery): void {
    lane.sending += 1
    this.track(this.send(delivery, target), delivery, () => {
      lane.sending -= 1
      this.startWaiting(target.webhookId)
      this.options.onSendFinished?.()
    })
  }

  /** Holds `work` among the deliveries in flight (settled() waits for it) until it ends, then calls `ended`. */
  private track(work: Promise<void>, delivery: WebhookDelivery, ended?: () => void): void {
    const tracked = work
      .catch((error: unknown) => {
        this.ctx.logger.error(
          { err: error, deliveryId: delivery.id, webhookId: delivery.webhookId },
          'could not record a webhook delivery attempt; it is sent again once its lease expires',
        )
      })
      .finally(() => {
        this.inFlight.delete(tracked)
        ended?.()
      })
    this.inFlight.add(tracked)
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
    const batch = this.successes
    this.successes = []
    try {
      const items = batch.map(({ delivery, statusCode }) => ({ claim: claimOf(delivery), statusCode }))
      await webhookDeliveriesRepository.completeSucceeded(this.ctx.storage.db, items, this.ctx.clock.now())
      const recovered = new Set(batch.filter((success) => success.endsFailures).map((success) => success.delivery.webhookId))
      await webhooksRepository.clearFailing(this.ctx.storage.db, [...recovered])
      for (const success of batch) success.recorded()
    } catch (error) {
      for (const success of batch) success.failed(error)
    }
  }

  /** Cancels the deliveries of a webhook that are waiting here for a slot (it was disabled). */
  private async cancelWaiting(webhookId: string, nowMs: number): Promise<void> {
    const lane = this.lanes.get(webhookId)
    if (!lane) return
    const waiting = lane.waiting.splice(0)
    this.waitingCount -= waiting.length
    await this.handBack(waiting, (ids, leaseExpiresAtMs) =>
      webhookDeliveriesRepository.cancelClaimed(this.ctx.storage.db, ids, leaseExpiresAtMs, nowMs),
    )
  }

  /** Applies `change` to claimed deliveries, grouped by the lease of the claim that took them. */
  private async handBack(claims: ClaimedDelivery[], change: (ids: string[], leaseExpiresAtMs: number) => Promise<void>): Promise<void> {
    const byLease = new Map<number, string[]>()
    for (const { delivery } of claims) {
      const lease = delivery.leaseExpiresAtMs ?? 0
      const ids = byLease.get(lease) ?? []
      ids.push(delivery.id)
      byLease.set(lease, ids)
    }
    for (const [leaseExpiresAtMs, ids] of byLease) await change(ids, leaseExpiresAtMs)
  }

  private async send(delivery: WebhookDelivery, target: DeliveryTarget): Promise<void> {
    let secret: string
    try {
      secret = this.ctx.secretBox.open(target.secretCiphertext)
    } catch (error) {
      // The server secret changed since the webhook was created: nothing can be signed for it, so no attempt is made.
      const message = `the webhook's secret could not be decrypted (${(error as Error).message}); register the webhook again`
      return this.record(delivery, target, { ok: false, statusCode: null, error: message, retryAfter: undefined, durationMs: 0 })
    }
    const nowMs = this.ctx.clock.now()
    const timestampSeconds = Math.floor(nowMs / 1000)
    const result = await sendWebhook({
      url: target.url,
      body: delivery.body,
      headers: {
        'X-Service-Signature': signWebhookBody(delivery.body, secret),
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestampSeconds),
        'webhook-signature': signStandardWebhook({ id: delivery.id, timestampSeconds, body: delivery.body }, [
          secret,
          ...this.previousSecret(target, nowMs),
        ]),
        'X-Countersign-Delivery': delivery.id,
        'X-Countersign-Timestamp': String(timestampSeconds),
        'X-Countersign-Event': delivery.event,
      },
      timeoutMs: this.timeoutMs,
      allowPrivateTargets: this.ctx.config.webhookAllowPrivateTargets,
    })
    await this.record(delivery, target, result)
  }

  /** The secret a rotation replaced, while it still signs beside the new one; none once it has expired or cannot be read. */
  private previousSecret(target: DeliveryTarget, nowMs: number): string[] {
    const { previousSecretCiphertext: sealed, previousSecretExpiresAtMs: expiresAtMs } = target
    if (sealed === null || expiresAtMs === null || nowMs >= expiresAtMs) return []
    try {
      return [this.ctx.secretBox.open(sealed)]
    } catch (error) {
      this.ctx.logger.warn(
        { err: error, webhookId: target.webhookId },
        "the webhook's previous secret could not be decrypted; signing with the current one only",
      )
      return []
    }
  }

  private async record(delivery: WebhookDelivery, target: DeliveryTarget, result: WebhookSendResult): Promise<void> {
    const nowMs = this.ctx.clock.now()
    const attempts = delivery.attempts + 1
    const outcome = attemptOutcome({ event: delivery.event, payloadUuid: delivery.payloadUuid, attempts, result, nowMs }, this.random)
    if (outcome.kind === 'succeeded') {
      // The slot is free once the response is in; the success is recorded with others shortly after.
      this.track(this.recordSuccess(delivery, target, outcome.statusCode), delivery)
      return
    }
    const { db } = this.ctx.storage
    const claim = claimOf(delivery)
    const attempted = { attempts, nextAttemptAtMs: delivery.nextAttemptAtMs, lastStatusCode: result.statusCode, lastError: result.error }
    const failed: DeliveryOutcome = { ...attempted, state: 'failed', completedAtMs: nowMs }

    if (outcome.kind === 'disable-webhook') {
      await db.transaction().execute(async (tx) => {
        if (!(await webhookDeliveriesRepository.complete(tx, claim, failed))) return
        await webhooksRepository.disable(tx, target.webhookId, nowMs, outcome.reason)
        await webhookDeliveriesRepository.cancelPendingForWebhook(tx, target.webhookId, nowMs)
      })
      await this.cancelWaiting(target.webhookId, nowMs)
      this.ctx.logger.warn({ webhookId: target.webhookId, projectId: target.projectId }, 'webhook disabled: its receiver answered 410 Gone')
      return
    }

    const recordedOutcome: DeliveryOutcome =
      outcome.kind === 'retry' ? { ...attempted, state: 'pending', nextAttemptAtMs: outcome.nextAttemptAtMs, completedAtMs: null } : failed
    const lastError = result.error ?? 'unknown error'
    const failure: WebhookFailure | null =
      outcome.kind === 'failed' && outcome.alert && delivery.payloadUuid !== null
        ? {
            deliveryId: delivery.id,
            projectId: target.projectId,
            projectName: target.projectName,
            webhookId: target.webhookId,
            webhookUrl: target.url,
            event: delivery.event,
            payloadUuid: delivery.payloadUuid,
            attempts,
            lastError,
          }
        : null
    // The attempt, its alert and the webhook's run of failures are recorded together.
    const recorded = await db.transaction().execute(async (tx) => {
      if (!(await webhookDeliveriesRepository.complete(tx, claim, recordedOutcome))) return false
      if (failure !== null) await this.ctx.events.emitInTransaction(tx, 'delivery.failed', failure)
      return { disabled: await this.disableIfFailingTooLong(tx, target, nowMs, lastError) }
    })
    if (recorded === false) return
    if (failure !== null) this.ctx.events.emitCommitted('delivery.failed', failure)
    if (recorded.disabled) {
      await this.cancelWaiting(target.webhookId, nowMs)
      this.ctx.logger.warn({ webhookId: target.webhookId, projectId: target.projectId }, `webhook disabled: ${FAILING_TOO_LONG_REASON}`)
      this.ctx.events.emitCommitted('webhook.disabled', recorded.disabled)
    }
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

/**
 * The dispatcher as a background worker: it runs when an event commits (so a delivery leaves at once, not at the next
 * tick), when a send frees a slot, and every second for retries that came due and work queued by other instances.
 */
export function startWebhookDispatcher(
  ctx: DispatcherContext,
  options: WebhookDispatcherOptions & { pollIntervalMs?: number } = {},
): PeriodicTask {
  let coalescing: NodeJS.Timeout | undefined
  const wake = () => {
    if (coalescing) return
    coalescing = setTimeout(() => {
      coalescing = undefined
      task.wake()
    }, CLAIM_COALESCE_MS)
  }
  const dispatcher = new WebhookDispatcher(ctx, {
    ...options,
    onSendFinished: () => {
      options.onSendFinished?.()
      if (dispatcher.waitingForSlots) task.wake()
    },
  })
  const task = startPeriodicTask(
    'webhook-dispatcher',
    options.pollIntervalMs ?? POLL_INTERVAL_MS,
    () => dispatcher.dispatchDue(),
    ctx.logger,
  )
  const stopWaking = wakeOnEvents(ctx.events, 'webhook-dispatcher', wake)
  return {
    wake,
    async stop() {
      stopWaking()
      clearTimeout(coalescing)
      await task.stop()
      // Sends in flight end within their timeout; recording them now spares their receivers a repeat after the lease.
      await dispatcher.stop()
    },
  }
}
