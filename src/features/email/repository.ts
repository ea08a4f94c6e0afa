// The email outbox: every mail the service means to send is a row first, so that nothing is lost; the rows stay as the
// record of what was sent, logged or given up on, for operators to query.
import type { Selectable } from 'kysely'
import type { DbOrTx, Dialect } from '../../platform/db/database.js'
import { claimDueRows, claimHolds, claimOf, releaseClaimedRows } from '../../platform/db/outbox.js'
import type { EmailsTable } from '../../platform/db/schema.js'
import type { PlanName } from '../projects/plans.js'

export const EMAIL_KINDS = ['usage_warning', 'webhook_failure', 'webhook_disabled'] as const
export type EmailKind = (typeof EMAIL_KINDS)[number]

/**
 * pending: waiting for its next attempt; sending: claimed by a mailer (until its lease expires); sent: accepted by the
 * SMTP server; logged: SMTP_URL is not set, so the mail was written to the log and kept here; no_recipient: the project's
 * account has no email address; failed: every attempt failed.
 */
export const EMAIL_STATES = ['pending', 'sending', 'sent', 'logged', 'no_recipient', 'failed'] as const
export type EmailState = (typeof EMAIL_STATES)[number]

export interface Email {
  id: string
  /** One email per key, ever: `usage-warning:<project>:<month>`, `webhook-failure:<delivery>`, `webhook-disabled:<webhook>:<time>`. */
  dedupeKey: string
  kind: EmailKind
  projectId: string | null
  toAddress: string | null
  subject: string
  text: string
  state: EmailState
  attempts: number
  nextAttemptAtMs: number
  leaseExpiresAtMs: number | null
  lastError: string | null
  createdAtMs: number
  sentAtMs: number | null
}

const toEmail = (row: Selectable<EmailsTable>): Email => ({
  id: row.id,
  dedupeKey: row.dedupe_key,
  kind: row.kind as EmailKind,
  projectId: row.project_id,
  toAddress: row.to_address,
  subject: row.subject,
  text: row.body_text,
  state: row.state as EmailState,
  attempts: row.attempts,
  nextAttemptAtMs: row.next_attempt_at,
  leaseExpiresAtMs: row.lease_expires_at,
  lastError: row.last_error,
  createdAtMs: row.created_at,
  sentAtMs: row.sent_at,
})

/** Who a project's mail goes to, and what the mail says about the project. */
export interface ProjectContact {
  projectName: string
  plan: PlanName
  /** The project's account's address; null without an account or an address. */
  email: string | null
}

export interface EmailOutcome {
  state: EmailState
  attempts: number
  nextAttemptAtMs: number
  lastError: string | null
  sentAtMs: number | null
}

export const emailsRepository = {
  /** Inserts the email unless one with its dedupe key exists; returns true when this call inserted it. */
  async insertOnce(db: DbOrTx, email: Email): Promise<boolean> {
    const result = await db
      .insertInto('emails')
      .values({
        id: email.id,
        dedupe_key: email.dedupeKey,
        kind: email.kind,
        project_id: email.projectId,
        to_address: email.toAddress,
        subject: email.subject,
        body_text: email.text,
        state: email.state,
        attempts: email.attempts,
        next_attempt_at: email.nextAttemptAtMs,
        lease_expires_at: email.leaseExpiresAtMs,
        last_error: email.lastError,
        created_at: email.createdAtMs,
        sent_at: email.sentAtMs,
      })
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .executeTakeFirst()
    return (result.numInsertedOrUpdatedRows ?? 0n) > 0n
  },

  async projectContact(db: DbOrTx, projectId: string): Promise<ProjectContact | undefined> {
    const row = await db
      .selectFrom('projects')
      .leftJoin('accounts', 'accounts.id', 'projects.account_id')
      .select(['projects.name', 'projects.plan', 'accounts.email'])
      .where('projects.id', '=', projectId)
      .executeTakeFirst()
    return row && { projectName: row.name, plan: row.plan as PlanName, email: row.email ?? null }
  },

  /** Due pending mail, and mail whose mailer's lease expired, moved to 'sending' (see claimDueRows). */
  async claimDue(db: DbOrTx, dialect: Dialect, claim: { nowMs: number; leaseExpiresAtMs: number; limit: number }): Promise<Email[]> {
    const rows = await claimDueRows(db, dialect, 'emails', claim)
    return rows.map(toEmail)
  },

  /** Records an attempt's outcome while the claim (id, attempts, lease) still holds. */
  async complete(db: DbOrTx, claimed: Email, outcome: EmailOutcome): Promise<boolean> {
    const result = await db
      .updateTable('emails')
      .set({
        state: outcome.state,
        attempts: outcome.attempts,
        next_attempt_at: outcome.nextAttemptAtMs,
        lease_expires_at: null,
        last_error: outcome.lastError,
        sent_at: outcome.sentAtMs,
      })
      .where(claimHolds(claimOf(claimed)))
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  },

  /** Makes mail claimed together (one lease) due again at once, unsent, where that claim still holds. */
  release(db: DbOrTx, ids: readonly string[], leaseExpiresAtMs: number): Promise<void> {
    return releaseClaimedRows(db, 'emails', ids, leaseExpiresAtMs)
  },

  /** The project's mail, newest first. */
  async listForProject(db: DbOrTx, projectId: string, page: { limit: number; offset: number }): Promise<Email[]> {
    const rows = await db
      .selectFrom('emails')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute()
    return rows.map(toEmail)
  },
}
