// Short-lived state the server hands to the browser and must get back unaltered (the OpenID Connect flow's
// state, nonce and PKCE verifier): JSON with an expiry, HMAC-SHA256 signed. Signed, not encrypted: it goes
// only to the browser that started the flow, which may read it.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'

/**
 * A key for one purpose (HKDF-SHA256, info `countersign <purpose> v1`), derived from the server secret so that no two
 * uses share a key. No salt: the input is already a high-entropy secret, and the info string separates the uses.
 */
export function deriveStateKey(serverSecret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', serverSecret, Buffer.alloc(0), `countersign ${purpose} v1`, 32))
}

export function sealState(key: Buffer, value: unknown, expiresAtMs: number): string {
  const body = Buffer.from(JSON.stringify({ value, expiresAtMs })).toString('base64url')
  return `${body}.${mac(key, body)}`
}

/** The sealed value, or undefined when it was altered, signed with another key, malformed or expired. */
export function openState(key: Buffer, sealed: string, nowMs: number): unknown {
  const [body, signature, ...rest] = sealed.split('.')
  if (body === undefined || signature === undefined || rest.length > 0) return undefined
  const expected = Buffer.from(mac(key, body))
  const given = Buffer.from(signature)
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined
  try {
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { value?: unknown; expiresAtMs?: unknown }
    if (typeof decoded.expiresAtMs !== 'number' || decoded.expiresAtMs <= nowMs) return undefined
    return decoded.value
  } catch {
    return undefined
  }
}

function mac(key: Buffer, body: string): string {
  return createHmac('sha256', key).update(body).digest('base64url')
}
