import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it } from 'node:test'
import { decode, encode, encodeForSigning } from 'ripple-binary-codec'
import { sign } from 'ripple-keypairs'
import xrpl, { Wallet } from 'xrpl'
import {
  buildConnectChallenge,
  buildConnectTransaction,
  newChallengeNonce,
  verifyConnectTransaction,
} from '../../../../src/features/signing/verify/connect-challenge.js'
import { AppError } from '../../../../src/platform/errors.js'

// xrpl is CommonJS and its ECDSA enum is not detected as a named export by Node's ESM loader.
const { ECDSA } = xrpl

const input = {
  domain: 'countersign.example',
  signingUrl: 'https://countersign.example/sign/0b7e6f2a-5d1c-4e8f-9a3b-2c4d6e8f0a1b',
  uuid: '0b7e6f2a-5d1c-4e8f-9a3b-2c4d6e8f0a1b',
  nonce: 'c0ffee00c0ffee00c0ffee00c0ffee00',
  issuedAtMs: Date.UTC(2026, 0, 15, 12, 0, 0),
  expiresAtMs: Date.UTC(2026, 0, 15, 12, 5, 0),
  network: 'testnet',
}

/** Signs the connect transaction as a Ledger device does: over the signing encoding, with the account's key. */
function signConnect(wallet: Wallet, transaction: Record<string, unknown>): string {
  const unsigned = { ...transaction, SigningPubKey: wallet.publicKey }
  return encode({ ...unsigned, TxnSignature: sign(encodeForSigning(unsigned), wallet.privateKey) })
}

function rejectionFields(challenge: string, blob: string): string[] {
  try {
    verifyConnectTransaction(challenge, blob)
  } catch (error) {
    assert.ok(error instanceof AppError, `expected AppError, got ${String(error)}`)
    assert.equal(error.statusCode, 422)
    return (error.details ?? []).map((detail) => detail.field)
  }
  assert.fail('the connect transaction was accepted')
}

describe('buildConnectChallenge', () => {
  it('reads like a Sign-In with Ethereum message, with every binding field', () => {
    const challenge = buildConnectChallenge(input)
    const lines = challenge.split('\n')
    assert.equal(lines[0], 'countersign.example wants you to sign in with your XRP Ledger account.')
    for (const line of [
      'URI: https://countersign.example/sign/0b7e6f2a-5d1c-4e8f-9a3b-2c4d6e8f0a1b',
      'Network: testnet',
      'Payload ID: 0b7e6f2a-5d1c-4e8f-9a3b-2c4d6e8f0a1b',
      'Nonce: c0ffee00c0ffee00c0ffee00c0ffee00',
      'Issued At: 2026-01-15T12:00:00.000Z',
      'Expiration Time: 2026-01-15T12:05:00.000Z',
    ]) {
      assert.ok(lines.includes(line), `missing line: ${line}`)
    }
    assert.ok(!challenge.includes('\u0000'))
  })

  it('differs for each nonce; nonces are 128 random bits', () => {
    const nonces = new Set(Array.from({ length: 50 }, () => newChallengeNonce()))
    assert.equal(nonces.size, 50)
    for (const nonce of nonces) assert.match(nonce, /^[0-9a-f]{32}$/)
    const [first, second] = [...nonces]
    assert.notEqual(buildConnectChallenge({ ...input, nonce: first! }), buildConnectChallenge({ ...input, nonce: second! }))
  })
})

describe('connect by transaction (Ledger device)', () => {
  const challenge = buildConnectChallenge(input)

  it('builds a transaction that can never be applied, carrying the challenge hash in a memo', () => {
    const wallet = Wallet.generate()
    const transaction = buildConnectTransaction(challenge, wallet.classicAddress)
    assert.equal(transaction.LastLedgerSequence, 1)
    assert.equal(transaction.Sequence, 0)
    const memo = (transaction.Memos as Array<{ Memo: { MemoType: string; MemoData: string } }>)[0]!.Memo
    assert.equal(Buffer.from(memo.MemoType, 'hex').toString('utf8'), 'countersign/connect')
    assert.equal(memo.MemoData, createHash('sha256').update(challenge, 'utf8').digest('hex').toUpperCase())
    assert.doesNotThrow(() => encode(transaction))
  })

  for (const algorithm of [ECDSA.secp256k1, ECDSA.ed25519]) {
    it(`verifies a ${algorithm} signed connect transaction and returns the account`, () => {
      const wallet = Wallet.generate(algorithm)
      const blob = signConnect(wallet, buildConnectTransaction(challenge, wallet.classicAddress))
      const verified = verifyConnectTransaction(challenge, blob.toLowerCase())
      assert.equal(verified.signerAddress, wallet.classicAddress)
      assert.equal(verified.publicKey, wallet.publicKey.toUpperCase())
      assert.equal(verified.txBlob, blob.toUpperCase())
    })
  }

  it('accepts the blob xrpl.js Wallet.sign makes of the same transaction', () => {
    const wallet = Wallet.generate(ECDSA.ed25519)
    const { tx_blob: blob } = wallet.sign(buildConnectTransaction(challenge, wallet.classicAddress) as Parameters<Wallet['sign']>[0])
    assert.equal(verifyConnectTransaction(challenge, blob).signerAddress, wallet.classicAddress)
  })

  it("refuses a connect transaction signed for another payload's challenge", () => {
    const wallet = Wallet.generate()
    const otherChallenge = buildConnectChallenge({ ...input, uuid: 'another', nonce: newChallengeNonce() })
    const blob = signConnect(wallet, buildConnectTransaction(otherChallenge, wallet.classicAddress))
    assert.deepEqual(rejectionFields(challenge, blob), ['signedTransaction.Memos'])
  })

  it('refuses a transaction that could be applied (a real LastLedgerSequence and Sequence)', () => {
    const wallet = Wallet.generate()
    const blob = signConnect(wallet, {
      ...buildConnectTransaction(challenge, wallet.classicAddress),
      LastLedgerSequence: 90_000_000,
      Sequence: 5,
    })
    assert.deepEqual(rejectionFields(challenge, blob).sort(), ['signedTransaction.LastLedgerSequence', 'signedTransaction.Sequence'])
  })

  it('refuses a payment dressed as a connect proof', () => {
    const wallet = Wallet.generate()
    const blob = signConnect(wallet, {
      ...buildConnectTransaction(challenge, wallet.classicAddress),
      TransactionType: 'Payment',
      Destination: Wallet.generate().classicAddress,
      Amount: '1000000',
    })
    const fields = rejectionFields(challenge, blob)
    assert.ok(fields.includes('signedTransaction.TransactionType'))
    assert.ok(fields.includes('signedTransaction.Amount'))
  })

  it('refuses a key that does not derive the Account (no RegularKey path) and a bad signature', () => {
    const account = Wallet.generate()
    const regularKey = Wallet.generate()
    const blob = signConnect(regularKey, buildConnectTransaction(challenge, account.classicAddress))
    assert.deepEqual(rejectionFields(challenge, blob), ['signedTransaction.SigningPubKey'])

    const valid = decode(signConnect(account, buildConnectTransaction(challenge, account.classicAddress)))
    const forged = encode({ ...valid, TxnSignature: sign(encodeForSigning(valid), regularKey.privateKey) })
    assert.deepEqual(rejectionFields(challenge, forged), ['signedTransaction.TxnSignature'])
  })

  it('refuses malformed blobs with a 422', () => {
    for (const blob of ['', 'XYZ', '1200', 'AB'.repeat(70_000)]) {
      assert.deepEqual(rejectionFields(challenge, blob), ['signedTransaction'])
    }
  })
})
