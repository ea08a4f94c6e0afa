// Every event inside the service, with what it carries, and the one function that wires every listener.
//
// A payload's change, end to end:
//   1. PayloadTransitions (which PayloadService calls) moves a payload out of pending and, in the same transaction,
//      emits 'payload.changed': the webhook service writes one delivery per subscribed webhook into the outbox
//      (webhook_deliveries). Once a creation that brought the month's count to 80% of its limit has committed, the
//      warning is recorded in a transaction of its own, which emits 'usage.warning': the warning mail is written
//      into the mail outbox (emails).
//   2. After the commit, 'payload.changed' again: live streams hear of it (across instances through Redis), and the
//      webhook dispatcher wakes. A retried or test delivery wakes it too ('delivery.queued').
//   3. The dispatcher claims the deliveries and POSTs them to their receivers (features/webhooks/dispatcher/).
//   1b. A signAndSubmit payload that moves to signed is, in the same transaction, given a follow (transaction_follows):
//      the transaction follower (features/signing/) looks its transaction up until the validated ledger has decided,
//      then records the outcome and emits 'payload.changed' with event payload.finalized, in and after its transaction,
//      which goes through steps 1 to 3 like any change.
//   4. A delivery that fails its last attempt emits 'delivery.failed' in the transaction that records the failure: the
//      alert mail is written into the mail outbox. After the commit, 'delivery.failed' again wakes the mailer, which
//      sends it. (The usage warning's mail waits for the mailer's next poll, within a second.)
//   5. A failed attempt that ends 5 days of failures of a webhook disables it and emits 'webhook.disabled' the same
//      way: the notice to the owner is written into the mail outbox, and the mailer wakes after the commit.
import type { Logger } from 'pino'
import type { EmailOutbox, UsageWarning, WebhookDisabled, WebhookFailure } from './features/email/service.js'
import type { LiveEvents } from './features/payloads/live/live-events.js'
import type { PayloadTransition } from './features/payloads/transitions.js'
import { toPayloadView } from './features/payloads/view.js'
import type { PlanName } from './features/projects/plans.js'
import type { TransactionFollower } from './features/signing/transaction-follower.js'
import type { WebhookService } from './features/webhooks/service.js'
import type { Tx } from './platform/db/database.js'

/** Emitted inside the transaction of the change that causes them: what a listener writes commits or rolls back with it. */
export interface TransactionEvents {
  /**
   * Payloads left pending (signed, rejected, expired), a multisigned one recorded a signature (payload.signature_added),
   * or a submitted transaction's outcome is final (payload.finalized): every such change of one transaction, emitted
   * once, so that a listener writes a group's rows together (one statement for a group's webhook deliveries on
   * PostgreSQL). After the commit, each change is emitted on its own.
   */
  'payload.changed': readonly PayloadTransition[]
  /** A creation took a project's monthly usage past the warning threshold (first time this month). */
  'usage.warning': UsageWarning
  /** A payload's webhook delivery failed its last attempt. */
  'delivery.failed': WebhookFailure
  /** A webhook was disabled because every delivery to it failed for 5 days. */
  'webhook.disabled': WebhookDisabled
  /** A project moved to another plan. */
  'project.planChanged': { projectId: string; plan: PlanName }
}

/** Emitted after a commit: for what may only act on committed state (other connections, other processes). */
export interface CommittedEvents {
  /** A payload left pending, a multisigned one recorded a signature or a signer's rejection, or an outcome became final, committed. */
  'payload.changed': PayloadTransition
  /**
   * The uuid of a signAndSubmit payload whose submission's claim was kept (in doubt: after the node's answer, or with
   * none) or released: live streams read it again, and the signing page's shows whether it is in doubt.
   */
  'payload.submission': string
  /** Webhook deliveries were committed outside a payload change (a retry, a replay, a test delivery). */
  'delivery.queued': undefined
  /** A payload's webhook delivery failed its last attempt, committed with its alert mail. */
  'delivery.failed': WebhookFailure
  /** A webhook was disabled after 5 days of failures, committed with its notice mail. */
  'webhook.disabled': WebhookDisabled
}

type TransactionListener<K extends keyof TransactionEvents> = (tx: Tx, data: TransactionEvents[K]) => Promise<void>
type CommittedListener<K extends keyof CommittedEvents> = (data: CommittedEvents[K]) => void

