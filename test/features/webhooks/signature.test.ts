import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { describe, it } from 'node:test'
import { newWebhookSecret, signWebhookBody } from '../../../src/features/webhooks/signature.js'

const secret = 'whsec_test-secret'
const body = JSON.stringify({ event: 'payload.signed', payload: { uuid: '6f1c2c64-4a3a-4c5e-9a57-9e0b3f3f6f01', memo: 'café ✓' } })

describe('signWebhookBody', () => {
  it('matches an HMAC-SHA256 computed independently over the UTF-8 bytes, as sha256=<lower-case hex>', () => {
    const hex = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(body, 'utf8')).digest('hex')
    assert.equal(signWebhookBody(body, secret), `sha256=${hex}`)
    assert.match(signWebhookBody(body, secret), /^sha256=[0-9a-f]{64}$/)
  })

  it('reproduces the RFC 4231 test case 2 vector', () => {
    assert.equal(
      signWebhookBody('what do ya want for nothing?', 'Jefe'),
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    )
  })

  it('signs a string and the same bytes as a Buffer identically', () => {
    assert.equal(signWebhookBody(Buffer.from(body, 'utf8'), secret), signWebhookBody(body, secret))
  })
})

describe('newWebhookSecret', () => {
  it('is whsec_ and 32 random bytes in base64url, different every time', () => {
    const first = newWebhookSecret()
    assert.match(first, /^whsec_[A-Za-z0-9_-]{43}$/)
    assert.equal(Buffer.from(first.slice('whsec_'.length), 'base64url').length, 32)
    assert.notEqual(newWebhookSecret(), first)
  })
})
