import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError } from '../../../src/web/shared/api-client.js'
import { describeFailure } from '../../../src/web/sign/problems.js'

describe('describeFailure', () => {
  it('explains a 422 as a wallet answer that differs from the request, with the details', () => {
    const details = [{ field: 'signedTransaction.SendMax', message: 'was not requested' }]
    assert.deepEqual(describeFailure(new ApiError(422, 'The signed transaction differs from the request', details), 'GemWallet'), {
      title: 'The wallet returned something other than what was asked',
      message: 'The signed transaction differs from the request',
      details,
      kind: '422',
      tone: 'error',
    })
  })

  it("explains a 422 of the ledger as its refusal, not the wallet's mistake: the reason and the advice once, as a sentence", () => {
    const detail = 'temBAD_FEE: The fee is invalid. Nothing was applied; the request is still pending, sign again'
    const refusal = new ApiError(422, 'The XRP Ledger refused the transaction with temBAD_FEE: The fee is invalid', [
      { field: 'signedTransaction', message: detail },
    ])
    assert.deepEqual(describeFailure(refusal, 'Developer wallet'), {
      title: 'The XRP Ledger refused this transaction',
      message: `${detail}.`,
      details: [],
      kind: '422',
      tone: 'error',
    })
    const held = new ApiError(422, 'The XRP Ledger already holds this very transaction, submitted elsewhere', [])
    assert.equal(
      describeFailure(held, 'Ledger').title,
      'This transaction is already on the XRP Ledger',
      'applied, not refused: never a cue to pay again',
    )
    assert.equal(describeFailure(held, 'Ledger').message, 'The XRP Ledger already holds this very transaction, submitted elsewhere.')
  })

  it("explains a 502 in the service's own words, and says the user can try again", () => {
    const problem = describeFailure(
      new ApiError(502, 'the XRP Ledger cannot be reached from this service right now; the request is still pending, try again'),
      'Ledger',
    )
    assert.equal(problem.title, 'This could not be completed right now')
    assert.equal(problem.message, 'The XRP Ledger cannot be reached from this service right now; the request is still pending, try again.')
  })

  it('names the wallet when the wallet itself failed or the user declined in it', () => {
    const problem = describeFailure(new Error('the request was declined in GemWallet'), 'GemWallet')
    assert.deepEqual(problem, {
      title: 'GemWallet did not sign',
      message: 'the request was declined in GemWallet',
      details: [],
      kind: 'wallet',
      tone: 'error',
    })
  })

  it('says plainly when the request was answered elsewhere or expired', () => {
    assert.equal(describeFailure(new ApiError(409, 'Payload is already signed'), 'Xaman').title, 'This request was already answered')
    assert.equal(describeFailure(new ApiError(410, 'Payload expired'), undefined).title, 'This request has expired')
  })

  it('tells a submission in doubt apart from a request answered elsewhere: the transaction may be on its way, do not sign again', () => {
    const message =
      'The XRPL node may still apply this transaction (terPRE_SEQ: Missing/inapplicable prior transaction.), so do not sign again.'
    const problem = describeFailure(new ApiError(409, message, [], true), 'GemWallet')
    assert.deepEqual(
      [problem.title, problem.message, problem.kind, problem.tone],
      ['Your transaction may already be on its way', message, '409', 'caution'],
    )
  })

  it('tells the user to check the connection when the service cannot be reached', () => {
    const problem = describeFailure(new ApiError(0, 'the service could not be reached (Failed to fetch)'), undefined)
    assert.equal(problem.message, 'the service could not be reached (Failed to fetch). Check your connection and try again.')
  })
})
