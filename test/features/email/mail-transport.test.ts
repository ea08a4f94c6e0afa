import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'
import { createMailTransport } from '../../../src/features/email/mail-transport.js'
import { webhookFailureEmail } from '../../../src/features/email/templates.js'
import { startSmtpSink } from '../../support/smtp-sink.js'

interface CaughtMail {
  mail: ParsedMail
  user: unknown
  recipients: string[]
}

const USER = 'mailer'
const PASSWORD = 'p@ss:word'

describe('createMailTransport', () => {
  const caught: CaughtMail[] = []
  let smtpUrl = ''
  // A real SMTP sink: authenticates like a mail relay, and parses every message it accepts.
  const sink = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      if (auth.username === USER && auth.password === PASSWORD) return callback(null, { user: USER })
      callback(new Error('Invalid username or password'))
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (mail) => {
          caught.push({ mail, user: session.user, recipients: session.envelope.rcptTo.map((rcpt) => rcpt.address) })
          callback()
        },
        (error: Error) => callback(error),
      )
    },
  })

  before(async () => {
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve))
    const { port } = sink.server.address() as AddressInfo
    smtpUrl = `smtp://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}`
  })

  after(async () => {
    await new Promise<void>((resolve) => sink.close(resolve))
  })

  it('sends a mail over SMTP_URL with its credentials, as sent', async () => {
    const logs: unknown[] = []
    const transport = createMailTransport(smtpUrl, { info: (fields: unknown) => logs.push(fields) })
    assert.ok(transport)
    const content = webhookFailureEmail({
      projectName: 'Shop',
      projectId: 'proj_1',
      webhookUrl: 'https://shop.example/hooks',
      webhookId: 'wh_1',
      event: 'payload.signed',
      payloadUuid: '0b6f0c9e-7d3e-4a53-8f1c-2b9a1d5e4c10',
      attempts: 8,
      lastError: 'receiver answered HTTP 500',
      dashboardUrl: 'https://countersign.example/dashboard/projects/proj_1',
    })
    try {
      await transport.send({ to: 'owner@shop.example', from: 'Countersign <no-reply@countersign.example>', ...content })
    } finally {
      transport.close()
    }

    assert.equal(caught.length, 1)
    const [{ mail, user, recipients }] = caught as [CaughtMail]
    assert.equal(user, USER)
    assert.deepEqual(recipients, ['owner@shop.example'])
    assert.equal(mail.subject, content.subject)
    assert.equal(mail.from?.value[0]?.address, 'no-reply@countersign.example')
    assert.equal(Array.isArray(mail.to) ? undefined : mail.to?.text, 'owner@shop.example')
    assert.equal(mail.text?.trimEnd(), content.text)
    assert.deepEqual(logs, [{ to: 'owner@shop.example', subject: content.subject, messageId: mail.messageId }])
  })

  it('rejects when the server refuses the credentials, so the outbox can retry', async () => {
    const transport = createMailTransport(smtpUrl.replace(encodeURIComponent(PASSWORD), 'wrong'), { info: () => {} })
    assert.ok(transport)
    try {
      await assert.rejects(
        transport.send({ to: 'owner@shop.example', from: 'no-reply@countersign.example', subject: 'x', text: 'y' }),
        /Invalid/,
      )
    } finally {
      transport.close()
    }
  })

  it('cuts an attempt off at its time limit, however the server spreads out its answers, so the outbox can retry', async () => {
    // The server takes 2 s to answer the message, well inside the 30 s of silence the socket allows: without a limit
    // on the whole attempt the send would wait for it, however long the server kept it going.
    const slow = await startSmtpSink()
    slow.setOnAccepted(() => delay(2_000))
    const transport = createMailTransport(slow.url, { info: () => {} }, 300)
    assert.ok(transport)
    const started = performance.now()
    try {
      await assert.rejects(
        transport.send({ to: 'owner@shop.example', from: 'no-reply@countersign.example', subject: 'slow', text: 'y' }),
        (error: Error & { code?: string }) => error.code === 'EABORT',
      )
      assert.ok(performance.now() - started < 1_500, 'the attempt ended at its limit, not when the server answered')
    } finally {
      transport.close()
      await slow.close()
    }
  })

  it('is absent without SMTP_URL', () => {
    assert.equal(createMailTransport(undefined, { info: () => {} }), undefined)
  })
})
