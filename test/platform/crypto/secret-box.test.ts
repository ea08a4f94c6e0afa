import assert from 'node:assert/strict'
import { createDecipheriv, hkdfSync } from 'node:crypto'
import { describe, it } from 'node:test'
import { createSecretBox } from '../../../src/platform/crypto/secret-box.js'

const serverSecret = 'a-server-secret-of-enough-entropy-for-tests'
const webhookSecret = 'whsec_Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5'

function replacePart(sealed: string, index: number, change: (bytes: Buffer) => Buffer): string {
  const parts = sealed.split('.')
  parts[index] = change(Buffer.from(parts[index] as string, 'base64url')).toString('base64url')
  return parts.join('.')
}

const flipFirstBit = (bytes: Buffer) => {
  const copy = Buffer.from(bytes)
  copy[0] = (copy[0] as number) ^ 1
  return copy
}

describe('createSecretBox', () => {
  const box = createSecretBox(serverSecret)

  it('opens what it sealed', () => {
    assert.equal(box.open(box.seal(webhookSecret)), webhookSecret)
    assert.equal(box.open(box.seal('')), '')
  })

  it('seals as v1.<iv>.<tag>.<ciphertext> with a fresh 12-byte IV each time, hiding the secret', () => {
    const first = box.seal(webhookSecret)
    const second = box.seal(webhookSecret)
    assert.notEqual(first, second)
    const [version, iv, tag, ciphertext] = first.split('.')
    assert.equal(version, 'v1')
    assert.equal(Buffer.from(iv as string, 'base64url').length, 12)
    assert.equal(Buffer.from(tag as string, 'base64url').length, 16)
    assert.equal(Buffer.from(ciphertext as string, 'base64url').length, Buffer.byteLength(webhookSecret))
    assert.ok(!first.includes(webhookSecret.slice(6)))
  })

  it('is AES-256-GCM under HKDF-SHA256(server secret, info "countersign webhook secrets v1")', () => {
    const key = Buffer.from(hkdfSync('sha256', serverSecret, Buffer.alloc(0), 'countersign webhook secrets v1', 32))
    const [, iv, tag, ciphertext] = box
      .seal(webhookSecret)
      .split('.')
      .map((part) => Buffer.from(part, 'base64url')) as [Buffer, Buffer, Buffer, Buffer]
    const decipher = createDecipheriv('aes-256-gcm', key, iv)
    decipher.setAuthTag(tag)
    assert.equal(Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8'), webhookSecret)
  })

  it('refuses a sealed secret that was altered', () => {
    const sealed = box.seal(webhookSecret)
    assert.throws(() => box.open(replacePart(sealed, 3, flipFirstBit)), /failed authentication/)
    assert.throws(() => box.open(replacePart(sealed, 2, flipFirstBit)), /failed authentication/)
    assert.throws(() => box.open(replacePart(sealed, 1, flipFirstBit)), /failed authentication/)
    assert.throws(() => box.open(replacePart(sealed, 2, (tag) => tag.subarray(0, 12))), /malformed IV or tag/)
  })

  it('refuses one sealed under another server secret', () => {
    const sealed = createSecretBox('another-server-secret').seal(webhookSecret)
    assert.throws(() => box.open(sealed), /failed authentication/)
  })

  it('refuses strings that are not sealed secrets', () => {
    assert.throws(() => box.open(webhookSecret), /Not a sealed webhook secret/)
    assert.throws(() => box.open(box.seal(webhookSecret).replace(/^v1/, 'v2')), /Not a sealed webhook secret/)
    assert.throws(() => box.open('v1.a.b'), /Not a sealed webhook secret/)
  })

  it('needs a server secret', () => {
    assert.throws(() => createSecretBox(''), /must not be empty/)
  })
})
