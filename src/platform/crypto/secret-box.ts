// Secrets and responses at rest that must be read back: webhook secrets (they key an HMAC on every delivery, so they
// cannot be hashed like API keys) and the responses kept with Idempotency-Keys. They are stored encrypted with a key
// derived from the server secret.
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes } from 'node:crypto'
import { deriveStateKey } from './signed-state.js'

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16

export interface SecretBox {
  /** `v1.<iv>.<tag>.<ciphertext>`, each part base64url; a fresh random IV every time. */
  seal(plain: string): string
  /** The plain text of a sealed string; throws when it was altered or sealed under another server secret. */
  open(sealed: string): string
}

/** AES-256-GCM with a key derived by HKDF-SHA256 from `serverSecret`. */
export function createSecretBox(serverSecret: string): SecretBox {
  if (serverSecret.length === 0) throw new Error('The server secret for webhook secrets must not be empty')
  // The purpose is part of the key: renaming it would make every stored webhook secret unreadable. A KeyObject, made
  // once: given the key's bytes, Node makes one on every call (opening a secret took 13.5 µs that way, 3.5 µs so).
  const key = createSecretKey(deriveStateKey(serverSecret, 'webhook secrets'))

  return {
    seal(plain) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
      const encoded = [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url'))
      return `${VERSION}.${encoded.join('.')}`
    },

    open(sealed) {
      const parts = sealed.split('.')
      if (parts.length !== 4 || parts[0] !== VERSION)
        throw new Error(`Not a sealed webhook secret (expected ${VERSION}.<iv>.<tag>.<ciphertext>)`)
      const [iv, tag, ciphertext] = parts.slice(1).map((part) => Buffer.from(part, 'base64url')) as [Buffer, Buffer, Buffer]
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new Error('Sealed webhook secret has a malformed IV or tag')
      // authTagLength pins the tag size, so a truncated tag cannot weaken the check.
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
      decipher.setAuthTag(tag)
      try {
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8')
      } catch {
        throw new Error('Sealed webhook secret failed authentication: it was altered or sealed under another server secret')
      }
    },
  }
}
