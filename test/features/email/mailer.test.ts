import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, before, it } from 'node:test'
import { createMailTransport, type MailTransport } from '../../../src/features/email/mail-transport.js'
import { Mailer, startMailer } from '../../../src/features/email/mailer.js'
import { createLogger } from '../../../src/platform/logger.js'
import { forEachDatabase } from '../../support/databases.js'
import { startTestService, type TestService } from '../../support/service.js'
import { type SmtpSink, startSmtpSink } from '../../support/smtp-sink.js'
import { createPayload, setAccountEmail } from '../../support/webhooks.js'

const MINUTE_MS = 60_000

forEachDatabase('mailer: the email outbox', (dialect) => {
  let sink: SmtpSink
  let t: TestService
  let transport: MailTransport
  let mailer: Mailer
  before(async () => {
    sink = await startSmtpSink()
    t = await startTestService(dialect, {
      env: {
        SMTP_URL: sink.url,
        EMAIL_FROM: 'Countersign <alerts@countersign.test>',
        LIMITS_PRO: '{"monthlyPayloads": 5, "requestsPerMinute": 100000}',
      },
    })
    transport = createMailTransport(t.config.smtpUrl, t.service.ctx.logger)!
    mailer = new Mailer(t.service.ctx, transport)
  })
  after(async () => {
    transport.close()
    await t.stop()
    await sink.close()
  })

  const emailsOf = (projectId: string) =>
    t.service.ctx.storage.db.selectFrom('emails').selectAll().where('project_id', '=', projectId).orderBy('created_at').execute()

  it("mails the 80% usage warning once per project per month, to the account's address", async () => {
    t.clock.set(Date.UTC(2026, 0, 20, 9, 0, 0))
    const { apiKey, projectId } = await t.createProject('pro', 'Acme shop')
    await setAccountEmail(t, projectId, 'owner@acme.example')
    for (let i = 0; i < 3; i++) await createPayload(t, apiKey)
    assert.equal((await emailsOf(projectId)).length, 0, 'below 80% of 5')
    await createPayload(t, apiKey)
    await createPayload(t, apiKey)
    const [queued, ...more] = await emailsOf(projectId)
    assert.equal(more.length, 0, 'one warning, though two creations were at or above 80%')
    assert.equal(queued?.dedupe_key, `usage-warning:${projectId}:2026-01`)
    assert.equal(queued?.state, 'pending')

    const caughtBefore = sink.caught.length
    assert.equal(await mailer.sendDue(), false)
    assert.equal(sink.caught.length, caughtBefore + 1)
    const { mail, recipients } = sink.caught.at(-1)!
    assert.deepEqual(recipients, ['owner@acme.example'])
    assert.equal(mail.from?.value[0]?.address, 'alerts@countersign.test')
    assert.equal(mail.subject, 'Countersign: Acme shop has used 80% of its monthly payloads')
    assert.match(mail.text ?? '', new RegExp(`"Acme shop" \\(${projectId}\\) has created 4 of the 5 payloads`))
    const [sent] = await emailsOf(projectId)
    assert.equal(sent?.state, 'sent')
    assert.equal(sent?.sent_at, t.clock.now())
    assert.equal(sent?.attempts, 1)

    await mailer.sendDue()
    assert.equal(sink.caught.length, caughtBefore + 1, 'sent once')
    const listed = await t.service.ctx.emails.listForProject(projectId, { limit: 10, offset: 0 })
    assert.deepEqual(
      listed.map((email) => [email.kind, email.state, email.toAddress]),
      [['usage_warning', 'sent', 'owner@acme.example']],
    )

    t.clock.set(Date.UTC(2026, 1, 1, 0, 0, 1))
    for (let i = 0; i < 4; i++) await createPayload(t, apiKey)
    await mailer.sendDue()
    assert.equal(sink.caught.length, caughtBefore + 2, "a new month's warning")
    assert.deepEqual(
      (await emailsOf(projectId)).map((e) => e.dedupe_key),
      [`usage-warning:${projectId}:2026-01`, `usage-warning:${projectId}:2026-02`],
    )
  })

  it('keeps mail for a project whose account has no address as no_recipient, and never tries to send it', async () => {
    const { apiKey, projectId } = await t.createProject('pro', 'Ownerless')
    for (let i = 0; i < 4; i++) await createPayload(t, apiKey)
    const caughtBefore = sink.caught.length
    await mailer.sendDue()
    const [email] = await emailsOf(projectId)
    assert.equal(email?.state, 'no_recipient')
    assert.equal(email?.to_address, null)
    assert.equal(email?.attempts, 0)
    assert.equal(sink.caught.length, caughtBefore)
  })

  it("sends to the account's one address only: an address that would name others reaches nobody, and the mail says why", async () => {
    const caughtBefore = sink.caught.length
    for (const address of ['owner@acme.example,other@attacker.example', 'owner@acme.example\r\nBcc: other@attacker.example']) {
      const { apiKey, projectId } = await t.createProject('pro', 'Listed shop')
      await setAccountEmail(t, projectId, address)
      for (let i = 0; i < 4; i++) await createPayload(t, apiKey)
      await mailer.sendDue()
      const [email] = await emailsOf(projectId)
      assert.equal(email?.state, 'failed', JSON.stringify(address))
      assert.equal(email?.attempts, 0)
      assert.equal(email?.last_error, "the account's address is not one plain email address; the mail was not sent")
    }
    assert.equal(sink.caught.length, caughtBefore, 'nothing sent, to any recipient')
  })

  it('retries mail the SMTP server refuses: after 1 min, 5 min, 30 min and 2 h, then marks it failed', async () => {
    const { apiKey, projectId } = await t.createProject('pro', 'Refused')
    await setAccountEmail(t, projectId, 'owner@refused.example')
    sink.setRefusing(true)
    try {
      for (let i = 0; i < 4; i++) await createPayload(t, apiKey)
      await mailer.sendDue()
      let [email] = await emailsOf(projectId)
      assert.equal(email?.state, 'pending')
      assert.equal(email?.attempts, 1)
      assert.match(email?.last_error ?? '', /Mailbox temporarily unavailable/)
      assert.equal(email?.next_attempt_at, t.clock.now() + MINUTE_MS)

      for (const delayMs of [MINUTE_MS, 5 * MINUTE_MS, 30 * MINUTE_MS]) {
        t.clock.advance(delayMs - 1)
        await mailer.sendDue()
        assert.equal((await emailsOf(projectId))[0]?.attempts, email?.attempts, 'not due yet')
        t.clock.advance(1)
        await mailer.sendDue()
        ;[email] = await emailsOf(projectId)
      }
      assert.equal(email?.attempts, 4)
      assert.equal(email?.next_attempt_at, t.clock.now() + 120 * MINUTE_MS)
      t.clock.advance(120 * MINUTE_MS)
      await mailer.sendDue()
      ;[email] = await emailsOf(projectId)
      assert.equal(email?.state, 'failed')
      assert.equal(email?.attempts, 5)
    } finally {
      sink.setRefusing(false)
    }
  })

  it('delivers a refused mail once the server accepts again', async () => {
    const { apiKey, projectId } = await t.createProject('pro', 'Flaky')
    await setAccountEmail(t, projectId, 'owner@flaky.example')
    sink.setRefusing(true)
    for (let i = 0; i < 4; i++) await createPayload(t, apiKey)
    await mailer.sendDue()
    sink.setRefusing(false)
    t.clock.advance(MINUTE_MS)
    await mailer.sendDue()
    const [email] = await emailsOf(projectId)
    assert.equal(email?.state, 'sent')
    assert.equal(email?.attempts, 2)
    assert.deepEqual(sink.caught.at(-1)?.recipients, ['owner@flaky.example'])
  })
})

