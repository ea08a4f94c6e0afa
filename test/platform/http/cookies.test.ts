import assert from 'node:assert/strict'
import { it } from 'node:test'
import { clearedCookie, readCookie, serializeCookie } from '../../../src/platform/http/cookies.js'

it('reads one cookie from a Cookie header, whatever surrounds it', () => {
  const header = 'theme=dark; cs_session=abc_DEF-123;other=1;  cs_session_old=zzz'
  assert.equal(readCookie(header, 'cs_session'), 'abc_DEF-123')
  assert.equal(readCookie(header, 'other'), '1')
  assert.equal(readCookie(header, 'cs'), undefined)
  assert.equal(readCookie('cs_session="quoted"', 'cs_session'), 'quoted')
  // Sent twice, the cookie is ambiguous (the browser's order would decide which scope wins): neither is read.
  assert.equal(readCookie('cs_session=first; cs_session=second', 'cs_session'), undefined)
  assert.equal(readCookie('cs_session=same; cs_session=same', 'cs_session'), undefined)
  assert.equal(readCookie('novalue; cs_session=', 'cs_session'), '')
  assert.equal(readCookie(undefined, 'cs_session'), undefined)
})

it('writes HttpOnly, SameSite=Lax cookies, Secure when asked, and clears them with Max-Age=0', () => {
  assert.equal(
    serializeCookie('cs_session', 'abc', { path: '/', secure: false, maxAgeSeconds: 60 }),
    'cs_session=abc; Path=/; Max-Age=60; HttpOnly; SameSite=Lax',
  )
  assert.equal(
    serializeCookie('cs_session', 'abc', { path: '/', secure: true, maxAgeSeconds: 60 }),
    'cs_session=abc; Path=/; Max-Age=60; HttpOnly; SameSite=Lax; Secure',
  )
  assert.equal(
    clearedCookie('cs_oidc_flow', { path: '/auth', secure: true }),
    'cs_oidc_flow=; Path=/auth; Max-Age=0; HttpOnly; SameSite=Lax; Secure',
  )
})

it('refuses a value that would need encoding rather than emit a header an attacker could extend', () => {
  assert.throws(() => serializeCookie('cs_session', 'a; Domain=evil.example', { path: '/', secure: false, maxAgeSeconds: 1 }))
})
