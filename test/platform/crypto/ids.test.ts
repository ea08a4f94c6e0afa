import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { newId, newIdStem } from '../../../src/platform/crypto/ids.js'

describe('newId and newIdStem', () => {
  it('give 16 and 15 random bytes in base64url, never the same twice across many refills of their pool', () => {
    const seen = new Set<string>()
    const bytes = new Set<string>()
    // 20,000 ids draw about 310,000 bytes: some 75 pools of 4 KB, with draws of both sizes crossing each pool's end.
    for (let i = 0; i < 10_000; i++) {
      const id = newId('dlv')
      const stem = newIdStem('dlv')
      assert.match(id, /^dlv_[A-Za-z0-9_-]{22}$/)
      assert.match(stem, /^dlv_[A-Za-z0-9_-]{20}$/)
      seen.add(id).add(stem)
      // No draw hands out bytes another draw had: the first 8 bytes of each are distinct too.
      bytes.add(Buffer.from(id.slice(4), 'base64url').subarray(0, 8).toString('hex'))
      bytes.add(Buffer.from(stem.slice(4), 'base64url').subarray(0, 8).toString('hex'))
    }
    assert.equal(seen.size, 20_000)
    assert.equal(bytes.size, 20_000)
  })
})
