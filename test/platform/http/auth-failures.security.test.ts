// Guessing API keys, or flooding the service with unknown ones: failed authentications are limited per client
// address (an IPv6 client by its /64), a spoofed X-Forwarded-For does not escape the limit unless the proxy is
// trusted, and unknown keys leave nothing behind in memory.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { API_KEY_CACHE_TTL_MS, RECENTLY_VALID_MS } from '../../../src/features/projects/api-key-authenticator.js'
import { forEachDatabase } from '../../support/databases.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'

const LIMIT = 5
const randomKey = () => `cs_${randomBytes(32).toString('base64url')}`

forEachDatabase('failed authentications per client address', (dialect) => {
  let t: TestService
  let apiKey: string
  before(async () => {
    t = await startTestService(dialect, { env: { AUTH_FAILURES_PER_MINUTE: String(LIMIT) } })
    ;({ apiKey } = await t.createProject('pro'))
  })
  after(() => t.stop())

  const list = (remoteAddress: string, key: string, headers: Record<string, string> = {}) =>
    t.inject({ method: 'GET', url: '/api/v1/payloads', remoteAddress, headers: { ...bearer(key), ...headers } })

  it('answers 429 with Retry-After once an address has failed too often, then again 401 after the minute', async () => {
    for (let i = 0; i < LIMIT; i++) assert.equal((await list('198.51.100.7', randomKey())).statusCode, 401)
    const limited = await list('198.51.100.7', randomKey())
    assert.equal(limited.statusCode, 429)
    assert.match(limited.json().error, /^Too many failed authentications from this address \(5 per minute\)/)
    assert.ok(Number(limited.headers['retry-after']) >= 1 && Number(limited.headers['retry-after']) <= 60)
    // A malformed key or none at all counts too.
    assert.equal((await list('198.51.100.7', 'garbage')).statusCode, 429)
    // While limited, the address is refused before any key is looked up, the right one included.
    assert.equal((await list('198.51.100.7', apiKey)).statusCode, 429)
    // Other addresses are not affected.
    assert.equal((await list('198.51.100.8', apiKey)).statusCode, 200)
    assert.equal((await list('198.51.100.8', randomKey())).statusCode, 401)
    t.clock.advance(61_000)
    assert.equal((await list('198.51.100.7', randomKey())).statusCode, 401)
    assert.equal((await list('198.51.100.7', apiKey)).statusCode, 200)
  })

  it('does not shut out a client whose key is in use when another behind the same address fails (shared NAT or egress)', async () => {
    const { apiKey: unusedKey } = await t.createProject('pro')
    assert.equal((await list('198.51.100.30', apiKey)).statusCode, 200)
    // Another tenant's worker behind the same address keeps sending a stale key.
    for (let i = 0; i < LIMIT; i++) assert.equal((await list('198.51.100.30', randomKey())).statusCode, 401)
    t.clock.advance(API_KEY_CACHE_TTL_MS) // past the key cache: the database is asked again
    assert.equal((await list('198.51.100.30', apiKey)).statusCode, 200, 'the key in use is still looked up')
    assert.equal((await list('198.51.100.30', randomKey())).statusCode, 429, 'guesses are still refused unlooked')
    assert.equal((await list('198.51.100.30', unusedKey)).statusCode, 429, 'a key not used lately waits like a guess')
    // Ten minutes without use, and the key waits like any other.
    t.clock.advance(RECENTLY_VALID_MS)
    for (let i = 0; i < LIMIT; i++) await list('198.51.100.30', randomKey())
    assert.equal((await list('198.51.100.30', apiKey)).statusCode, 429)
    t.clock.advance(61_000)
  })

  it('counts an IPv6 client by its /64, so that rotating addresses inside it does not help', async () => {
    for (let i = 1; i <= LIMIT; i++) assert.equal((await list(`2001:db8:1:2::${i.toString(16)}`, randomKey())).statusCode, 401)
    assert.equal((await list('2001:db8:1:2:ffff::9', randomKey())).statusCode, 429)
    assert.equal((await list('2001:db8:1:3::1', randomKey())).statusCode, 401)
  })

  it('ignores X-Forwarded-For from a proxy that is not trusted: a spoofed address escapes nothing', async () => {
    for (let i = 0; i < LIMIT; i++) {
      assert.equal((await list('198.51.100.20', randomKey(), { 'x-forwarded-for': `203.0.113.${i}` })).statusCode, 401)
    }
    assert.equal((await list('198.51.100.20', randomKey(), { 'x-forwarded-for': '203.0.113.99' })).statusCode, 429)
  })

  it('keeps no trace of unknown keys in memory', async () => {
    const cache = (t.service.ctx.authenticator as unknown as { cache: Map<string, unknown> }).cache
    const before = cache.size
    for (let i = 0; i < 200; i++) await list(`192.0.2.${i % 250}`, randomKey())
    assert.equal(cache.size, before)
  })
})

describe('failed authentications behind a trusted proxy (TRUST_PROXY)', () => {
  let t: TestService
  before(async () => {
    t = await startTestService('sqlite', { env: { AUTH_FAILURES_PER_MINUTE: String(LIMIT), TRUST_PROXY: '10.0.0.0/8' } })
  })
  after(() => t.stop())

  it('counts each client the proxy names apart, and a client cannot add a hop of its own', async () => {
    const viaProxy = (forwardedFor: string) =>
      t.inject({
        method: 'GET',
        url: '/api/v1/payloads',
        remoteAddress: '10.1.2.3',
        headers: { ...bearer(randomKey()), 'x-forwarded-for': forwardedFor },
      })
    for (let i = 0; i < LIMIT; i++) assert.equal((await viaProxy('203.0.113.1')).statusCode, 401)
    assert.equal((await viaProxy('203.0.113.1')).statusCode, 429)
    assert.equal((await viaProxy('203.0.113.2')).statusCode, 401, 'another client behind the same proxy')
    // The client wrote its own X-Forwarded-For; the proxy appended the real address: the last untrusted hop counts.
    assert.equal((await viaProxy('198.51.100.1, 203.0.113.1')).statusCode, 429)
  })
})
