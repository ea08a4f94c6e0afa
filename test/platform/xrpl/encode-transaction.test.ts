import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { classicAddressToXAddress } from 'ripple-address-codec'
import { encode } from 'ripple-binary-codec'
import { decode, multisign, type Payment, Wallet } from 'xrpl'
import { encodeTransaction, sameTransaction, TF_FULLY_CANONICAL_SIG } from '../../../src/platform/xrpl/encode-transaction.js'

// Fixed accounts, so that every run encodes the same transactions.
const alice = 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe'
const bob = 'rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpf'
const issuer = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh'
const USD = { currency: 'USD', issuer, value: '10.5' }

/** The codec's own answer: its encoding, or the message it throws. */
function codec(transaction: Record<string, unknown>): { encoded: string } | { thrown: string } {
  try {
    return { encoded: encode(transaction as Parameters<typeof encode>[0]) }
  } catch (error) {
    return { thrown: (error as Error).message }
  }
}

function ours(transaction: Record<string, unknown>): { encoded: string } | { thrown: string } {
  try {
    return { encoded: encodeTransaction(transaction) }
  } catch (error) {
    return { thrown: (error as Error).message }
  }
}

describe('encodeTransaction', () => {
  const cases: Record<string, Record<string, unknown>> = {
    'a Payment of XRP to a classic address': { TransactionType: 'Payment', Destination: bob, Amount: '1000000' },
    'a Payment with its Account and a Fee': { TransactionType: 'Payment', Account: alice, Destination: bob, Amount: '1', Fee: '12' },
    'an issued amount, its issuer a classic address': { TransactionType: 'Payment', Destination: bob, Amount: USD, SendMax: USD },
    'a trust line (LimitAmount)': { TransactionType: 'TrustSet', LimitAmount: { currency: 'EUR', issuer, value: '100' } },
    'an offer in both directions': { TransactionType: 'OfferCreate', TakerGets: '5000', TakerPays: USD },
    'an AMM deposit naming its assets (Issue fields)': {
      TransactionType: 'AMMDeposit',
      Asset: { currency: 'XRP' },
      Asset2: { currency: 'USD', issuer },
      Amount: '100',
      Flags: 0x00080000,
    },
    'a RegularKey (another AccountID field)': { TransactionType: 'SetRegularKey', RegularKey: alice },
    'a field named by its code (524289 is Account)': { TransactionType: 'Payment', 524289: alice, Destination: bob, Amount: '1' },
    'an MPT amount': { TransactionType: 'Payment', Destination: bob, Amount: { mpt_issuance_id: `${'0'.repeat(47)}1`, value: '5' } },
    'an MPT amount that also names an issuer': {
      TransactionType: 'Payment',
      Destination: bob,
      Amount: { mpt_issuance_id: `${'0'.repeat(47)}1`, value: '5', issuer },
    },
    'an issuer given as an X-address': {
      TransactionType: 'Payment',
      Destination: bob,
      Amount: { ...USD, issuer: classicAddressToXAddress(issuer, false, false) },
    },
    'an issuer given as lowercase hex': {
      TransactionType: 'Payment',
      Destination: bob,
      Amount: { ...USD, issuer: 'b5f762798a53d543a014caf8b297cff8f2f937e8' },
    },
    'an empty Destination': { TransactionType: 'Payment', Destination: '', Amount: '1' },
    'an amount whose issuer is not its own enumerable field': {
      TransactionType: 'Payment',
      Destination: bob,
      Amount: Object.defineProperty({ currency: 'USD', value: '1' }, 'issuer', { value: issuer, enumerable: false }),
    },
    'a Destination inherited, not its own': Object.assign(Object.create({ Destination: bob }), { TransactionType: 'Payment', Amount: '1' }),
    'a Destination as an X-address with a tag': {
      TransactionType: 'Payment',
      Destination: classicAddressToXAddress(bob, 7, false),
      Amount: '1',
    },
    'an X-address with a tag where no tag may go': {
      TransactionType: 'SetRegularKey',
      RegularKey: classicAddressToXAddress(alice, 3, false),
    },
    'a Destination whose checksum is wrong': {
      TransactionType: 'Payment',
      Destination: `${bob.slice(0, -1)}${bob.endsWith('a') ? 'b' : 'a'}`,
      Amount: '1',
    },
    'a Destination that is not an address': { TransactionType: 'Payment', Destination: 'rnot-an-address', Amount: '1' },
    'a Destination that is a number': { TransactionType: 'Payment', Destination: 42, Amount: '1' },
    'an issuer that is not an address': { TransactionType: 'Payment', Destination: bob, Amount: { ...USD, issuer: 'r123' } },
    'an account already given as hex': { TransactionType: 'Payment', Destination: 'B5F762798A53D543A014CAF8B297CFF8F2F937E8', Amount: '1' },
    'an unknown field': { TransactionType: 'Payment', Destination: bob, Amount: '1', NotAField: alice },
    'field names that are object properties': { TransactionType: 'Payment', Destination: bob, Amount: '1', toString: alice },
    'a Memo beside the accounts': {
      TransactionType: 'Payment',
      Destination: bob,
      Amount: '1',
      Memos: [{ Memo: { MemoData: 'ABCD', MemoType: '74657374' } }],
    },
  }

  for (const [name, transaction] of Object.entries(cases)) {
    it(`encodes ${name} as the codec does, or refuses it with the codec's message`, () => {
      const before = structuredClone(transaction)
      assert.deepEqual(ours(transaction), codec(transaction))
      assert.deepEqual(transaction, before, 'the transaction given is not changed')
    })
  }

  it('gives stack traces back to the process after an encoding and after a refusal', () => {
    const limit = Error.stackTraceLimit
    encodeTransaction(cases['a Payment of XRP to a classic address'] as Record<string, unknown>)
    assert.equal(Error.stackTraceLimit, limit)
    assert.throws(() => encodeTransaction({ TransactionType: 'Payment', Destination: 'rnot-an-address', Amount: '1' }))
    assert.equal(Error.stackTraceLimit, limit)
    assert.ok((new Error('after').stack ?? '').includes('encode-transaction.test'), 'errors carry their stacks again')
  })
})

