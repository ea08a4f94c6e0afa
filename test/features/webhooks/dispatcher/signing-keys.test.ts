import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { SigningKeys } from '../../../../src/features/webhooks/dispatcher/signing-keys.js'
import { newWebhookSecret, signStandardWebhook, signWebhookBody, webhookSigningKey } from '../../../../src/features/webhooks/signature.js'
import { createSecretBox, type SecretBox } from '../../../../src/platform/crypto/secret-box.js'

/** The box, counting what it is asked to open. */
function countingBox(serverSecret = 'a-server-secret-of-enough-entropy-for-tests'): SecretBox & { opened: string[] } {
  const box = createSecretBox(serverSecret)
  const opened: string[] = []
  return {
    opened,
    seal: (plain) => box.seal(plain),
    open(sealed) {
      opened.push(sealed)
      return box.open(sealed)
    },
  }
}

let nowMs = Date.UTC(2026, 10, 27)
const HOUR_MS = 3_600_000

const message = { id: 'dlv_bq1Q5mU8WkSxq9rV0fW3tA', timestampSeconds: 1_768_478_400, body: '{"event":"payload.signed"}' }

describe('SigningKeys', () => {
  it('opens a sealed secret once, and its keys sign as the secret itself does', () => {
    const box = countingBox()
    const secret = newWebhookSecret()
    const sealed = box.seal(secret)
    const keys = new SigningKeys(box, () => nowMs)
    const first = keys.of(sealed)
    assert.equal(keys.of(sealed), first)
    assert.deepEqual(box.opened, [sealed])
    assert.equal(signWebhookBody(message.body, first), signWebhookBody(message.body, webhookSigningKey(secret)))
    assert.equal(
      signStandardWebhook(message, [first]),
      new StandardWebhook(secret).sign(message.id, new Date(message.timestampSeconds * 1000), message.body),
    )
  })

  it('gives a rotated secret, sealed anew, its own keys', () => {
    const box = countingBox()
    const keys = new SigningKeys(box, () => nowMs)
    const [before, after] = [newWebhookSecret(), newWebhookSecret()]
    const signedBefore = signStandardWebhook(message, [keys.of(box.seal(before))])
    const signedAfter = signStandardWebhook(message, [keys.of(box.seal(after))])
    assert.notEqual(signedAfter, signedBefore)
    assert.equal(signedAfter, new StandardWebhook(after).sign(message.id, new Date(message.timestampSeconds * 1000), message.body))
  })

  it('keeps nothing for a secret it cannot open: it fails as the box does, every time', () => {
    const other = createSecretBox('another-server-secret-of-enough-entropy')
    const box = countingBox()
    const keys = new SigningKeys(box, () => nowMs)
    const sealedElsewhere = other.seal(newWebhookSecret())
    assert.throws(() => keys.of(sealedElsewhere), /failed authentication/)
    assert.throws(() => keys.of(sealedElsewhere), /failed authentication/)
    assert.equal(box.opened.length, 2)
  })

  it('opens a secret again an hour after it opened it, so that keys no longer used leave memory', () => {
    const box = countingBox()
    const keys = new SigningKeys(box, () => nowMs)
    const sealed = box.seal(newWebhookSecret())
    keys.of(sealed)
    nowMs += HOUR_MS - 1
    keys.of(sealed)
    assert.equal(box.opened.length, 1)
    nowMs += 1
    keys.of(sealed)
    assert.equal(box.opened.length, 2)
    keys.of(sealed)
    assert.equal(box.opened.length, 2, 'kept for another hour')
  })

  it('keeps at most a thousand secrets, then starts afresh', () => {
    const box = countingBox()
    const keys = new SigningKeys(box, () => nowMs)
    const sealed = Array.from({ length: 1_001 }, () => box.seal(newWebhookSecret()))
    for (const one of sealed) keys.of(one)
    keys.of(sealed[0] as string)
    assert.equal(box.opened.length, 1_002, 'the first secret was opened again once the cache had started afresh')
    keys.of(sealed[1_000] as string)
    assert.equal(box.opened.length, 1_002, 'the last secret opened before the fresh start is kept')
  })
})
