// Sends webhook deliveries from the outbox: claims due ones under a lease (delivery-lease.ts), sends them concurrently
// within a global cap and a per-webhook cap (send-delivery.ts), never on a claim about to lapse, and has each outcome
// recorded (attempt-recorder.ts).
import type { Logger } from 'pino'
import type { Config } from '../../../config.js'
import type { ServiceEvents } from '../../../events.js'
import type { Clock } from '../../../platform/clock.js'
import type { SecretBox } from '../../../platform/crypto/secret-box.js'
import type { Storage } from '../../../platform/db/database.js'
import { planHasWebhooks } from '../../projects/plans.js'
import { webhookDeliveriesRepository } from '../deliveries-repository.js'
import { DELIVERY_TIMEOUT_MS, type WebhookDelivery } from '../model.js'
import { type DeliveryTarget, webhooksRepository } from '../repository.js'
import { AttemptRecorder } from './attempt-recorder.js'
import { DeliveryLease } from './delivery-lease.js'
import { type SenderContext, sendDelivery } from './send-delivery.js'
import { SigningKeys } from './signing-keys.js'

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
  /** Sends, records of their outcomes, and hand-backs not finished yet: what settled() waits for. */
  private readonly inFlight = new Set<Promise<void>>()
  private readonly lanes = new Map<string, Lane>()
  private waitingCount = 0
  private stopping = false
  /** The last claim may have been cut short by this process's caps: a finished send should prompt another. */
  private heldBack = false
  private readonly recorder: AttemptRecorder
  private readonly lease: DeliveryLease
  private readonly sender: SenderContext
  private readonly timeoutMs: number
  private readonly maxHeldDeliveries: number
  private readonly maxConcurrentSendsPerWebhook: number
  private readonly maxHeldPerWebhook: number

  constructor(
    private readonly ctx: DispatcherContext,
    private readonly options: WebhookDispatcherOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS
    this.lease = new DeliveryLease(this.timeoutMs)
    this.sender = { ...ctx, signingKeys: new SigningKeys(ctx.secretBox, () => ctx.clock.now()) }
    this.recorder = new AttemptRecorder(ctx, options.random ?? Math.random)
    this.maxHeldDeliveries = options.maxHeldDeliveries ?? MAX_HELD_DELIVERIES
    this.maxConcurrentSendsPerWebhook = options.maxConcurrentSendsPerWebhook ?? MAX_CONCURRENT_SENDS_PER_WEBHOOK
    this.maxHeldPerWebhook = DeliveryLease.maxHeldPerWebhook(this.maxConcurrentSendsPerWebhook)
  }

  /**
   * Claims due deliveries, as many as this process may still hold and can start within their lease, and starts
   * sending them as their webhooks' slots allow; it does not wait for the sends. Returns true when it claimed a full
   * batch, so that more may be due now.
   */
  async dispatchDue(): Promise<boolean> {
    if (this.stopping) return false
    let sending = 0
    for (const lane of this.lanes.values()) sending += lane.sending
    // One claim may fall on a single webhook: it is never more than a webhook may hold.
    const limit = Math.min(CLAIM_BATCH_SIZE, this.maxHeldPerWebhook, this.maxHeldDeliveries - sending - this.waitingCount)
    if (limit <= 0) {
      this.heldBack = true
      return false
    }
    const { db, dialect } = this.ctx.storage
    const nowMs = this.ctx.clock.now()
    const leaseExpiresAtMs = nowMs + this.lease.leaseMs
    // A webhook without room for a whole claim is left out of it, so that all it gets can start within the lease.
    const busy = [...this.lanes].filter(([, lane]) => lane.sending + lane.waiting.length + limit > this.maxHeldPerWebhook).map(([id]) => id)
    this.heldBack = busy.length > 0
    const claimed = await webhookDeliveriesRepository.claimDue(db, dialect, { nowMs, leaseExpiresAtMs, limit, excludeWebhookIds: busy })
    if (claimed.length === 0) return false

    let accepted: ClaimedDelivery[]
    try {
      accepted = await this.admit(claimed, leaseExpiresAtMs, nowMs)
    } catch (error) {
      // Claimed but not admitted (no database connection came free, under load): due again at once rather than
      // after the lease, for the next claim here or elsewhere.
      this.handBack(claimed)
      throw error
    }
    for (const claim of accepted) this.lane(claim.target.webhookId).waiting.push(claim)
    this.waitingCount += accepted.length
    for (const webhookId of new Set(accepted.map((claim) => claim.target.webhookId))) this.startWaiting(webhookId)
    return claimed.length === limit
  }

  /**
   * The claimed deliveries with their webhooks, to be sent; those whose webhook may no longer receive are cancelled.
   * Checked at dispatch, not only when the event was queued: a project moved back to Free stops receiving at once.
   */
  private async admit(claimed: WebhookDelivery[], leaseExpiresAtMs: number, nowMs: number): Promise<ClaimedDelivery[]> {
    const { db, dialect } = this.ctx.storage
    const targets = await webhooksRepository.findTargets(db, dialect, [...new Set(claimed.map((delivery) => delivery.webhookId))])
    const cancelled: string[] = []
    const accepted: ClaimedDelivery[] = []
    for (const delivery of claimed) {
      const target = targets.get(delivery.webhookId)
      if (!target || target.deleted || target.disabled || !planHasWebhooks(target.plan)) cancelled.push(delivery.id)
      else accepted.push({ delivery, target })
    }
    await webhookDeliveriesRepository.cancelClaimed(db, cancelled, leaseExpiresAtMs, nowMs)
    return accepted
  }

  /** True when the last claim may have left due deliveries behind for want of free slots here. */
  get waitingForSlots(): boolean {
    return this.heldBack
  }

  /** Resolves once every delivery claimed so far has been sent and recorded, or handed back. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight)
  }

  /** Stops claiming, hands back the deliveries still waiting for a slot, and waits for the sends in flight. */
  async stop(): Promise<void> {
    this.stopping = true
    this.recorder.stop()
    const waiting = [...this.lanes.values()].flatMap((lane) => lane.waiting.splice(0))
    this.waitingCount = 0
    this.handBack(waiting.map((claim) => claim.delivery))
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

  /**
   * Starts the webhook's waiting deliveries as far as its slots allow. A claim with too little of its lease left for a
   * send (the process fell behind) is handed back unsent instead: once its lease has run out another instance may
   * already have taken it over and be sending it.
   */
  private startWaiting(webhookId: string): void {
    const lane = this.lanes.get(webhookId)
    if (!lane) return
    const lapsing: WebhookDelivery[] = []
    while (!this.stopping && lane.sending < this.maxConcurrentSendsPerWebhook && lane.waiting.length > 0) {
      const claim = lane.waiting.shift() as ClaimedDelivery
      this.waitingCount -= 1
      if (this.lease.allowsSend(claim.delivery, this.ctx.clock.now())) this.start(lane, claim)
      else lapsing.push(claim.delivery)
    }
    if (lane.sending === 0 && lane.waiting.length === 0) this.lanes.delete(webhookId)
    if (lapsing.length > 0) {
      this.ctx.logger.warn(
        { webhookId, deliveries: lapsing.length },
        'handed back claimed webhook deliveries unsent: their lease ran out, or was about to, before a slot was free',
      )
      this.handBack(lapsing)
    }
  }

  private start(lane: Lane, { delivery, target }: ClaimedDelivery): void {
    lane.sending += 1
    this.track(this.send(delivery, target), delivery, () => {
      lane.sending -= 1
      this.startWaiting(target.webhookId)
      this.options.onSendFinished?.()
    })
  }

  private async send(delivery: WebhookDelivery, target: DeliveryTarget): Promise<void> {
    const result = await sendDelivery(this.sender, delivery, target, this.timeoutMs)
    const recorded = await this.recorder.record(delivery, target, result)
    // A success frees its slot now; its record follows with others'.
    if (recorded.kind === 'success') this.track(recorded.recorded, delivery)
    else if (recorded.webhookDisabled) await this.cancelWaiting(target.webhookId)
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

  /** Cancels the deliveries of a webhook that are waiting here for a slot (it was disabled). */
  private async cancelWaiting(webhookId: string): Promise<void> {
    const lane = this.lanes.get(webhookId)
    if (!lane) return
    const waiting = lane.waiting.splice(0)
    this.waitingCount -= waiting.length
    const nowMs = this.ctx.clock.now()
    await this.forEachLease(
      waiting.map((claim) => claim.delivery),
      (ids, leaseExpiresAtMs) => webhookDeliveriesRepository.cancelClaimed(this.ctx.storage.db, ids, leaseExpiresAtMs, nowMs),
    )
  }

  /**
   * Makes claimed deliveries due again at once, for whichever instance claims next, where this process's claim still
   * holds; where another instance took one over, it is left to it. Among the work settled() waits for.
   */
  private handBack(deliveries: WebhookDelivery[]): void {
    if (deliveries.length === 0) return
    const released = this.forEachLease(deliveries, (ids, leaseExpiresAtMs) =>
      webhookDeliveriesRepository.release(this.ctx.storage.db, ids, leaseExpiresAtMs),
    ).catch((error: unknown) => {
      this.ctx.logger.warn({ err: error }, 'could not hand back claimed webhook deliveries; they are taken over once their lease expires')
    })
    const tracked = released.finally(() => this.inFlight.delete(tracked))
    this.inFlight.add(tracked)
  }

  /** Applies `change` to claimed deliveries, grouped by the lease of the claim that took them. */
  private async forEachLease(
    deliveries: WebhookDelivery[],
    change: (ids: string[], leaseExpiresAtMs: number) => Promise<void>,
  ): Promise<void> {
    const byLease = new Map<number, string[]>()
    for (const delivery of deliveries) {
      const lease = delivery.leaseExpiresAtMs ?? 0
      const ids = byLease.get(lease) ?? []
      ids.push(delivery.id)
      byLease.set(lease, ids)
    }
    for (const [leaseExpiresAtMs, ids] of byLease) await change(ids, leaseExpiresAtMs)
  }
}
