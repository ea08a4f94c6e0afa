// How long a dispatcher's claim on a delivery holds, how many deliveries it may claim for one webhook, and until when it
// may still start a send on a claim: the rules that keep two instances from sending one attempt (docs/webhooks.md, "How
// deliveries are sent").
import type { WebhookDelivery } from '../model.js'

/**
 * How long a claim holds, and in timeouts when the timeout is longer. Another instance takes a delivery over only once
 * its lease has run out: the lease is what tells a dead dispatcher from a live one.
 */
const LEASE_MS = 60_000
const LEASE_IN_TIMEOUTS = 6

/**
 * A send starts only while its claim has this much left, and in timeouts when the timeout is longer: one timeout for
 * the send itself (it ends by then, answered or not), and as much again for a process that stalls between the check
 * and the request, or for another instance's clock that runs ahead of this one. So a send is over before the claim
 * can be taken over; a claim with less left is handed back unsent.
 */
const START_MARGIN_MS = 20_000
const START_MARGIN_IN_TIMEOUTS = 2

/**
 * The deliveries of one webhook a process may hold (sending, or claimed and waiting for a slot), in units of its
 * sending slots. A send takes at most a timeout, so the last of them starts within two timeouts of its claim: well
 * inside what the lease leaves before its start margin (40 seconds, four timeouts of 10 seconds), with room for the
 * records of the sends before it.
 */
const MAX_HELD_PER_WEBHOOK_IN_SLOTS = 3

export class DeliveryLease {
  readonly leaseMs: number
  readonly startMarginMs: number

  constructor(timeoutMs: number) {
    this.leaseMs = Math.max(LEASE_MS, LEASE_IN_TIMEOUTS * timeoutMs)
    this.startMarginMs = Math.max(START_MARGIN_MS, START_MARGIN_IN_TIMEOUTS * timeoutMs)
  }

  /** How many deliveries of one webhook a process may hold, given the sends it makes at once to one webhook. */
  static maxHeldPerWebhook(maxConcurrentSendsPerWebhook: number): number {
    return MAX_HELD_PER_WEBHOOK_IN_SLOTS * maxConcurrentSendsPerWebhook
  }

  /**
   * Whether a send may start now on this claim: its lease has at least the start margin left. A claim that waited too
   * long in an overloaded process fails this, and may already be another instance's.
   */
  allowsSend(delivery: Pick<WebhookDelivery, 'leaseExpiresAtMs'>, nowMs: number): boolean {
    return delivery.leaseExpiresAtMs !== null && delivery.leaseExpiresAtMs - nowMs >= this.startMarginMs
  }
}
