import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { describe, it } from 'node:test'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import {
  newWebhookSecret,
  signStandardWebhook,
  signWebhookBody,
  standardSigningKey,
  webhookSigningKey,
} from '../../../src/features/webhooks/signature.js'

const secret = 'whsec_test-secret'
const body = JSON.stringify({ event: 'payload.signed', payload: { uuid: '6f1c2c64-4a3a-4c5e-9a57-9e0b3f3f6f01', memo: 'café ✓' } })

describe('signWebhookBody', () => {
  it('matches an HMAC-SHA256 computed independently over the UTF-8 bytes, as sha256=<lower-case hex>', () => {
    const hex = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(body, 'utf8')).digest('hex')
    assert.equal(signWebhookBody(body, webhookSigningKey(secret)), `sha256=${hex}`)
    assert.match(signWebhookBody(body, webhookSigningKey(secret)), /^sha256=[0-9a-f]{64}$/)
  })

  it('reproduces the RFC 4231 test case 2 vector', () => {
    assert.equal(
      signWebhookBody('what do ya want for nothing?', webhookSigningKey('Jefe')),
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    )
  })

  it('signs a string and the same bytes as a Buffer identically', () => {
    assert.equal(signWebhookBody(Buffer.from(body, 'utf8'), webhookSigningKey(secret)), signWebhookBody(body, webhookSigningKey(secret)))
  })
})

describe('newWebhookSecret', () => {
  it('is whsec_ and 32 random bytes in standard base64 with padding, different every time', () => {
    const first = newWebhookSecret()
    assert.match(first, /^whsec_[A-Za-z0-9+/]{43}=$/)
    assert.equal(Buffer.from(first.slice('whsec_'.length), 'base64').length, 32)
    assert.notEqual(newWebhookSecret(), first)
  })
})

describe('signStandardWebhook', () => {
  const message = { id: 'dlv_bq1Q5mU8WkSxq9rV0fW3tA', timestampSeconds: 1_768_478_400, body }

  it('is v1,<base64 HMAC-SHA256 of id.timestamp.body> keyed with the bytes after whsec_', () => {
    const secret = newWebhookSecret()
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
    const expected = createHmac('sha256', key).update(`${message.id}.${message.timestampSeconds}.${body}`, 'utf8').digest('base64')
    assert.equal(signStandardWebhook(message, [webhookSigningKey(secret)]), `v1,${expected}`)
  })

  it("agrees with the standardwebhooks library's own signing", () => {
    const secret = newWebhookSecret()
    const library = new StandardWebhook(secret)
    assert.equal(
      signStandardWebhook(message, [webhookSigningKey(secret)]),
      library.sign(message.id, new Date(message.timestampSeconds * 1000), body),
    )
  })

  it('lists one signature per secret, space-separated, in the order given', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()]
    assert.equal(
      signStandardWebhook(message, [webhookSigningKey(current), webhookSigningKey(previous)]),
      `${signStandardWebhook(message, [webhookSigningKey(current)])} ${signStandardWebhook(message, [webhookSigningKey(previous)])}`,
    )
  })

  it('keys a secret issued before Standard Webhooks (whsec_ + base64url) with the same 32 bytes as its standard form', () => {
    const bytes = Buffer.from(`${'f'.repeat(62)}fb`, 'hex')
    const old = `whsec_${bytes.toString('base64url')}`
    const standard = `whsec_${bytes.toString('base64')}`
    assert.match(old, /[-_]/, 'the example uses the characters that differ between the alphabets')
    assert.deepEqual(standardSigningKey(old), bytes)
    assert.equal(
      signStandardWebhook(message, [webhookSigningKey(old)]),
      new StandardWebhook(standard).sign(message.id, new Date(message.timestampSeconds * 1000), body),
    )
  })
})
