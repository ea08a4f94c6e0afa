import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { newWebhookSecret, signStandardWebhook, signWebhookBody, webhookSigningKey } from '../../../src/features/webhooks/signature.js'
import { verifyWebhook, verifyWebhookSignature, WebhookVerificationError } from '../src/index.js'

const secret = 'whsec_test-secret'
const body = JSON.stringify({ event: 'payload.signed', payload: { uuid: '4c6f6e67-0000-4000-8000-000000000001', status: 'signed' } })

describe('verifyWebhookSignature', () => {
  it("accepts the service's signature of the raw body, as a string or as bytes", () => {
    const header = signWebhookBody(body, webhookSigningKey(secret))
    assert.equal(verifyWebhookSignature(body, header, secret), true)
    assert.equal(verifyWebhookSignature(Buffer.from(body), header, secret), true)
    assert.equal(verifyWebhookSignature(new TextEncoder().encode(body), header, secret), true)
  })

  it('refuses a changed body, another secret, a changed or truncated signature, and a missing header', () => {
    const header = signWebhookBody(body, webhookSigningKey(secret))
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

describe('verifyWebhook', () => {
  const secret = newWebhookSecret()
  const id = 'dlv_bq1Q5mU8WkSxq9rV0fW3tA'
  const nowMs = Date.UTC(2026, 0, 15, 12)
  const nowSeconds = nowMs / 1000
  const now = () => nowMs
  const signed = (timestampSeconds = nowSeconds, secrets = [secret], signedBody = body) => ({
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signStandardWebhook({ id, timestampSeconds, body: signedBody }, secrets.map(webhookSigningKey)),
    'x-service-signature': signWebhookBody(signedBody, webhookSigningKey(secrets[0] as string)),
    'x-countersign-timestamp': String(timestampSeconds),
  })
  const failure = (reason: string) => (error: unknown) => error instanceof WebhookVerificationError && error.reason === reason

  it("returns the parsed delivery when the service's webhook-signature matches, whatever form the headers take", () => {
    const headers = signed()
    assert.deepEqual(verifyWebhook(body, headers, secret, { now }), JSON.parse(body))
    assert.deepEqual(verifyWebhook(Buffer.from(body), new Headers(headers), secret, { now }), JSON.parse(body))
    const nodeStyle = { ...headers, 'Webhook-Signature': [headers['webhook-signature']], 'webhook-signature': undefined }
    assert.deepEqual(verifyWebhook(body, nodeStyle, secret, { now }), JSON.parse(body))
  })

  it('accepts what the standardwebhooks library signs, with the real clock by default', () => {
    const timestamp = new Date()
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': new StandardWebhook(secret).sign(id, timestamp, body),
    }
    assert.deepEqual(verifyWebhook(body, headers, secret), JSON.parse(body))
  })

  it('refuses a timestamp more than 5 minutes away, either way, and accepts one just inside', () => {
    assert.throws(() => verifyWebhook(body, signed(nowSeconds - 301), secret, { now }), failure('timestamp_out_of_range'))
    assert.throws(() => verifyWebhook(body, signed(nowSeconds + 301), secret, { now }), failure('timestamp_out_of_range'))
    assert.ok(verifyWebhook(body, signed(nowSeconds - 300), secret, { now }))
    assert.ok(verifyWebhook(body, signed(nowSeconds + 300), secret, { now }))
    assert.throws(() => verifyWebhook(body, signed(nowSeconds - 3600), secret, { now, toleranceSeconds: 1800 }), /3600 s old/)
    assert.throws(() => verifyWebhook(body, { ...signed(), 'webhook-timestamp': '1e9' }, secret, { now }), failure('invalid_timestamp'))
  })

  it('throws a TypeError for a tolerance or a clock that is not a number, rather than dropping the replay check', () => {
    const tenYearsOld = signed(nowSeconds - 10 * 365 * 86400)
    for (const toleranceSeconds of [Number.NaN, Number(undefined), -1, Number.POSITIVE_INFINITY, '300' as unknown as number]) {
      assert.throws(() => verifyWebhook(body, tenYearsOld, secret, { now, toleranceSeconds }), TypeError, String(toleranceSeconds))
    }
    assert.throws(() => verifyWebhook(body, tenYearsOld, secret, { now: () => Number.NaN }), TypeError)
    assert.ok(verifyWebhook(body, signed(nowSeconds), secret, { now, toleranceSeconds: 0 }))
  })

  it('refuses a changed body, id or timestamp, another secret, and a signature of another version', () => {
    const headers = signed()
    assert.throws(() => verifyWebhook(body.replace('signed', 'rejected'), headers, secret, { now }), failure('invalid_signature'))
    assert.throws(() => verifyWebhook(body, { ...headers, 'webhook-id': 'dlv_other' }, secret, { now }), failure('invalid_signature'))
    const moved = { ...headers, 'webhook-timestamp': String(nowSeconds - 1) }
    assert.throws(() => verifyWebhook(body, moved, secret, { now }), failure('invalid_signature'))
    assert.throws(() => verifyWebhook(body, headers, newWebhookSecret(), { now }), failure('invalid_signature'))
    const v2 = { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') }
    assert.throws(() => verifyWebhook(body, v2, secret, { now }), failure('invalid_signature'))
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      assert.throws(() => verifyWebhook(body, { ...headers, [name]: undefined }, secret, { now }), failure('missing_header'))
    }
  })

  it('an attacker who strips the webhook-* headers of a captured delivery and stamps a fresh X-Countersign-Timestamp is refused', () => {
    const captured = signed(nowSeconds - 3600)
    const downgraded = {
      'x-service-signature': captured['x-service-signature'],
      'x-countersign-timestamp': String(nowSeconds),
    }
    assert.throws(() => verifyWebhook(body, downgraded, secret, { now }), failure('missing_header'))
  })

  it('verifies with either secret while a rotation carries two signatures', () => {
    const previous = newWebhookSecret()
    const headers = signed(nowSeconds, [secret, previous])
    assert.ok(verifyWebhook(body, headers, secret, { now }))
    assert.ok(verifyWebhook(body, headers, previous, { now }))
    assert.throws(() => verifyWebhook(body, headers, newWebhookSecret(), { now }), failure('invalid_signature'))
  })

  it('verifies with a secret issued before Standard Webhooks, in base64url, as it was given', () => {
    const old = `whsec_${Buffer.from('fb'.repeat(32), 'hex').toString('base64url')}`
    assert.ok(verifyWebhook(body, signed(nowSeconds, [old]), old, { now }))
  })

  it('checks X-Service-Signature and its timestamp when asked for that scheme', () => {
    const scheme = 'service-signature'
    assert.deepEqual(verifyWebhook(body, signed(), secret, { now, scheme }), JSON.parse(body))
    assert.throws(() => verifyWebhook(body, signed(nowSeconds - 301), secret, { now, scheme }), failure('timestamp_out_of_range'))
    assert.throws(() => verifyWebhook(body, signed(nowSeconds + 301), secret, { now, scheme }), failure('timestamp_out_of_range'))
    assert.throws(() => verifyWebhook(`${body} `, signed(), secret, { now, scheme }), failure('invalid_signature'))
    const { 'x-countersign-timestamp': _, ...untimed } = signed()
    assert.throws(() => verifyWebhook(body, untimed, secret, { now, scheme }), failure('missing_header'))
  })
})
