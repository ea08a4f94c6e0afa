// Identifiers handed out by the service: random, URL-safe, with a prefix that says what they name.
import { randomBytes, randomUUID } from 'node:crypto'

type IdPrefix = 'proj' | 'key' | 'acct' | 'wh' | 'dlv' | 'mail'

/** A prefixed id such as proj_2fQy8x...: 16 random bytes (128 bits), base64url. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(16).toString('base64url')}`
}

/** The length of every id of `prefix`: the prefix, the underscore, and 22 characters of base64url. */
export function idLength(prefix: IdPrefix): number {
  return prefix.length + 23
}

/** `count` ids of `prefix`, as newId makes them, from one draw of random bytes. */
export function newIds(prefix: IdPrefix, count: number): string[] {
  const bytes = randomBytes(16 * count)
  return Array.from({ length: count }, (_, i) => `${prefix}_${bytes.subarray(16 * i, 16 * (i + 1)).toString('base64url')}`)
}

/** Payload ids are random (v4) UUIDs: the uuid is the signing page's capability, so it must not be guessable. */
export function newPayloadUuid(): string {
  return randomUUID()
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value)
}
