import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { classicAddressToXAddress } from 'ripple-address-codec'
import { encode } from 'ripple-binary-codec'
import { encodeTransaction } from '../../../src/platform/xrpl/encode-transaction.js'

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
