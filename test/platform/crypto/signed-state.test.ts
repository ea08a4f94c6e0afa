import assert from 'node:assert/strict'
import { it } from 'node:test'
import { deriveStateKey, openState, sealState } from '../../../src/platform/crypto/signed-state.js'

const key = deriveStateKey('a-server-secret-of-enough-entropy', 'oidc-flow')
const value = { state: 's', nonce: 'n', codeVerifier: 'v' }

it('opens what it sealed until the expiry, and nothing after', () => {
  const sealed = sealState(key, value, 1_000)
  assert.deepEqual(openState(key, sealed, 999), value)
  assert.equal(openState(key, sealed, 1_000), undefined)
})

it('refuses a value sealed for another purpose or with another secret', () => {
  const sealed = sealState(key, value, 1_000)
  assert.equal(openState(deriveStateKey('a-server-secret-of-enough-entropy', 'other'), sealed, 0), undefined)
  assert.equal(openState(deriveStateKey('another-server-secret', 'oidc-flow'), sealed, 0), undefined)
})

it('refuses any change to the content or the signature, and malformed input', () => {
  const sealed = sealState(key, value, 1_000)
  const [body, signature] = sealed.split('.') as [string, string]
  const longer = Buffer.from(JSON.stringify({ value, expiresAtMs: 9_999_999 })).toString('base64url')
  assert.equal(openState(key, `${longer}.${signature}`, 0), undefined)
  assert.equal(openState(key, `${body}.${signature.slice(0, -1)}A`, 0), undefined)
  for (const malformed of ['', body, `${body}.`, `${sealed}.extra`, '.', 'not base64.at all'])
    assert.equal(openState(key, malformed, 0), undefined)
})
