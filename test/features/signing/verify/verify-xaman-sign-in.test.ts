import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decode, encode, encodeForSigning } from 'ripple-binary-codec'
import { sign } from 'ripple-keypairs'
import xrpl, { Wallet } from 'xrpl'
import { verifyXamanSignIn } from '../../../../src/features/signing/verify/verify-xaman-sign-in.js'
import { AppError } from '../../../../src/platform/errors.js'

const { ECDSA } = xrpl

/** A SignIn result signed by the Xaman app, as published in XRPL-Labs/verify-xrpl-signature's README. */
const PUBLISHED_SIGN_IN =
  '2280000000240000000268400000000000000C73210333C718C9CB716E0575454F4A343D46B284ED51151B9C7383524B82C10B262095744730450221009A4D99017F8FD6881D888047E2F9F90C068C09EC9308BC8526116B539D6DD44102207FAA7E8756F67FE7EE1A88884F120A00A8EC37E7D3E5ED3E02FEA7B1D97AA05581146C0994D3FCB140CAB36BAE9465137448883FA487'
const PUBLISHED_ACCOUNT = 'rwiETSee2wMz3SBnAG8hkMsCgvGy9LWbZ1'

function signedPseudoTransaction(wallet: Wallet, fields: Record<string, unknown>, signer = wallet): string {
  const unsigned = { Flags: 0x80000000, Sequence: 2, Fee: '12', Account: wallet.classicAddress, ...fields, SigningPubKey: signer.publicKey }
  return encode({ ...unsigned, TxnSignature: sign(encodeForSigning(unsigned), signer.privateKey) })
}

function refusal(blob: string, account: string | null): string {
  try {
    verifyXamanSignIn(blob, account)
  } catch (error) {
    assert.ok(error instanceof AppError)
    assert.equal(error.statusCode, 422)
    return error.details?.[0]?.message ?? ''
  }
  assert.fail('the sign-in was accepted')
}

describe('verifyXamanSignIn', () => {
  it('accepts a sign-in signed by the Xaman app', () => {
    const verified = verifyXamanSignIn(PUBLISHED_SIGN_IN, PUBLISHED_ACCOUNT)
    assert.equal(verified.signerAddress, PUBLISHED_ACCOUNT)
    assert.equal(verified.publicKey, '0333C718C9CB716E0575454F4A343D46B284ED51151B9C7383524B82C10B262095')
    assert.equal(verified.signature, (decode(PUBLISHED_SIGN_IN) as { TxnSignature: string }).TxnSignature)
    assert.equal(verified.txBlob, PUBLISHED_SIGN_IN)
  })

  for (const algorithm of [ECDSA.secp256k1, ECDSA.ed25519]) {
    it(`accepts one signed with a ${algorithm} key`, () => {
      const wallet = Wallet.generate(algorithm)
      assert.equal(
        verifyXamanSignIn(signedPseudoTransaction(wallet, {}).toLowerCase(), wallet.classicAddress).signerAddress,
        wallet.classicAddress,
      )
    })
  }

  it('refuses a sign-in for another account than Xaman reports', () => {
    assert.match(refusal(PUBLISHED_SIGN_IN, Wallet.generate().classicAddress), /Xaman reports/)
  })

  it('refuses a changed sign-in', () => {
    const changed = encode({ ...(decode(PUBLISHED_SIGN_IN) as Record<string, unknown>), Sequence: 3 })
    assert.match(refusal(changed, PUBLISHED_ACCOUNT), /does not verify/)
  })

  it('refuses a real transaction in place of a sign-in', () => {
    const wallet = Wallet.generate()
    const payment = wallet.sign({
      TransactionType: 'Payment',
      Account: wallet.classicAddress,
      Destination: PUBLISHED_ACCOUNT,
      Amount: '1',
      Fee: '12',
      Sequence: 1,
    })
    assert.match(refusal(payment.tx_blob, wallet.classicAddress), /is a transaction, not a sign-in/)
  })

  it('refuses a key that is not the master key of the account', () => {
    const wallet = Wallet.generate()
    assert.match(refusal(signedPseudoTransaction(wallet, {}, Wallet.generate()), wallet.classicAddress), /master key/)
  })

  it('refuses what is not a canonical encoding', () => {
    assert.match(refusal('zz', null), /hex/)
    assert.match(refusal(PUBLISHED_SIGN_IN.slice(0, 40), null), /binary encoding|canonical/)
    assert.match(refusal(`${PUBLISHED_SIGN_IN}00`, null), /binary encoding|canonical/)
  })
})