forEachDatabase('mailer: a slow SMTP server and two instances', (dialect) => {
  let sink: SmtpSink
  let t: TestService
  const transports: MailTransport[] = []
  before(async () => {
    sink = await startSmtpSink()
    t = await startTestService(dialect, {
      env: { SMTP_URL: sink.url, LIMITS_PRO: '{"monthlyPayloads": 5, "requestsPerMinute": 100000}' },
    })
  })
  after(async () => {
    for (const transport of transports) transport.close()
    await t.stop()
    await sink.close()
  })

  /** A mailer of its own instance: the same database, its own SMTP connection. */
  const instance = () => {
    const transport = createMailTransport(t.config.smtpUrl, t.service.ctx.logger)!
    transports.push(transport)
    return new Mailer(t.service.ctx, transport)
  }

  it('never sends one mail from both instances when a slow server makes a batch outlast its lease', async () => {
    const recipients = ['a@slow.example', 'b@slow.example', 'c@slow.example']
    for (const [i, address] of recipients.entries()) {
      const { apiKey, projectId } = await t.createProject('pro', `Slow ${i}`)
      await setAccountEmail(t, projectId, address)
      for (let n = 0; n < 4; n++) await createPayload(t, apiKey)
    }
    const first = instance()
    const second = instance()
    // Each message takes the server 70 s to accept (of the claim's 2-minute lease), and every time it has accepted
    // one, the second instance polls the outbox, as it does every second.
    let polling = false
    sink.setOnAccepted(async () => {
      t.clock.advance(70_000)
      if (polling) return
      polling = true
      try {
        await second.sendDue()
      } finally {
        polling = false
      }
    })
    try {
      // The first instance claims the three mails at once and sends them one at a time: the third would start 140 s
      // after the claim, when its lease has run out and the second instance may have claimed it.
      await first.sendDue()
      for (let i = 0; i < 5; i++) await first.sendDue()
    } finally {
      sink.setOnAccepted(undefined)
    }
    const received = sink.caught.flatMap((caught) => caught.recipients).filter((address) => address.endsWith('@slow.example'))
    assert.deepEqual(received.sort(), recipients, 'each mail received once')
    const states = await t.service.ctx.storage.db
      .selectFrom('emails')
      .select(['to_address', 'state', 'attempts'])
      .where('to_address', 'like', '%@slow.example')
      .orderBy('to_address')
      .execute()
    assert.deepEqual(
      states.map((email) => [email.to_address, email.state, email.attempts]),
      recipients.map((address) => [address, 'sent', 1]),
    )
  })
})

