import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decode, encode, encodeForSigning } from 'ripple-binary-codec'
import { sign } from 'ripple-keypairs'
import xrpl, { multisign, Wallet } from 'xrpl'
import { verifySignedTransaction } from '../../../../src/features/signing/verify/verify-signed-transaction.js'
import { AppError } from '../../../../src/platform/errors.js'

// xrpl is CommonJS and its ECDSA enum is not detected as a named export by Node's ESM loader.
const { ECDSA } = xrpl

const payer = Wallet.generate(ECDSA.secp256k1)
const edPayer = Wallet.generate(ECDSA.ed25519)
const destination = Wallet.generate().classicAddress
const issuer = Wallet.generate().classicAddress

// What the wallet adds to any request before signing.
const walletFields = { Fee: '12', Sequence: 7, LastLedgerSequence: 12_345 }

const xrpPayment = (account = payer.classicAddress) => ({
  TransactionType: 'Payment',
  Account: account,
  Destination: destination,
  DestinationTag: 42,
  Amount: '1500000',
})

const signed = (wallet: Wallet, transaction: Record<string, unknown>, multisignature = false) =>
  wallet.sign({ ...walletFields, ...transaction } as Parameters<Wallet['sign']>[0], multisignature)

/** Runs the verification and returns the 422's details; fails the test if it does not throw a 422. */
function rejection(requested: Record<string, unknown>, blob: string): Array<{ field: string; message: string }> {
  try {
    verifySignedTransaction(requested, blob)
  } catch (error) {
    assert.ok(error instanceof AppError, `expected AppError, got ${String(error)}`)
    assert.equal(error.statusCode, 422)
    assert.ok(error.details && error.details.length > 0)
    return error.details
  }
  assert.fail('the blob was accepted')
}

const fields = (details: Array<{ field: string }>) => details.map((detail) => detail.field)

/** Re-encodes a signed blob after changing its decoded fields, keeping the original signature. */
function tamper(blob: string, change: (transaction: Record<string, unknown>) => void): string {
  const transaction = decode(blob) as Record<string, unknown>
  change(transaction)
  return encode(transaction)
}

describe('verifySignedTransaction: accepted blobs', () => {
  it('accepts an XRP payment signed with a secp256k1 key, with the hash and signer', () => {
    const { tx_blob: blob, hash } = signed(payer, xrpPayment())
    const verified = verifySignedTransaction(xrpPayment(), blob.toLowerCase())
    assert.equal(verified.txBlob, blob.toUpperCase())
    assert.equal(verified.txHash, hash)
    assert.equal(verified.signerAddress, payer.classicAddress)
    assert.equal(verified.signingPubKey, payer.publicKey.toUpperCase())
    assert.equal(verified.multisigned, false)
    assert.deepEqual(verified.signerAccounts, [])
    assert.equal(verified.requiresRegularKeyCheck, false)
    assert.equal(verified.transaction.Amount, '1500000')
  })

  it('accepts a payment signed with an Ed25519 key', () => {
    const { tx_blob: blob, hash } = signed(edPayer, xrpPayment(edPayer.classicAddress))
    const verified = verifySignedTransaction(xrpPayment(edPayer.classicAddress), blob)
    assert.equal(verified.txHash, hash)
    assert.equal(verified.signerAddress, edPayer.classicAddress)
    assert.ok(verified.signingPubKey.startsWith('ED'))
  })

  it('compares issued-currency amounts by encoding: "1.50" requested, "1.5" signed', () => {
    const requested = { ...xrpPayment(), Amount: { currency: 'USD', issuer, value: '1.50' } }
    const { tx_blob: blob } = signed(payer, { ...requested, Amount: { currency: 'USD', issuer, value: '1.5' } })
    assert.equal(verifySignedTransaction(requested, blob).signerAddress, payer.classicAddress)
  })

  it('compares memos by encoding, whatever the hex case', () => {
    const requested = { ...xrpPayment(), Memos: [{ Memo: { MemoType: '6f72646572', MemoData: 'abcdef' } }] }
    const { tx_blob: blob } = signed(payer, { ...requested, Memos: [{ Memo: { MemoType: '6F72646572', MemoData: 'ABCDEF' } }] })
    assert.equal(verifySignedTransaction(requested, blob).signerAddress, payer.classicAddress)
  })

  it('lets the wallet fill Account when the request leaves it out', () => {
    const { Account: _, ...requested } = xrpPayment()
    const { tx_blob: blob } = signed(edPayer, { ...requested, Account: edPayer.classicAddress })
    assert.equal(verifySignedTransaction(requested, blob).signerAddress, edPayer.classicAddress)
  })

  it('accepts an empty requested SigningPubKey and an added tfFullyCanonicalSig and NetworkID', () => {
    const requested = { ...xrpPayment(), SigningPubKey: '', Flags: 0 }
    const { tx_blob: blob } = signed(payer, { ...xrpPayment(), Flags: 0x80000000, NetworkID: 21_338 })
    assert.equal(verifySignedTransaction(requested, blob).signerAddress, payer.classicAddress)
  })

  it('flags a key that does not derive the Account for a RegularKey check', () => {
    const regularKey = Wallet.generate()
    const { tx_blob: blob } = signed(regularKey, xrpPayment(payer.classicAddress))
    const verified = verifySignedTransaction(xrpPayment(), blob)
    assert.equal(verified.signerAddress, payer.classicAddress)
    assert.equal(verified.signingPubKey, regularKey.publicKey.toUpperCase())
    assert.equal(verified.requiresRegularKeyCheck, true)
  })

  it('accepts a blob multisigned by a secp256k1 and an Ed25519 signer', () => {
    const signers = [Wallet.generate(ECDSA.secp256k1), Wallet.generate(ECDSA.ed25519)]
    const requested = xrpPayment()
    const blobs = signers.map((signer) => signed(signer, { ...requested, SigningPubKey: '' }, true).tx_blob)
    const verified = verifySignedTransaction(requested, multisign(blobs))
    assert.equal(verified.multisigned, true)
    assert.equal(verified.signerAddress, payer.classicAddress)
    assert.equal(verified.signingPubKey, '')
    assert.deepEqual([...verified.signerAccounts].sort(), signers.map((signer) => signer.classicAddress).sort())
    assert.equal(verified.requiresRegularKeyCheck, false)
  })
})

