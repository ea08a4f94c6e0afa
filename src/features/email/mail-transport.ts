// Outgoing mail over SMTP_URL. Without it there is no transport: the caller keeps the mail in the database and logs it.
import type { BaseLogger } from 'pino'
import { loadOnDemand } from '../../platform/load-on-demand.js'

export interface OutgoingMail {
  to: string
  from: string
  subject: string
  text: string
}

export interface MailTransport {
  /** Resolves once the SMTP server accepted the message; rejects otherwise, so the outbox can retry. */
  send(mail: OutgoingMail): Promise<void>
  close(): void
}

// Mail is sent from an outbox that retries, so a stalled server should fail an attempt quickly rather than
// hold it for nodemailer's defaults (2 minutes to connect, 10 minutes of socket silence).
const CONNECTION_TIMEOUT_MS = 10_000
const GREETING_TIMEOUT_MS = 10_000
const SOCKET_TIMEOUT_MS = 30_000

/**
 * The most one attempt may take, all told. The socket timeout only limits silence, and a server that answers each
 * command just inside it could hold a send for minutes: at this limit the send is cut off (its connection closed) and
 * fails. The server may have accepted the message all the same, and then it is sent again on the retry.
 */
export const ATTEMPT_TIMEOUT_MS = 50_000

/**
 * smtp:// (STARTTLS when offered) or smtps:// (TLS from the start), with the URL's user and password as SMTP auth.
 * loadConfig has already refused any other SMTP_URL.
 */
export function createMailTransport(
  smtpUrl: string | undefined,
  logger: Pick<BaseLogger, 'info'>,
  /** ATTEMPT_TIMEOUT_MS unless a test needs a shorter one. */
  attemptTimeoutMs = ATTEMPT_TIMEOUT_MS,
): MailTransport | undefined {
  if (smtpUrl === undefined) return undefined
  const { createTransport } = loadOnDemand<typeof import('nodemailer')>('nodemailer')
  const transporter = createTransport({
    url: smtpUrl,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: GREETING_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
  })
  return {
    async send(mail) {
      const info = await transporter.sendMail({ ...mail, signal: AbortSignal.timeout(attemptTimeoutMs) })
      logger.info({ to: mail.to, subject: mail.subject, messageId: info.messageId }, 'mail sent')
    },
    close() {
      transporter.close()
    },
  }
}
