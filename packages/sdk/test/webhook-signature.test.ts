import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { signWebhookBody } from '../../../src/features/webhooks/signature.js'
import { verifyWebhookSignature } from '../src/index.js'

const secret = 'whsec_test-secret'
const body = JSON.stringify({ event: 'payload.signed', payload: { uuid: '4c6f6e67-0000-4000-8000-000000000001', status: 'signed' } })

describe('verifyWebhookSignature', () => {
  it("accepts the service's signature of the raw body, as a string or as bytes", () => {
    const header = signWebhookBody(body, secret)
    assert.equal(verifyWebhookSignature(body, header, secret), true)
    assert.equal(verifyWebhookSignature(Buffer.from(body), header, secret), true)
    assert.equal(verifyWebhookSignature(new TextEncoder().encode(body), header, secret), true)
  })

  it('refuses a changed body, another secret, a changed or truncated signature, and a missing header', () => {
    const header = signWebhookBody(body, secret)
    assert.equal(verifyWebhookSignature(body.replace('signed', 'rejected'), header, secret), false)
    assert.equal(verifyWebhookSignature(`${body} `, header, secret), false)
    assert.equal(verifyWebhookSignature(body, header, 'whsec_other'), false)
    assert.equal(verifyWebhookSignature(body, header.slice(0, -1), secret), false)
    assert.equal(verifyWebhookSignature(body, `${header.slice(0, -1)}${header.endsWith('0') ? '1' : '0'}`, secret), false)
    assert.equal(verifyWebhookSignature(body, header.replace('sha256=', ''), secret), false)
    assert.equal(verifyWebhookSignature(body, header.toUpperCase(), secret), false)
    assert.equal(verifyWebhookSignature(body, `${header}00`, secret), false)
    assert.equal(verifyWebhookSignature(body, 'sha256=abc', secret), false)
    assert.equal(verifyWebhookSignature(body, undefined, secret), false)
    assert.equal(verifyWebhookSignature(body, null, secret), false)
    assert.equal(verifyWebhookSignature(body, '', secret), false)
  })
})
