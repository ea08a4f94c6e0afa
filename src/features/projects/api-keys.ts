// API keys: 32 random bytes, shown once, stored only as a SHA-256 hash.
// A fast hash is right here (unlike passwords): the key has 256 bits of entropy, so it cannot be guessed
// from its hash, and lookups stay cheap on every request.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

export const API_KEY_PREFIX = 'cs_'
const KEY_PATTERN = /^cs_[A-Za-z0-9_-]{43}$/
/** Characters of the key shown in listings: "cs_" and the first 8 characters of its random part. */
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 8

export interface NewApiKey {
  key: string
  prefix: string
  hash: string
}

export function generateApiKey(): NewApiKey {
  const key = API_KEY_PREFIX + randomBytes(32).toString('base64url')
  return { key, prefix: key.slice(0, DISPLAY_PREFIX_LENGTH), hash: hashApiKey(key) }
}

export function isWellFormedApiKey(value: string): boolean {
  return KEY_PATTERN.test(value)
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** Constant-time equality of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex')
  const right = Buffer.from(b, 'hex')
  return left.length === right.length && timingSafeEqual(left, right)
}