describe('sameTransaction', () => {
  const account = Wallet.generate()
  const unsigned: Payment = {
    TransactionType: 'Payment',
    Account: account.classicAddress,
    Destination: bob,
    Amount: '1000000',
    Fee: '12',
    Sequence: 3,
    LastLedgerSequence: 1020,
  }
  /** The payment multisigned by `signers`, as a multisigned account's signers gather it. */
  const multisigned = (signers: Wallet[]) =>
    decode(multisign(signers.map((signer) => signer.sign({ ...unsigned, SigningPubKey: '' }, true).tx_blob)))

  it('is the same transaction whoever signed it: another key of the account, another set of signers', () => {
    const [alice, bob, carol] = [Wallet.generate(), Wallet.generate(), Wallet.generate()]
    const bySelf = decode(account.sign(unsigned).tx_blob)
    assert.equal(sameTransaction(bySelf, decode(Wallet.generate().sign(unsigned).tx_blob)), true)
    assert.equal(sameTransaction(multisigned([alice, bob]), multisigned([bob, carol])), true)
    assert.equal(sameTransaction(bySelf, multisigned([alice, bob])), true)
    const canonical = decode(account.sign({ ...unsigned, Flags: TF_FULLY_CANONICAL_SIG }).tx_blob)
    assert.equal(sameTransaction(bySelf, canonical), true, 'tfFullyCanonicalSig, which a wallet may add, changes nothing')
    const partial = decode(account.sign({ ...unsigned, Flags: (TF_FULLY_CANONICAL_SIG | 0x00020000) >>> 0 }).tx_blob)
    assert.equal(sameTransaction(canonical, partial), false, 'tfPartialPayment does')
  })

  it('is another transaction when any field the signer approved differs', () => {
    const bySelf = decode(account.sign(unsigned).tx_blob)
    for (const change of [{ Fee: '13' }, { Sequence: 4 }, { LastLedgerSequence: 1021 }, { Amount: '1000001' }, { DestinationTag: 1 }]) {
      assert.equal(sameTransaction(bySelf, decode(account.sign({ ...unsigned, ...change }).tx_blob)), false, JSON.stringify(change))
    }
  })

  it('is never the same for a transaction that does not encode', () => {
    const unknown = { ...unsigned, TransactionType: 'NotYetKnown' }
    assert.equal(sameTransaction(unknown, unknown), false)
  })
})
