import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { syncBuiltinESMExports } from 'node:module'
import { describe, it, mock } from 'node:test'
import { newId, newIdStem } from '../../../src/platform/crypto/ids.js'

describe('newId and newIdStem', () => {
  it('hand out each byte their pool drew once, in order, and draw a new pool when a draw would not fit', () => {
    // Every pool the ids draw is recorded as it is filled: the ids, decoded, must be those pools' bytes one after the
    // other, each draw where the previous one ended, with nothing taken twice.
    const fills: Buffer[] = []
    const fill = crypto.randomFillSync
    mock.method(crypto, 'randomFillSync', (buffer: Buffer) => {
      fill(buffer)
      fills.push(Buffer.from(buffer))
      return buffer
    })
    syncBuiltinESMExports()
    try {
      const draws: Buffer[] = []
      // 3,000 ids of 16 and 15 bytes: 12 pools of 4 KB, with draws of both sizes meeting each pool's end.
      for (let i = 0; i < 1_500; i++) {
        const id = newId('dlv')
        const stem = newIdStem('dlv')
        assert.match(id, /^dlv_[A-Za-z0-9_-]{22}$/)
        assert.match(stem, /^dlv_[A-Za-z0-9_-]{20}$/)
        draws.push(Buffer.from(id.slice(4), 'base64url'), Buffer.from(stem.slice(4), 'base64url'))
      }
      assert.ok(fills.length >= 12, `the ids drew ${fills.length} pools`)
      let pool = -1
      let offset = Number.POSITIVE_INFINITY
      for (const draw of draws) {
        if (offset + draw.length > 4096) {
          pool += 1
          offset = 0
        }
        assert.deepEqual(draw, fills[pool]?.subarray(offset, offset + draw.length), `draw at byte ${offset} of pool ${pool}`)
        offset += draw.length
      }
      assert.equal(pool, fills.length - 1, 'every pool drawn was used')
    } finally {
      mock.restoreAll()
      syncBuiltinESMExports()
    }
  })

  it('never gives the same id twice', () => {
    const ids = new Set(Array.from({ length: 20_000 }, (_, i) => (i % 2 ? newId('proj') : newIdStem('proj'))))
    assert.equal(ids.size, 20_000)
  })
})
