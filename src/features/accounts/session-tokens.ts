// Dashboard session and one-time sign-in tokens: 32 random bytes for the browser, only their SHA-256 at rest.
// A fast hash is enough (as for API keys): a 256-bit random token cannot be recovered from its hash.
import { createHash, randomBytes } from 'node:crypto'

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

/** A session ends after this long without use... */
export const SESSION_IDLE_TTL_MS = 7 * DAY_MS
/** ...and at the latest this long after sign-in, however much it is used. */
export const SESSION_ABSOLUTE_TTL_MS = 30 * DAY_MS
/** A session's expiry moves forward at most this often, so that most requests on it only read. */
export const SESSION_RENEW_INTERVAL_MS = HOUR_MS
/** One-time local sign-in links. */
export const LOGIN_TOKEN_TTL_MS = 15 * 60_000

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/

export function newSecretToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url')
  return { token, hash: hashSecretToken(token) }
}

export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

export function isWellFormedSecretToken(value: string): boolean {
  return TOKEN_PATTERN.test(value)
}

/** When a session used at `nowMs` expires: SESSION_IDLE_TTL_MS after this use, never later than its absolute limit. */
export function sessionExpiryMs(createdAtMs: number, nowMs: number): number {
  return Math.min(createdAtMs + SESSION_ABSOLUTE_TTL_MS, nowMs + SESSION_IDLE_TTL_MS)
}

/** Whether a use at `nowMs` should write the session's later expiry (true at most once per renew interval). */
export function sessionNeedsRenewal(session: { createdAtMs: number; expiresAtMs: number }, nowMs: number): boolean {
  return sessionExpiryMs(session.createdAtMs, nowMs) - session.expiresAtMs >= SESSION_RENEW_INTERVAL_MS
}

/** The link `countersign login-link` prints: it signs the local admin in once. */
export function localSignInUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/auth/local?token=${token}`
}