describe('verifySignedTransaction: content the user did not ask for', () => {
  it('refuses a changed Amount, properly signed', () => {
    const { tx_blob: blob } = signed(payer, { ...xrpPayment(), Amount: '1500001' })
    const details = rejection(xrpPayment(), blob)
    assert.deepEqual(fields(details), ['signedTransaction.Amount'])
    assert.match(details[0]!.message, /differs from the requested value/)
  })

  it('refuses a changed issued-currency issuer', () => {
    const requested = { ...xrpPayment(), Amount: { currency: 'USD', issuer, value: '10' } }
    const { tx_blob: blob } = signed(payer, { ...requested, Amount: { currency: 'USD', issuer: destination, value: '10' } })
    assert.deepEqual(fields(rejection(requested, blob)), ['signedTransaction.Amount'])
  })

  it('refuses an added SendMax and names it', () => {
    const requested = { ...xrpPayment(), Amount: { currency: 'USD', issuer, value: '10' } }
    const { tx_blob: blob } = signed(payer, { ...requested, SendMax: '100000000' })
    const details = rejection(requested, blob)
    assert.deepEqual(details, [{ field: 'signedTransaction.SendMax', message: 'SendMax was not requested; a wallet may not add it' }])
  })

  it('refuses added Paths', () => {
    const requested = { ...xrpPayment(), Amount: { currency: 'USD', issuer, value: '10' } }
    const { tx_blob: blob } = signed(payer, { ...requested, Paths: [[{ account: issuer }]] })
    assert.deepEqual(fields(rejection(requested, blob)), ['signedTransaction.Paths'])
  })

  it('refuses the partial-payment flag and says so', () => {
    const { tx_blob: blob } = signed(payer, { ...xrpPayment(), Flags: 0x00020000 })
    const details = rejection(xrpPayment(), blob)
    assert.deepEqual(fields(details), ['signedTransaction.Flags'])
    assert.match(details[0]!.message, /tfPartialPayment/)
  })

  it('refuses a requested flag the wallet cleared (tfNoRippleDirect)', () => {
    const requested = { ...xrpPayment(), Amount: { currency: 'USD', issuer, value: '10' }, Flags: 0x00010000 }
    const { tx_blob: blob } = signed(payer, { ...requested, Flags: 0 })
    assert.deepEqual(fields(rejection(requested, blob)), ['signedTransaction.Flags'])
  })

  it('refuses a TicketSequence that was not requested', () => {
    const { tx_blob: blob } = signed(payer, { ...xrpPayment(), Sequence: 0, TicketSequence: 3 })
    assert.deepEqual(fields(rejection(xrpPayment(), blob)), ['signedTransaction.TicketSequence'])
  })

  it('refuses a missing requested field', () => {
    const { DestinationTag: _, ...withoutTag } = xrpPayment()
    const { tx_blob: blob } = signed(payer, withoutTag)
    const details = rejection(xrpPayment(), blob)
    assert.deepEqual(fields(details), ['signedTransaction.DestinationTag'])
    assert.match(details[0]!.message, /missing/)
  })

  it('refuses a different Account than the one requested', () => {
    const other = Wallet.generate()
    const { tx_blob: blob } = signed(other, xrpPayment(other.classicAddress))
    assert.deepEqual(fields(rejection(xrpPayment(), blob)), ['signedTransaction.Account'])
  })

  it('refuses a different transaction type', () => {
    const { tx_blob: blob } = signed(payer, { TransactionType: 'AccountSet', Account: payer.classicAddress })
    const details = fields(rejection(xrpPayment(), blob))
    assert.ok(details.includes('signedTransaction.TransactionType'))
  })
})

