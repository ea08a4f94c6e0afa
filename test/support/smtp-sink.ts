// A real SMTP server on 127.0.0.1 that accepts (or refuses) mail and parses every message it accepts.
import type { AddressInfo } from 'node:net'
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export interface CaughtMail {
  mail: ParsedMail
  recipients: string[]
}

export interface SmtpSink {
  /** smtp://127.0.0.1:<port> */
  url: string
  caught: CaughtMail[]
  /** While true, every message is refused with a temporary error (451). */
  setRefusing(refusing: boolean): void
  /**
   * Runs `hook` for each message accepted from now on, before the sender is answered (a slow server: a test advances
   * its clock there); undefined removes it.
   */
  setOnAccepted(hook: (() => Promise<void>) | undefined): void
  close(): Promise<void>
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const caught: CaughtMail[] = []
  let refusing = false
  let onAccepted: (() => Promise<void>) | undefined
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    onData(stream, session, callback) {
      simpleParser(stream).then(
        async (mail) => {
          if (refusing) return callback(Object.assign(new Error('Mailbox temporarily unavailable'), { responseCode: 451 }))
          caught.push({ mail, recipients: session.envelope.rcptTo.map((rcpt) => rcpt.address) })
          await onAccepted?.()
          callback()
        },
        (error: Error) => callback(error),
      )
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.server.address() as AddressInfo
  return {
    url: `smtp://127.0.0.1:${port}`,
    caught,
    setRefusing(value) {
      refusing = value
    },
    setOnAccepted(hook) {
      onAccepted = hook
    },
    close: () => new Promise<void>((resolve) => server.close(resolve)),
  }
}
