// Sends the email outbox over SMTP_URL, with retries; without SMTP_URL it logs each mail and keeps it as 'logged'.
import type { Logger } from 'pino'
import type { Config } from '../../config.js'
import { type ServiceEvents, wakeOnEvents } from '../../events.js'
import type { Clock } from '../../platform/clock.js'
import type { Storage } from '../../platform/db/database.js'
import { type PeriodicTask, startPeriodicTask } from '../../platform/periodic-task.js'
import { ATTEMPT_TIMEOUT_MS, createMailTransport, type MailTransport } from './mail-transport.js'
import { isOneEmailAddress } from './one-address.js'
import { type Email, type EmailOutcome, emailsRepository } from './repository.js'

const MINUTE_MS = 60_000

/**
 * Delay before attempt n + 1 after n failed attempts: a mail server that is down for a while still gets the mail.
 * Five attempts in all, the last about 2 h 36 min after the mail was queued.
 */
const EMAIL_RETRY_DELAYS_MS: readonly number[] = [MINUTE_MS, 5 * MINUTE_MS, 30 * MINUTE_MS, 120 * MINUTE_MS]

/**
 * An attempt starts only while its claim has this much of the lease left: the most an attempt may take (the
 * transport cuts it off then), and 10 s for a process that stalls between the check and the send, or another
 * instance's clock that runs ahead. A batch is sent one mail at a time, so behind a slow server its last mail could
 * otherwise start after the lease ran out, when another instance may already have claimed and sent it; the mail left
 * is handed back unsent instead.
 */
const START_MARGIN_MS = ATTEMPT_TIMEOUT_MS + 10_000

/** Room for the first attempt of a batch and the record of its outcome, and for several more when the server is quick. */
const LEASE_MS = 2 * MINUTE_MS

/** Mail is sent one at a time: there is little of it, and an SMTP server prefers few connections. */
const BATCH_SIZE = 10

const POLL_INTERVAL_MS = 1_000

export interface MailerContext {
  config: Pick<Config, 'emailFrom'>
  storage: Storage
  clock: Clock
  logger: Logger
}

export class Mailer {
  /** `transport` is undefined without SMTP_URL: mail is then logged and kept. */
  constructor(
    private readonly ctx: MailerContext,
    private readonly transport: MailTransport | undefined,
  ) {}

  /** Sends (or logs) up to a batch of due mail; returns true when the batch was full and more may be due. */
  async sendDue(): Promise<boolean> {
    const { db, dialect } = this.ctx.storage
    const nowMs = this.ctx.clock.now()
    const leaseExpiresAtMs = nowMs + LEASE_MS
    const claimed = await emailsRepository.claimDue(db, dialect, { nowMs, leaseExpiresAtMs, limit: BATCH_SIZE })
    for (const [i, email] of claimed.entries()) {
      if (leaseExpiresAtMs - this.ctx.clock.now() < START_MARGIN_MS) {
        const left = claimed.slice(i).map((unsent) => unsent.id)
        this.ctx.logger.warn({ emails: left.length }, 'handed back claimed mail unsent: too little of its lease was left for an attempt')
        await emailsRepository.release(db, left, leaseExpiresAtMs)
        break
      }
      await emailsRepository.complete(db, email, await this.attempt(email))
    }
    return claimed.length === BATCH_SIZE
  }

  private async attempt(email: Email): Promise<EmailOutcome> {
    const nowMs = this.ctx.clock.now()
    const attempts = email.attempts + 1
    const log = { emailId: email.id, kind: email.kind, projectId: email.projectId, to: email.toAddress, subject: email.subject }
    if (email.toAddress === null)
      return { state: 'no_recipient', attempts: email.attempts, nextAttemptAtMs: nowMs, lastError: null, sentAtMs: null }
    if (!isOneEmailAddress(email.toAddress)) {
      const lastError = "the account's address is not one plain email address; the mail was not sent"
      this.ctx.logger.error({ ...log, lastError }, 'mail not sent')
      return { state: 'failed', attempts: email.attempts, nextAttemptAtMs: nowMs, lastError, sentAtMs: null }
    }
    if (!this.transport) {
      this.ctx.logger.info(log, 'mail not sent: SMTP_URL is not set; it is kept in the database')
      return { state: 'logged', attempts, nextAttemptAtMs: nowMs, lastError: null, sentAtMs: null }
    }
    try {
      await this.transport.send({ to: email.toAddress, from: this.ctx.config.emailFrom, subject: email.subject, text: email.text })
      return { state: 'sent', attempts, nextAttemptAtMs: nowMs, lastError: null, sentAtMs: nowMs }
    } catch (error) {
      const lastError = (error as Error).message || String(error)
      const delayMs = EMAIL_RETRY_DELAYS_MS[attempts - 1]
      if (delayMs === undefined) {
        this.ctx.logger.error({ ...log, attempts, lastError }, 'mail failed on its last attempt')
        return { state: 'failed', attempts, nextAttemptAtMs: nowMs, lastError, sentAtMs: null }
      }
      this.ctx.logger.warn({ ...log, attempts, lastError }, 'mail not accepted; it will be tried again')
      return { state: 'pending', attempts, nextAttemptAtMs: nowMs + delayMs, lastError, sentAtMs: null }
    }
  }
}

export interface MailerTaskContext extends MailerContext {
  config: Pick<Config, 'emailFrom' | 'smtpUrl'>
  events: ServiceEvents
}

/** The mailer as a background worker: woken when mail is queued, and polling every second for retries and other instances' mail. */
export function startMailer(ctx: MailerTaskContext): PeriodicTask {
  const transport = createMailTransport(ctx.config.smtpUrl, ctx.logger)
  const mailer = new Mailer(ctx, transport)
  const task = startPeriodicTask('mailer', POLL_INTERVAL_MS, () => mailer.sendDue(), ctx.logger)
  const wake = () => task.wake()
  const stopWaking = wakeOnEvents(ctx.events, 'mailer', wake)
  return {
    wake,
    async stop() {
      stopWaking()
      await task.stop()
      transport?.close()
    },
  }
}