forEachDatabase('mailer without SMTP_URL', (dialect) => {
  let t: TestService
  const logLines: Array<Record<string, unknown>> = []
  before(async () => {
    t = await startTestService(dialect, { env: { LIMITS_PRO: '{"monthlyPayloads": 5, "requestsPerMinute": 100000}' } })
  })
  after(() => t.stop())

  it("logs the mail (recipient and subject) and keeps it in the database as 'logged'", async () => {
    const { apiKey, projectId } = await t.createProject('pro', 'Local shop')
    await setAccountEmail(t, projectId, 'owner@local.example')
    const logger = createLogger(
      'info',
      new Writable({
        write(chunk, _encoding, done) {
          logLines.push(JSON.parse(String(chunk)))
          done()
        },
      }),
    )
    const worker = startMailer({ ...t.service.ctx, logger })
    try {
      for (let i = 0; i < 4; i++) await createPayload(t, apiKey)
      worker.wake()
      const deadline = Date.now() + 5_000
      let state: string | undefined
      while (state !== 'logged' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        state = (await t.service.ctx.storage.db.selectFrom('emails').select('state').where('project_id', '=', projectId).executeTakeFirst())
          ?.state
      }
      assert.equal(state, 'logged')
    } finally {
      await worker.stop()
    }
    const line = logLines.find((l) => l.msg === 'mail not sent: SMTP_URL is not set; it is kept in the database')
    assert.ok(line)
    assert.equal(line.to, 'owner@local.example')
    assert.equal(line.subject, 'Countersign: Local shop has used 80% of its monthly payloads')
    assert.equal(line.projectId, projectId)
  })
})
