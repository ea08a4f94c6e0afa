import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { deflateSync, gzipSync } from 'node:zlib'
import { classicAddressToXAddress } from 'ripple-address-codec'
import { forEachDatabase } from '../../support/databases.js'
import { DESTINATION, paymentTransaction } from '../../support/fixtures.js'
import { bearer, startTestService, type TestService } from '../../support/service.js'

/** The genesis account, as an account that signs. */
const ACCOUNT = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh'
/** A deposit of XRP into an XRP/USD pool, valid as it is. */
const AMM_DEPOSIT = {
  TransactionType: 'AMMDeposit',
  Account: ACCOUNT,
  Asset: { currency: 'XRP' },
  Asset2: { currency: 'USD', issuer: DESTINATION },
  Amount: '1000',
  Flags: 0x00080000,
}
/** An oracle's update of one price. */
const oracleSet = (PriceData: Record<string, unknown>) => ({
  TransactionType: 'OracleSet',
  OracleDocumentID: 1,
  LastUpdateTime: 1,
  PriceDataSeries: [{ PriceData }],
})
/** A claim id on an XRP-to-XRP bridge, valid as it is. */
const CLAIM_ID = {
  TransactionType: 'XChainCreateClaimID',
  SignatureReward: '100',
  OtherChainSource: DESTINATION,
  XChainBridge: {
    LockingChainDoor: ACCOUNT,
    LockingChainIssue: { currency: 'XRP' },
    IssuingChainDoor: DESTINATION,
    IssuingChainIssue: { currency: 'XRP' },
  },
}
/** DESTINATION with tag 7, as an X-address on the main network. */
const TAGGED_X_ADDRESS = classicAddressToXAddress(DESTINATION, 7, false)

