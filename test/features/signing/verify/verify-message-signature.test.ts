import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sign } from 'ripple-keypairs'
import xrpl, { Wallet } from 'xrpl'
import { buildConnectChallenge, newChallengeNonce } from '../../../../src/features/signing/verify/connect-challenge.js'
import { verifyMessageSignature } from '../../../../src/features/signing/verify/verify-message-signature.js'
import { AppError } from '../../../../src/platform/errors.js'

// xrpl is CommonJS and its ECDSA enum is not detected as a named export by Node's ESM loader.
const { ECDSA } = xrpl

const utf8Hex = (text: string) => Buffer.from(text, 'utf8').toString('hex')
/** Signs as ripple-keypairs does for wallets: over the UTF-8 bytes of the message, hex-encoded. */
const signMessage = (wallet: Wallet, message: string) => sign(utf8Hex(message), wallet.privateKey)

function rejection(message: string, publicKey: string, signature: string, fieldPrefix?: string) {
  try {
    verifyMessageSignature(message, publicKey, signature, fieldPrefix)
  } catch (error) {
    assert.ok(error instanceof AppError, `expected AppError, got ${String(error)}`)
    assert.equal(error.statusCode, 422)
    assert.ok(error.details && error.details.length > 0)
    return error.details
  }
  assert.fail('the signature was accepted')
}

const message = 'Pay invoice 2026-0042: 15 XRP to Acme Café ☕'

describe('verifyMessageSignature', () => {
  for (const algorithm of [ECDSA.secp256k1, ECDSA.ed25519]) {
    it(`accepts a ${algorithm} signature over the UTF-8 bytes and derives the address`, () => {
      const wallet = Wallet.generate(algorithm)
      const signature = signMessage(wallet, message)
      const verified = verifyMessageSignature(message, wallet.publicKey.toLowerCase(), signature.toLowerCase())
      assert.equal(verified.signerAddress, wallet.classicAddress)
      assert.equal(verified.publicKey, wallet.publicKey.toUpperCase())
      assert.equal(verified.signature, signature.toUpperCase())
    })

    it(`refuses a ${algorithm} signature presented with another wallet's key`, () => {
      const signer = Wallet.generate(algorithm)
      const other = Wallet.generate(algorithm)
      const details = rejection(message, other.publicKey, signMessage(signer, message))
      assert.deepEqual(details, [{ field: 'signature', message: 'does not verify for this message and public key' }])
    })

    it(`refuses a ${algorithm} signature over a changed message`, () => {
      const wallet = Wallet.generate(algorithm)
      const signature = signMessage(wallet, message)
      assert.deepEqual(
        rejection(`${message}.`, wallet.publicKey, signature).map((detail) => detail.field),
        ['signature'],
      )
    })
  }

  it('refuses a signature made over the message as Latin-1 instead of UTF-8', () => {
    const wallet = Wallet.generate()
    const latin1Signature = sign(Buffer.from(message, 'latin1').toString('hex'), wallet.privateKey)
    rejection(message, wallet.publicKey, latin1Signature)
  })

  it('names malformed fields, under the prefix when one is given', () => {
    const wallet = Wallet.generate()
    const signature = signMessage(wallet, message)
    const cases: Array<[string, string, string[]]> = [
      ['not hex', signature, ['body.publicKey']],
      ['04'.padEnd(66, 'A'), signature, ['body.publicKey']],
      [wallet.publicKey.slice(0, -2), signature, ['body.publicKey']],
      [wallet.publicKey, 'XYZ', ['body.signature']],
      [wallet.publicKey, `${signature}0`, ['body.signature']],
      [wallet.publicKey, '', ['body.signature']],
      [wallet.publicKey, 'AB'.repeat(200), ['body.signature']],
      ['', '', ['body.publicKey', 'body.signature']],
    ]
    for (const [publicKey, badSignature, expected] of cases) {
      assert.deepEqual(
        rejection(message, publicKey, badSignature, 'body').map((detail) => detail.field),
        expected,
      )
    }
  })

  it('refuses well-formed garbage: a random signature and a public key that is not on the curve', () => {
    const wallet = Wallet.generate()
    rejection(message, wallet.publicKey, `3045022100${'11'.repeat(32)}0220${'22'.repeat(32)}`)
    rejection(message, `02${'FF'.repeat(32)}`, signMessage(wallet, message))
    const edWallet = Wallet.generate(ECDSA.ed25519)
    rejection(message, edWallet.publicKey, 'AB'.repeat(64))
  })

  it('refuses non-string inputs without crashing', () => {
    rejection(message, 42 as unknown as string, null as unknown as string)
    rejection(undefined as unknown as string, Wallet.generate().publicKey, 'AB'.repeat(64))
  })

  it('refuses a connect signature made for another payload’s challenge', () => {
    const wallet = Wallet.generate(ECDSA.ed25519)
    const challengeFor = (uuid: string) =>
      buildConnectChallenge({
        domain: 'countersign.example',
        signingUrl: `https://countersign.example/sign/${uuid}`,
        uuid,
        nonce: newChallengeNonce(),
        issuedAtMs: Date.UTC(2026, 0, 15, 12, 0, 0),
        expiresAtMs: Date.UTC(2026, 0, 15, 12, 5, 0),
        network: 'testnet',
      })
    const first = challengeFor('7a1b2c3d-0000-4000-8000-000000000001')
    const second = challengeFor('7a1b2c3d-0000-4000-8000-000000000002')
    const signatureForFirst = signMessage(wallet, first)
    assert.equal(verifyMessageSignature(first, wallet.publicKey, signatureForFirst).signerAddress, wallet.classicAddress)
    rejection(second, wallet.publicKey, signatureForFirst)
  })
})
