// Identifiers handed out by the service: random, URL-safe, with a prefix that says what they name.
import { randomBytes, randomFillSync, randomUUID } from 'node:crypto'

type IdPrefix = 'proj' | 'key' | 'acct' | 'wh' | 'dlv' | 'mail'

/**
 * Random bytes drawn a pool at a time and each handed out once, as Node's randomUUID draws its own: a call to
 * randomBytes cost 4.1 µs here, a slice of the pool 0.1 µs (docs/performance.md).
 */
const POOL_BYTES = 4096
const pool = Buffer.alloc(POOL_BYTES)
let poolOffset = POOL_BYTES

function randomBase64url(bytes: number): string {
  if (bytes > POOL_BYTES) return randomBytes(bytes).toString('base64url')
  if (poolOffset + bytes > POOL_BYTES) {
    randomFillSync(pool)
    poolOffset = 0
  }
  const text = pool.toString('base64url', poolOffset, poolOffset + bytes)
  poolOffset += bytes
  return text
}

/** A prefixed id such as proj_2fQy8x...: 16 random bytes (128 bits), base64url. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase64url(16)}`
}

/** The characters of base64url, in the order of their values. */
export const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/**
 * The first 20 of an id's 22 characters, from 15 random bytes (120 bits): ids made from one stem by adding two
 * characters of BASE64URL_ALPHABET (4,096 of them) look like newId's and are unique as long as stems are.
 */
export function newIdStem(prefix: IdPrefix): string {
  return `${prefix}_${randomBase64url(15)}`
}

/** Payload ids are random (v4) UUIDs: the uuid is the signing page's capability, so it must not be guessable. */
export function newPayloadUuid(): string {
  return randomUUID()
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value)
}
