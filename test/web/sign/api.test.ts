import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError } from '../../../src/web/shared/api-client.js'
import { parseSignRequest } from '../../../src/web/sign/api.js'

const valid = {
  uuid: '0b7e6f2a-5d1c-4e8f-9a3b-2c4d6e8f0a1b',
  type: 'signAndSubmit',
  status: 'pending',
  expiresAt: '2026-01-15T12:05:00.000Z',
  network: 'testnet',
  project: { name: 'Acme Shop' },
  transaction: { TransactionType: 'Payment', Amount: '1000000', Destination: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe' },
  customInstructions: 'Pay invoice 42',
  wallets: { xaman: false, developer: true },
}

describe('parseSignRequest', () => {
  it('keeps the fields the page shows', () => {
    assert.deepEqual(parseSignRequest(valid), valid)
  })

  it('treats a missing wallets object as no server-enabled wallet', () => {
    const { wallets: _, ...withoutWallets } = valid
    assert.deepEqual(parseSignRequest(withoutWallets).wallets, { xaman: false, developer: false })
  })

  it('drops optional fields of the wrong type instead of showing them', () => {
    const request = parseSignRequest({ ...valid, customInstructions: { toString: 'x' }, transaction: ['Payment'], redirectUrl: 7 })
    assert.equal(request.customInstructions, undefined)
    assert.equal(request.transaction, undefined)
    assert.equal(request.redirectUrl, undefined)
  })

  it('keeps the accounts allowed to sign, and drops a list that is not one of strings', () => {
    const signers = ['rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe']
    assert.deepEqual(parseSignRequest({ ...valid, signers }).signers, signers)
    assert.equal(parseSignRequest({ ...valid, signers: [7] }).signers, undefined)
    assert.equal(parseSignRequest({ ...valid, signers: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe' }).signers, undefined)
  })

  it('refuses an answer that is not a sign request', () => {
    for (const broken of [
      null,
      [],
      { ...valid, type: 'payment' },
      { ...valid, status: 'done' },
      { ...valid, expiresAt: 'tomorrow' },
      { ...valid, project: 'Acme' },
    ]) {
      assert.throws(() => parseSignRequest(broken), ApiError)
    }
  })
})
