// Queues the service's emails in the outbox, inside the transaction of what caused them; the mailer sends them.
import type { Clock } from '../../platform/clock.js'
import { newId } from '../../platform/crypto/ids.js'
import type { Db, DbOrTx, Tx } from '../../platform/db/database.js'
import { type Email, type EmailKind, emailsRepository, type ProjectContact } from './repository.js'
import { type EmailContent, usageWarningEmail, webhookDisabledEmail, webhookFailureEmail } from './templates.js'

export interface UsageWarning {
  projectId: string
  /** UTC month, YYYY-MM. */
  month: string
  used: number
  limit: number
}

export interface WebhookFailure {
  deliveryId: string
  projectId: string
  projectName: string
  webhookId: string
  webhookUrl: string
  event: string
  payloadUuid: string
  attempts: number
  lastError: string
}

export interface WebhookDisabled {
  projectId: string
  projectName: string
  webhookId: string
  webhookUrl: string
  /** When its failures began, and when it was disabled. */
  failingSinceMs: number
  disabledAtMs: number
  lastError: string
}

export interface EmailOutboxOptions {
  db: Db
  clock: Clock
  publicUrl: string
}

export class EmailOutbox {
  constructor(private readonly options: EmailOutboxOptions) {}

  /** The 80% warning; once per project per month, however often it is asked for. */
  async enqueueUsageWarning(tx: Tx, warning: UsageWarning): Promise<void> {
    await this.enqueue(tx, warning.projectId, 'usage_warning', `usage-warning:${warning.projectId}:${warning.month}`, (contact) =>
      usageWarningEmail({
        projectName: contact.projectName,
        projectId: warning.projectId,
        plan: contact.plan,
        used: warning.used,
        limit: warning.limit,
        month: warning.month,
        dashboardUrl: this.dashboardUrl(warning.projectId),
      }),
    )
  }

  /** The alert for a delivery that failed its last attempt; once per delivery. */
  async enqueueWebhookFailure(tx: Tx, failure: WebhookFailure): Promise<void> {
    await this.enqueue(tx, failure.projectId, 'webhook_failure', `webhook-failure:${failure.deliveryId}`, () =>
      webhookFailureEmail({
        projectName: failure.projectName,
        projectId: failure.projectId,
        webhookUrl: failure.webhookUrl,
        webhookId: failure.webhookId,
        event: failure.event,
        payloadUuid: failure.payloadUuid,
        attempts: failure.attempts,
        lastError: failure.lastError,
        dashboardUrl: this.dashboardUrl(failure.projectId),
      }),
    )
  }

  /** The notice that a webhook was disabled after failing for days; once each time it is disabled. */
  async enqueueWebhookDisabled(tx: Tx, notice: WebhookDisabled): Promise<void> {
    const dedupeKey = `webhook-disabled:${notice.webhookId}:${notice.disabledAtMs}`
    await this.enqueue(tx, notice.projectId, 'webhook_disabled', dedupeKey, () =>
      webhookDisabledEmail({ ...notice, dashboardUrl: this.dashboardUrl(notice.projectId) }),
    )
  }

  /** The project's mail, newest first, whatever its state. No route lists mail: the tests read what was queued through this. */
  async listForProject(projectId: string, page: { limit: number; offset: number }): Promise<Email[]> {
    return emailsRepository.listForProject(this.options.db, projectId, page)
  }

  private async enqueue(
    db: DbOrTx,
    projectId: string,
    kind: EmailKind,
    dedupeKey: string,
    compose: (contact: ProjectContact) => EmailContent,
  ): Promise<void> {
    const contact = await emailsRepository.projectContact(db, projectId)
    if (!contact) throw new Error(`Cannot queue ${kind} mail: project ${projectId} does not exist`)
    const content = compose(contact)
    const nowMs = this.options.clock.now()
    await emailsRepository.insertOnce(db, {
      id: newId('mail'),
      dedupeKey,
      kind,
      projectId,
      // The address is taken now, so that the row says where the mail went (or why it could not go).
      toAddress: contact.email,
      subject: content.subject,
      text: content.text,
      state: contact.email === null ? 'no_recipient' : 'pending',
      attempts: 0,
      nextAttemptAtMs: nowMs,
      leaseExpiresAtMs: null,
      lastError: null,
      createdAtMs: nowMs,
      sentAtMs: null,
    })
  }

  private dashboardUrl(projectId: string): string {
    return `${this.options.publicUrl}/dashboard/projects/${projectId}`
  }
}