/** The service's events: listeners are kept per name, called in the order they were added. */
export class ServiceEvents {
  private readonly inTransaction = new Map<keyof TransactionEvents, TransactionListener<never>[]>()
  private readonly committed = new Map<keyof CommittedEvents, CommittedListener<never>[]>()

  /** Adds a listener run inside the transaction; a listener that throws rolls the change back. Returns its removal. */
  onTransaction<K extends keyof TransactionEvents>(name: K, listener: TransactionListener<K>): () => void {
    return add(this.inTransaction, name, listener)
  }

  /** Adds a listener run after the commit. Returns its removal. */
  onCommit<K extends keyof CommittedEvents>(name: K, listener: CommittedListener<K>): () => void {
    return add(this.committed, name, listener)
  }

  /** Runs the transaction listeners of `name` one after the other, inside `tx`. */
  async emitInTransaction<K extends keyof TransactionEvents>(tx: Tx, name: K, data: TransactionEvents[K]): Promise<void> {
    for (const listener of listenersOf(this.inTransaction, name) as TransactionListener<K>[]) await listener(tx, data)
  }

  /** Calls the committed listeners of `name`, synchronously. */
  emitCommitted<K extends keyof CommittedEvents>(name: K, ...data: CommittedEvents[K] extends undefined ? [] : [CommittedEvents[K]]): void {
    for (const listener of listenersOf(this.committed, name) as CommittedListener<K>[]) listener(data[0] as CommittedEvents[K])
  }
}

function add<K, L>(listeners: Map<K, L[]>, name: K, listener: L): () => void {
  listeners.set(name, [...(listeners.get(name) ?? []), listener])
  return () =>
    listeners.set(
      name,
      (listeners.get(name) ?? []).filter((other) => other !== listener),
    )
}

function listenersOf<K, L>(listeners: Map<K, L[]>, name: K): L[] {
  return listeners.get(name) ?? []
}

export interface EventWiring {
  events: ServiceEvents
  webhooks: Pick<WebhookService, 'enqueueForTransitions' | 'planChanged'>
  follower: Pick<TransactionFollower, 'enqueueForTransitions'>
  emails: Pick<EmailOutbox, 'enqueueUsageWarning' | 'enqueueWebhookFailure' | 'enqueueWebhookDisabled'>
  liveEvents: Pick<LiveEvents, 'publish' | 'remind'>
  logger: Logger
}

/** Wires every listener of the service's parts; the background workers add theirs when they start (WORKER_WAKE_EVENTS). */
export function wireEvents({ events, webhooks, follower, emails, liveEvents, logger }: EventWiring): void {
  // The outboxes: rows written in the transaction of the change that causes them.
  events.onTransaction('payload.changed', (tx, transitions) => webhooks.enqueueForTransitions(tx, transitions))
  events.onTransaction('payload.changed', (tx, transitions) => follower.enqueueForTransitions(tx, transitions))
  events.onTransaction('usage.warning', (tx, warning) => emails.enqueueUsageWarning(tx, warning))
  events.onTransaction('delivery.failed', (tx, failure) => emails.enqueueWebhookFailure(tx, failure))
  events.onTransaction('webhook.disabled', (tx, notice) => emails.enqueueWebhookDisabled(tx, notice))
  events.onTransaction('project.planChanged', (tx, change) => webhooks.planChanged(tx, change))
  // Live streams, on this instance and (through Redis) on the others.
  const published = (uuid: string, sent: Promise<void>) => {
    sent.catch((error: unknown) => logger.warn({ err: error, uuid }, 'could not publish a live event'))
  }
  events.onCommit('payload.changed', ({ payload }) => published(payload.uuid, liveEvents.publish(toPayloadView(payload))))
  events.onCommit('payload.submission', (uuid) => published(uuid, liveEvents.remind(uuid)))
}

/** The committed events that wake each background worker at once, rather than at its next poll. */
export const WORKER_WAKE_EVENTS = {
  'webhook-dispatcher': ['payload.changed', 'delivery.queued'],
  mailer: ['delivery.failed', 'webhook.disabled'],
} as const satisfies Record<string, readonly (keyof CommittedEvents)[]>

/** Calls `wake` on each of the worker's events; returns the removal of those listeners. */
export function wakeOnEvents(events: ServiceEvents, worker: keyof typeof WORKER_WAKE_EVENTS, wake: () => void): () => void {
  const removals = WORKER_WAKE_EVENTS[worker].map((name) => events.onCommit(name, () => wake()))
  return () => {
    for (const remove of removals) remove()
  }
}