forEachDatabase('payload API, bad input', (dialect) => {
  let t: TestService
  let free: string
  let pro: string
  before(async () => {
    t = await startTestService(dialect, {
      env: { LIMITS_FREE: '{"requestsPerMinute": 100000}', LIMITS_PRO: '{"requestsPerMinute": 100000}' },
    })
    free = (await t.createProject('free')).apiKey
    pro = (await t.createProject('pro')).apiKey
  })
  after(() => t.stop())

  const payloadCount = async () =>
    Number(
      (
        await t.service.ctx.storage.db
          .selectFrom('payloads')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )

  /** Sends a request that must be refused, and checks that it changed nothing. */
  async function refused(request: {
    method?: 'POST' | 'GET' | 'DELETE'
    url?: string
    key?: string
    headers?: Record<string, string>
    payload?: unknown
  }) {
    const before = await payloadCount()
    const response = await t.inject({
      method: request.method ?? 'POST',
      url: request.url ?? '/api/v1/payloads',
      headers: { ...bearer(request.key ?? pro), ...request.headers },
      payload: request.payload as string,
    })
    assert.equal(await payloadCount(), before, 'a refused request must not change state')
    assert.ok(response.statusCode >= 400 && response.statusCode < 500, `expected a 4xx, got ${response.statusCode}: ${response.body}`)
    assert.match(response.headers['content-type'] as string, /^application\/json/)
    return { status: response.statusCode, body: response.json() as { error: string; details?: { field: string; message: string }[] } }
  }

  const fieldsOf = (body: { details?: { field: string }[] }) => (body.details ?? []).map((d) => d.field)

  describe('body format', () => {
    it('malformed JSON is 400', async () => {
      const { status, body } = await refused({ headers: { 'content-type': 'application/json' }, payload: '{"type": "connect",' })
      assert.equal(status, 400)
      assert.equal(body.error, 'Request body is not valid JSON')
    })
    it('a body that is not an object is 400', async () => {
      for (const payload of ['[]', '"connect"', '42', 'null']) {
        const { status, body } = await refused({ headers: { 'content-type': 'application/json' }, payload })
        assert.equal(status, 400, payload)
        assert.equal(body.error, 'Request body must be a JSON object')
      }
    })
    it('a wrong content type is 415', async () => {
      const { status, body } = await refused({ headers: { 'content-type': 'text/plain' }, payload: '{"type":"connect"}' })
      assert.equal(status, 415)
      assert.match(body.error, /application\/json/)
    })
    it('a compressed body is 415, and a plain one labelled compressed is not taken as it is', async () => {
      const json = '{"type":"connect"}'
      for (const [encoding, payload] of [
        ['gzip', gzipSync(json)],
        ['deflate', deflateSync(json)],
        ['gzip', json],
      ] as const) {
        const { status, body } = await refused({
          headers: { 'content-type': 'application/json', 'content-encoding': encoding },
          payload: payload as unknown as string,
        })
        assert.equal(status, 415, `${encoding}: ${JSON.stringify(body)}`)
        assert.match(body.error, /Content-Encoding/)
      }
      const identity = await t.inject({
        method: 'POST',
        url: '/api/v1/payloads',
        headers: { ...bearer(pro), 'content-type': 'application/json', 'content-encoding': 'identity' },
        payload: json,
      })
      assert.equal(identity.statusCode, 201, identity.body)
    })
    it('a huge body is 413 and names the limit', async () => {
      const { status, body } = await refused({ payload: { type: 'signMessage', message: 'x'.repeat(100_000) } })
      assert.equal(status, 413)
      assert.match(body.error, /65536 bytes/)
    })
    it('prototype pollution attempts are 400', async () => {
      const { status } = await refused({
        headers: { 'content-type': 'application/json' },
        payload: '{"type":"connect","__proto__":{"x":1}}',
      })
      assert.equal(status, 400)
    })
    it('unknown fields are 422 and named', async () => {
      const { status, body } = await refused({ payload: { type: 'connect', expiresIn: 60, options: { expires_in: 60 } } })
      assert.equal(status, 422)
      assert.deepEqual(fieldsOf(body).sort(), ['expiresIn', 'options.expires_in'])
    })
  })

  describe('the rules of docs/interface.md §4 and §8', () => {
    const cases: [string, unknown, string, string?][] = [
      ['missing type', {}, 'type'],
      ['unknown type', { type: 'pay' }, 'type'],
      ['sign without transaction', { type: 'sign' }, 'transaction'],
      ['signAndSubmit without transaction', { type: 'signAndSubmit' }, 'transaction'],
      ['transaction that is not an object', { type: 'sign', transaction: 'Payment' }, 'transaction'],
      ['transaction without TransactionType', { type: 'sign', transaction: { Amount: '1' } }, 'transaction.TransactionType'],
      ['unknown TransactionType', { type: 'sign', transaction: { TransactionType: 'Teleport' } }, 'transaction.TransactionType'],
      ['Amount as a number', { type: 'sign', transaction: { ...paymentTransaction(), Amount: 1000 } }, 'transaction.Amount'],
      ['TxnSignature set', { type: 'sign', transaction: { ...paymentTransaction(), TxnSignature: 'AB' } }, 'transaction.TxnSignature'],
      [
        'SigningPubKey with a value',
        { type: 'sign', transaction: { ...paymentTransaction(), SigningPubKey: '02AB' } },
        'transaction.SigningPubKey',
      ],
      ['Signers set', { type: 'sign', transaction: { ...paymentTransaction(), Signers: [] } }, 'transaction.Signers'],
      ['a field the codec does not know', { type: 'sign', transaction: { ...paymentTransaction(), Colour: 'red' } }, 'transaction.Colour'],
      // The codec takes these, so that no wallet's signed transaction could ever match the request: each is refused at creation.
      ['Flags as a string', { type: 'sign', transaction: { ...paymentTransaction(), Flags: 'x' } }, 'transaction.Flags'],
      ['Flags as a string of digits', { type: 'sign', transaction: { ...paymentTransaction(), Flags: '5' } }, 'transaction.Flags'],
      ['a field named toString', { type: 'sign', transaction: { ...paymentTransaction(), toString: 'x' } }, 'transaction.toString'],
      [
        'a memo field named valueOf',
        { type: 'sign', transaction: { ...paymentTransaction(), Memos: [{ Memo: { MemoData: 'AA', valueOf: 'x' } }] } },
        'transaction.Memos.0.Memo.valueOf',
      ],
      ['XRP drops in hex', { type: 'sign', transaction: { ...paymentTransaction(), Amount: '0x10' } }, 'transaction.Amount'],
      ['XRP drops with a sign', { type: 'sign', transaction: { ...paymentTransaction(), Amount: '+10' } }, 'transaction.Amount'],
      ['XRP drops with a space', { type: 'sign', transaction: { ...paymentTransaction(), Amount: ' 10' } }, 'transaction.Amount'],
      ['a Fee in hex', { type: 'sign', transaction: { ...paymentTransaction(), Fee: '0x10' } }, 'transaction.Fee'],
      ['a Sequence of letters', { type: 'sign', transaction: { ...paymentTransaction(), Sequence: 'abc' } }, 'transaction.Sequence'],
      ['a Sequence in hex', { type: 'sign', transaction: { ...paymentTransaction(), Sequence: '0x10' } }, 'transaction.Sequence'],
      [
        'a DestinationTag with a fraction',
        { type: 'sign', transaction: { ...paymentTransaction(), DestinationTag: 1.5 } },
        'transaction.DestinationTag',
      ],
      [
        'a signer weight as a string, in a list of signers',
        {
          type: 'sign',
          transaction: {
            TransactionType: 'SignerListSet',
            Account: ACCOUNT,
            SignerQuorum: 1,
            SignerEntries: [{ SignerEntry: { Account: DESTINATION, SignerWeight: 'one' } }],
          },
        },
        'transaction.SignerEntries.0.SignerEntry.SignerWeight',
      ],
      [
        'an X-address with a tag as Destination',
        { type: 'sign', transaction: { ...paymentTransaction(), Destination: TAGGED_X_ADDRESS } },
        'transaction.Destination',
      ],
      [
        'an X-address with a tag as Account',
        { type: 'sign', transaction: { ...paymentTransaction(), Account: TAGGED_X_ADDRESS } },
        'transaction.Account',
      ],
      [
        'an issued amount in XRP',
        { type: 'sign', transaction: { ...paymentTransaction({ currency: 'XRP', issuer: DESTINATION, value: '1' }) } },
        'transaction.Amount',
      ],
      ...['EnableAmendment', 'SetFee', 'UNLModify', 'Invalid'].map((TransactionType): [string, unknown, string] => [
        `the pseudo-transaction ${TransactionType}`,
        { type: 'sign', transaction: { TransactionType, Account: ACCOUNT } },
        'transaction.TransactionType',
      ]),
      [
        'an amount field beyond the common ones in hex',
        { type: 'sign', transaction: { ...AMM_DEPOSIT, Amount: '1000', Amount2: '0x10' } },
        'transaction.Amount2',
      ],
      [
        'an issued value in hex',
        { type: 'sign', transaction: paymentTransaction({ currency: 'USD', issuer: DESTINATION, value: '0x10' }) },
        'transaction.Amount',
      ],
      [
        'an issued amount with a field the codec would leave out',
        { type: 'sign', transaction: paymentTransaction({ currency: 'USD', issuer: DESTINATION, value: '1', note: 'x' }) },
        'transaction.Amount',
      ],
      [
        'a memo of odd-length hex',
        { type: 'sign', transaction: { ...paymentTransaction(), Memos: [{ Memo: { MemoData: 'abc' } }] } },
        'transaction.Memos.0.Memo.MemoData',
      ],
      ['a Domain of odd-length hex', { type: 'sign', transaction: { TransactionType: 'AccountSet', Domain: 'abc' } }, 'transaction.Domain'],
      [
        'a hash one digit too long',
        { type: 'sign', transaction: { ...paymentTransaction(), InvoiceID: `${'AB'.repeat(32)}C` } },
        'transaction.InvoiceID',
      ],
      [
        'a field name in lower case',
        { type: 'sign', transaction: { ...paymentTransaction(), destinationTag: 42 } },
        'transaction.destinationTag',
      ],
      [
        'a memo field name in lower case',
        { type: 'sign', transaction: { ...paymentTransaction(), Memos: [{ Memo: { memoType: 'AA' } }] } },
        'transaction.Memos.0.Memo.memoType',
      ],
      ['a field by its number', { type: 'sign', transaction: { ...paymentTransaction(), 65537: 1 } }, 'transaction.65537'],
      ['a field the codec does not write', { type: 'sign', transaction: { ...paymentTransaction(), hash: 'AB' } }, 'transaction.hash'],
      [
        'a memo not wrapped in {Memo}',
        { type: 'sign', transaction: { ...paymentTransaction(), Memos: [{ MemoData: 'AA' }] } },
        'transaction.Memos.0',
      ],
      [
        'a TransactionType by its number',
        { type: 'sign', transaction: { ...paymentTransaction(), TransactionType: '20' } },
        'transaction.TransactionType',
      ],
      [
        'an asset in XRP with an issuer',
        { type: 'sign', transaction: { ...AMM_DEPOSIT, Asset: { currency: 'XRP', issuer: DESTINATION } } },
        'transaction.Asset',
      ],
      [
        'an issued asset without its issuer',
        { type: 'sign', transaction: { ...AMM_DEPOSIT, Asset2: { currency: 'USD' } } },
        'transaction.Asset2',
      ],
      [
        'Flags as a string of digits, which approval compares as a number',
        { type: 'sign', transaction: { ...paymentTransaction(), Flags: '131072' } },
        'transaction.Flags',
      ],
      [
        'an XRP delta in hex',
        { type: 'sign', transaction: { TransactionType: 'SponsorshipSet', Sponsee: DESTINATION, FeeAmountDelta: '-0x10' } },
        'transaction.FeeAmountDelta',
      ],
      [
        'DeliverMax, which API v2 shows for Amount',
        { type: 'sign', transaction: { ...paymentTransaction(), DeliverMax: '1000000' } },
        'transaction.DeliverMax',
      ],
      // Each of these the codec signed otherwise than the signing page showed it.
      [
        'an empty Destination, signed as the all-zero account',
        { type: 'sign', transaction: { ...paymentTransaction(), Destination: '' } },
        'transaction.Destination',
      ],
      [
        'an empty issuer, signed as the all-zero account',
        { type: 'sign', transaction: paymentTransaction({ currency: 'USD', issuer: '', value: '1' }) },
        'transaction.Amount',
      ],
      [
        'an X-address with a tag inside an array, signed with a tag field of its own',
        { type: 'sign', transaction: { ...paymentTransaction(), Destination: [TAGGED_X_ADDRESS] } },
        'transaction.Destination',
      ],
      ...(['\u0155SD', 'U\u0405D', '\u0158RP'] as const).map((currency): [string, unknown, string] => [
        `the currency code ${JSON.stringify(currency)}, signed as the low byte of each character`,
        { type: 'sign', transaction: paymentTransaction({ currency, issuer: DESTINATION, value: '1' }) },
        'transaction.Amount',
      ]),
      [
        'an asset whose currency code has a wide character',
        { type: 'sign', transaction: { ...AMM_DEPOSIT, Asset2: { currency: '\u0155SD', issuer: DESTINATION } } },
        'transaction.Asset2',
      ],
      [
        'an oracle price whose base asset has a wide character',
        {
          type: 'sign',
          transaction: oracleSet({ BaseAsset: 'X\u0452P', QuoteAsset: 'USD', AssetPrice: 740, Scale: 3 }),
        },
        'transaction.PriceDataSeries.0.PriceData.BaseAsset',
      ],
      [
        'an MPT amount past 2^63, which the codec cuts off at 64 bits',
        { type: 'sign', transaction: paymentTransaction({ mpt_issuance_id: '00'.repeat(24), value: '18446744073709551617' }) },
        'transaction.Amount',
      ],
      [
        'a 64-bit field as a JSON number past 2^53',
        { type: 'sign', transaction: { TransactionType: 'MPTokenIssuanceCreate', MaximumAmount: 1e30 } },
        'transaction.MaximumAmount',
      ],
      [
        'an issued value whose exponent the ledger cannot hold, signed as 0',
        { type: 'sign', transaction: paymentTransaction({ currency: 'USD', issuer: DESTINATION, value: '1e-9999999999' }) },
        'transaction.Amount',
      ],
      [
        'a Number of more digits than the codec keeps',
        {
          type: 'sign',
          transaction: { TransactionType: 'LoanSet', LoanBrokerID: '00'.repeat(32), PrincipalRequested: '1.23456789012345678901234567' },
        },
        'transaction.PrincipalRequested',
      ],
      [
        'a path hop with a key the codec leaves out',
        {
          type: 'sign',
          transaction: {
            ...paymentTransaction({ currency: 'USD', issuer: DESTINATION, value: '1' }),
            SendMax: '1000',
            Paths: [[{ currency: 'EUR', issuer: DESTINATION, limit: '5' }]],
          },
        },
        'transaction.Paths',
      ],
      [
        'a bridge asset without its issuer',
        { type: 'sign', transaction: { ...CLAIM_ID, XChainBridge: { ...CLAIM_ID.XChainBridge, LockingChainIssue: { currency: 'USD' } } } },
        'transaction.XChainBridge',
      ],
      [
        'a permission by its number, signed as Invalid',
        {
          type: 'sign',
          transaction: { TransactionType: 'DelegateSet', Authorize: DESTINATION, Permissions: [{ Permission: { PermissionValue: '0' } }] },
        },
        'transaction.Permissions.0.Permission.PermissionValue',
      ],
      ['an invalid address', { type: 'sign', transaction: { ...paymentTransaction(), Destination: 'nobody' } }, 'transaction.Destination'],
      ['transaction on connect', { type: 'connect', transaction: paymentTransaction() }, 'transaction'],
      ['signMessage without message', { type: 'signMessage' }, 'message'],
      ['empty message', { type: 'signMessage', message: '' }, 'message'],
      ['message with NUL', { type: 'signMessage', message: 'hello\u0000world' }, 'message'],
      ['message over 4 KiB', { type: 'signMessage', message: 'é'.repeat(2049) }, 'message'],
      ['message that is not a string', { type: 'signMessage', message: 42 }, 'message'],
      ['message on sign', { type: 'connect', message: 'hi' }, 'message'],
      ['expiresIn zero', { type: 'connect', options: { expiresIn: 0 } }, 'options.expiresIn'],
      ['expiresIn fractional', { type: 'connect', options: { expiresIn: 1.5 } }, 'options.expiresIn'],
      ['expiresIn as a string', { type: 'connect', options: { expiresIn: '60' } }, 'options.expiresIn'],
      ['expiresIn above the Pro maximum', { type: 'connect', options: { expiresIn: 86401 } }, 'options.expiresIn'],
      ['returnUrl not a URL', { type: 'connect', options: { returnUrl: 'shop/done' } }, 'options.returnUrl'],
      ['returnUrl javascript:', { type: 'connect', options: { returnUrl: 'javascript:alert(1)' } }, 'options.returnUrl'],
      [
        'customInstructions over 200 characters',
        { type: 'connect', options: { customInstructions: 'x'.repeat(201) } },
        'options.customInstructions',
      ],
      ['options not an object', { type: 'connect', options: 'fast' }, 'options'],
    ]
    for (const [name, payload, field] of cases) {
      it(`${name} is 422 naming ${field}`, async () => {
        const { status, body } = await refused({ payload })
        assert.equal(status, 422)
        assert.equal(body.error, 'Validation failed')
        assert.ok(fieldsOf(body).includes(field), `details ${JSON.stringify(body.details)} should name ${field}`)
        for (const detail of body.details ?? []) assert.ok(detail.message.length > 0)
      })
    }

    it('a transaction the codec trips on is 422 without the codec’s internals', async () => {
      for (const transaction of [
        { ...paymentTransaction(), LedgerEntryType: null },
        { ...paymentTransaction(), LedgerEntryType: 'x' },
      ]) {
        const { status, body } = await refused({ payload: { type: 'sign', transaction } })
        assert.equal(status, 422)
        assert.deepEqual(body.details, [
          { field: 'transaction', message: 'cannot be encoded as an XRP Ledger transaction: a field holds a value the codec cannot take' },
        ])
      }
    })

    it('transactions of other shapes are taken: an AMM deposit, an MPT amount, memos and a domain in hex of either case', async () => {
      for (const transaction of [
        AMM_DEPOSIT,
        { ...AMM_DEPOSIT, Asset2: { mpt_issuance_id: '00'.repeat(24) }, Amount2: { mpt_issuance_id: '00'.repeat(24), value: '100' } },
        paymentTransaction({ mpt_issuance_id: `${'0A'.repeat(23)}ff`, value: '5' }),
        paymentTransaction({ currency: 'USD', issuer: DESTINATION, value: '-1.5e-3' }),
        { ...paymentTransaction(), Memos: [{ Memo: { MemoType: '6f72646572', MemoData: '' } }], InvoiceID: 'ab'.repeat(32) },
        { TransactionType: 'AccountSet', Domain: '6578616D706C652E636F6D', SetFlag: 8 },
        // xrpl.js types OfferSequence as number | string: decimal digits are the same integer to the codec.
        { TransactionType: 'EscrowFinish', Owner: DESTINATION, OfferSequence: '7' },
        // Paths as path_find gives them (type and type_hex included), 64-bit fields, an oracle's prices, a bridge.
        {
          ...paymentTransaction({ currency: 'USD', issuer: DESTINATION, value: '1' }),
          SendMax: '1000',
          Paths: [[{ currency: 'USD', issuer: DESTINATION, type: 48, type_hex: '0000000000000030' }], [{ account: ACCOUNT }]],
        },
        { TransactionType: 'MPTokenIssuanceCreate', MaximumAmount: '9223372036854775807', AssetScale: 2 },
        oracleSet({ BaseAsset: 'XRP', QuoteAsset: 'USD', AssetPrice: 740, Scale: 3 }),
        CLAIM_ID,
        // An XRP delta, which may be negative, and an asset's issuer as an X-address without a tag.
        { TransactionType: 'SponsorshipSet', Sponsee: DESTINATION, FeeAmountDelta: '-500000', RemainingOwnerCountDelta: -2 },
        { ...AMM_DEPOSIT, Asset2: { currency: 'USD', issuer: classicAddressToXAddress(DESTINATION, false, false) } },
        {
          TransactionType: 'SignerListSet',
          SignerQuorum: 2,
          SignerEntries: [{ SignerEntry: { Account: DESTINATION, SignerWeight: 2 } }],
        },
      ]) {
        const response = await t.inject({
          method: 'POST',
          url: '/api/v1/payloads',
          headers: bearer(pro),
          payload: { type: 'sign', transaction },
        })
        assert.equal(response.statusCode, 201, `${JSON.stringify(transaction)}: ${response.body}`)
      }
    })

    it('a transaction with thousands of problems lists its first 50, in an answer of a few kilobytes', async () => {
      const Memos = Array.from({ length: 2000 }, () => ({ Memo: { MemoType: 'abc' } }))
      const { status, body } = await refused({ payload: { type: 'sign', transaction: { ...paymentTransaction(), Memos } } })
      assert.equal(status, 422)
      assert.equal(body.details?.length, 50)
      assert.ok(JSON.stringify(body).length < 10_000, `${JSON.stringify(body).length} characters`)
    })

    it('an X-address with a tag is refused with its classic address and tag named; one without a tag is taken', async () => {
      const { body } = await refused({ payload: { type: 'sign', transaction: { ...paymentTransaction(), Destination: TAGGED_X_ADDRESS } } })
      assert.deepEqual(body.details, [
        {
          field: 'transaction.Destination',
          message: `must not be an X-address with a tag: give the classic address ${DESTINATION}, and 7 as DestinationTag`,
        },
      ])
      const untagged = classicAddressToXAddress(DESTINATION, false, false)
      const response = await t.inject({
        method: 'POST',
        url: '/api/v1/payloads',
        headers: bearer(pro),
        payload: { type: 'sign', transaction: { ...paymentTransaction(), Destination: untagged, Sequence: 12, DestinationTag: 7 } },
      })
      assert.equal(response.statusCode, 201, response.body)
    })

    it("expiresIn above the Free plan's 300 s is 422 with the plan named", async () => {
      const { status, body } = await refused({ key: free, payload: { type: 'connect', options: { expiresIn: 301 } } })
      assert.equal(status, 422)
      assert.deepEqual(body.details, [{ field: 'options.expiresIn', message: 'must be at most 300 seconds on the Free plan' }])
    })

    it('200 customInstructions characters (astral ones count once) and a 4096-byte message are accepted', async () => {
      const ok1 = await t.inject({
        method: 'POST',
        url: '/api/v1/payloads',
        headers: bearer(pro),
        payload: { type: 'connect', options: { customInstructions: '😀'.repeat(200) } },
      })
      assert.equal(ok1.statusCode, 201, ok1.body)
      const ok2 = await t.inject({
        method: 'POST',
        url: '/api/v1/payloads',
        headers: bearer(pro),
        payload: { type: 'signMessage', message: 'é'.repeat(2048) },
      })
      assert.equal(ok2.statusCode, 201, ok2.body)
    })
  })

  describe('paths and query strings', () => {
    it('a non-UUID path id is 404 Payload not found', async () => {
      for (const method of ['GET', 'DELETE'] as const) {
        const { status, body } = await refused({ method, url: '/api/v1/payloads/not-a-uuid' })
        assert.equal(status, 404)
        assert.deepEqual(body, { error: 'Payload not found' })
      }
    })
    it('an unknown payload is 404 Payload not found', async () => {
      const { status, body } = await refused({ method: 'GET', url: '/api/v1/payloads/6f1c2a4e-9b7d-4c3e-8f0a-1b2c3d4e5f60' })
      assert.equal(status, 404)
      assert.deepEqual(body, { error: 'Payload not found' })
    })
    it("says a schema's bounds and types as sentences with the limit, not in the validator's words", async () => {
      const bad: [object, string, string][] = [
        [
          { type: 'connect', options: { customInstructions: 'x'.repeat(201) } },
          'options.customInstructions',
          'must be at most 200 characters',
        ],
        [{ type: 'connect', options: { expiresIn: 0 } }, 'options.expiresIn', 'must be at least 1'],
        [{ type: 'connect', options: { expiresIn: '60' } }, 'options.expiresIn', 'must be an integer'],
        [{ type: 'connect', options: { signers: [] } }, 'options.signers', 'must list at least 1 item'],
        [{ type: 'connect', options: { signers: Array.from({ length: 9 }, () => 'r') } }, 'options.signers', 'must list at most 8 items'],
      ]
      for (const [payload, field, message] of bad) {
        const { status, body } = await refused({ payload })
        assert.equal(status, 422)
        assert.deepEqual(
          body.details?.filter((detail: { field: string }) => detail.field === field),
          [{ field, message }],
        )
      }
      const limit = await refused({ method: 'GET', url: '/api/v1/payloads?limit=101' })
      assert.deepEqual(limit.body.details, [{ field: 'limit', message: 'must be at most 100' }])
    })

    it('list bounds: limit above 100 or below 1, a negative offset, a number not in decimal digits, unknown parameters are 422 with details', async () => {
      const bad: [string, string][] = [
        ['limit=101', 'limit'],
        ['limit=0', 'limit'],
        ['limit=abc', 'limit'],
        // Number() would read each of these as another number, which a mistyped query would then get.
        ['limit=0x10', 'limit'],
        ['limit=1e2', 'limit'],
        ['limit=%205', 'limit'],
        ['limit=5.0', 'limit'],
        ['offset=%2B1', 'offset'],
        ['offset=0b1', 'offset'],
        ['offset=-1', 'offset'],
        ['status=done', 'status'],
        ['page=2', 'page'],
      ]
      for (const [query, field] of bad) {
        const { status, body } = await refused({ method: 'GET', url: `/api/v1/payloads?${query}` })
        assert.equal(status, 422, query)
        assert.ok(fieldsOf(body).includes(field), `${query}: ${JSON.stringify(body)}`)
      }
    })
    it('unknown query parameters on other endpoints are 422', async () => {
      const { status, body } = await refused({ url: '/api/v1/payloads?debug=1', payload: { type: 'connect' } })
      assert.equal(status, 422)
      assert.deepEqual(fieldsOf(body), ['debug'])
    })
    it('unknown routes are JSON 404', async () => {
      const { status, body } = await refused({ method: 'GET', url: '/api/v1/nothing-here' })
      assert.equal(status, 404)
      assert.equal(body.error, 'Route not found: GET /api/v1/nothing-here')
    })
    it('a wrong method on a known path is a JSON 404', async () => {
      const { status } = await refused({ method: 'DELETE', url: '/api/v1/payloads' })
      assert.equal(status, 404)
    })
  })
})