describe('verifySignedTransaction: signatures', () => {
  it('refuses a blob altered after signing (Amount changed, signature kept)', () => {
    const { tx_blob: blob } = signed(payer, xrpPayment())
    const altered = tamper(blob, (transaction) => {
      transaction.Amount = '9999999'
    })
    assert.deepEqual(fields(rejection({ ...xrpPayment(), Amount: '9999999' }, altered)), ['signedTransaction.TxnSignature'])
  })

  it('refuses a signature with one bit flipped, for both key types', () => {
    for (const wallet of [payer, edPayer]) {
      const { tx_blob: blob } = signed(wallet, xrpPayment(wallet.classicAddress))
      const flipped = tamper(blob, (transaction) => {
        const signature = transaction.TxnSignature as string
        const last = Number.parseInt(signature.slice(-2), 16) ^ 0x01
        transaction.TxnSignature = signature.slice(0, -2) + last.toString(16).padStart(2, '0').toUpperCase()
      })
      assert.deepEqual(fields(rejection(xrpPayment(wallet.classicAddress), flipped)), ['signedTransaction.TxnSignature'])
    }
  })

  it("refuses one wallet's SigningPubKey with another wallet's signature", () => {
    const impostor = Wallet.generate()
    const transaction = { ...walletFields, ...xrpPayment(), SigningPubKey: payer.publicKey }
    const signature = sign(encodeForSigning(transaction), impostor.privateKey)
    const blob = encode({ ...transaction, TxnSignature: signature })
    assert.deepEqual(fields(rejection(xrpPayment(), blob)), ['signedTransaction.TxnSignature'])
  })

  it('refuses a blob with no signature', () => {
    const blob = encode({ ...walletFields, ...xrpPayment(), SigningPubKey: payer.publicKey })
    assert.deepEqual(fields(rejection(xrpPayment(), blob)), ['signedTransaction.TxnSignature'])
  })

  it('refuses a SigningPubKey that is not a public key', () => {
    const transaction = { ...walletFields, ...xrpPayment(), SigningPubKey: '04ABCDEF' }
    const blob = encode({ ...transaction, TxnSignature: sign(encodeForSigning(transaction), payer.privateKey) })
    assert.deepEqual(fields(rejection(xrpPayment(), blob)), ['signedTransaction.SigningPubKey'])
  })

  it('refuses a multisigned blob with one signature altered', () => {
    const signers = [Wallet.generate(), Wallet.generate(ECDSA.ed25519)]
    const blobs = signers.map((signer) => signed(signer, { ...xrpPayment(), SigningPubKey: '' }, true).tx_blob)
    const altered = tamper(multisign(blobs), (transaction) => {
      const entries = transaction.Signers as Array<{ Signer: { TxnSignature: string } }>
      const signer = entries[1]!.Signer
      signer.TxnSignature = (signer.TxnSignature.startsWith('30') ? '31' : '30') + signer.TxnSignature.slice(2)
    })
    assert.deepEqual(fields(rejection(xrpPayment(), altered)), ['signedTransaction.Signers[1].TxnSignature'])
  })

  it('refuses a multisigner whose key does not derive its Account', () => {
    const signer = Wallet.generate()
    const other = Wallet.generate()
    const transaction = { ...walletFields, ...xrpPayment(), SigningPubKey: '' }
    const blob = encode({
      ...transaction,
      Signers: [{ Signer: { Account: other.classicAddress, SigningPubKey: signer.publicKey, TxnSignature: 'AB'.repeat(64) } }],
    })
    const details = rejection(xrpPayment(), blob)
    assert.deepEqual(fields(details), ['signedTransaction.Signers[0].SigningPubKey'])
    assert.match(details[0]!.message, /master key/)
  })

  it('refuses Signers next to a single signature', () => {
    const { tx_blob: blob } = signed(payer, xrpPayment())
    const signer = Wallet.generate()
    const mixed = tamper(blob, (transaction) => {
      transaction.Signers = [{ Signer: { Account: signer.classicAddress, SigningPubKey: signer.publicKey, TxnSignature: 'AB'.repeat(64) } }]
    })
    assert.deepEqual(fields(rejection(xrpPayment(), mixed)), ['signedTransaction.Signers'])
  })
})

describe('verifySignedTransaction: malformed blobs are 422, never a crash', () => {
  const { tx_blob: blob } = signed(payer, xrpPayment())
  const cases: Array<[string, unknown]> = [
    ['empty', ''],
    ['non-hex', 'ZZ'.repeat(20)],
    ['odd length', `${blob}A`],
    ['truncated', blob.slice(0, -10)],
    ['one byte', '12'],
    ['huge', 'AB'.repeat(70_000)],
    ['trailing bytes', `${blob}00`],
    ['not a string', 12_345],
    ['null', null],
    ['random bytes', 'DEADBEEF'.repeat(16)],
  ]
  for (const [name, input] of cases) {
    it(`refuses ${name} input`, () => {
      const details = rejection(xrpPayment(), input as string)
      assert.ok(details.every((detail) => detail.field.startsWith('signedTransaction')))
    })
  }
})
