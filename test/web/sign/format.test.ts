import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  describeAmount,
  describeCurrency,
  describeFlags,
  describeOffer,
  describePayment,
  dropsToXrp,
  expiredHeadline,
  fieldLabel,
  formatRemaining,
  hasDeceptiveCharacters,
  hexToText,
  transactionConsequence,
} from '../../../src/web/sign/format.js'

describe('dropsToXrp', () => {
  it('shows XRP with up to six decimals, exactly', () => {
    assert.equal(dropsToXrp('1500000'), '1.5')
    assert.equal(dropsToXrp('12'), '0.000012')
    assert.equal(dropsToXrp('1'), '0.000001')
    assert.equal(dropsToXrp('0'), '0')
    assert.equal(dropsToXrp('100000000000000000'), '100,000,000,000')
    assert.equal(dropsToXrp('1000000123456'), '1,000,000.123456')
  })

  it('refuses what is not a whole number of drops', () => {
    assert.equal(dropsToXrp('1.5'), null)
    assert.equal(dropsToXrp('-1'), null)
    assert.equal(dropsToXrp(''), null)
    assert.equal(dropsToXrp('1e6'), null)
  })
})

describe('describeCurrency', () => {
  it('keeps three-letter codes', () => {
    assert.deepEqual(describeCurrency('USD'), { text: 'USD' })
  })

  it('decodes a printable 40-hex code and keeps the hex beside it', () => {
    assert.deepEqual(describeCurrency('534f4c4f00000000000000000000000000000000'), {
      text: 'SOLO',
      hex: '534F4C4F00000000000000000000000000000000',
    })
  })

  it('reads the standard layout, where the ISO code sits in bytes 12 to 14', () => {
    assert.deepEqual(describeCurrency('0000000000000000000000005553440000000000'), {
      text: 'USD',
      hex: '0000000000000000000000005553440000000000',
    })
  })

  it('shows binary codes (such as AMM LP tokens) as hex only', () => {
    const lpToken = '03B2FE3E2F2B6C8D0D2C2E86E2A9D7E6C0B1A2F3'
    assert.deepEqual(describeCurrency(lpToken), { text: lpToken })
  })
})

describe('describeAmount', () => {
  it('describes XRP, issued currencies and MPTs', () => {
    assert.deepEqual(describeAmount('2500000'), { headline: '2.5 XRP', details: [] })
    assert.deepEqual(describeAmount({ currency: 'USD', issuer: 'rvYAfWj5gh67oV6fW32ZzP3Aw4Eubs59B', value: '1.50' }), {
      headline: '1.50 USD',
      details: [['Issuer', 'rvYAfWj5gh67oV6fW32ZzP3Aw4Eubs59B']],
    })
    assert.deepEqual(describeAmount({ mpt_issuance_id: '00000001A407AF5856CCF3C42619DAA925813FC955C72983', value: '100' }), {
      headline: '100 (multi-purpose token)',
      details: [['Token issuance', '00000001A407AF5856CCF3C42619DAA925813FC955C72983']],
    })
  })

  it('gives up on shapes that are not amounts, so the raw value is shown instead', () => {
    assert.equal(describeAmount(12), null)
    assert.equal(describeAmount('12.5'), null)
    assert.equal(describeAmount({ currency: 'USD', value: 3 }), null)
  })
})

describe('describeFlags', () => {
  it('names the partial-payment flag of a Payment', () => {
    assert.deepEqual(describeFlags('Payment', 0x00020000), ['Partial payment: the amount delivered may be less than the amount shown'])
  })

  it('names universal flags and reports unknown bits', () => {
    assert.deepEqual(describeFlags('Payment', 0x80020000), [
      'Partial payment: the amount delivered may be less than the amount shown',
      'Fully canonical signature',
    ])
    assert.deepEqual(describeFlags('EscrowCreate', 0x00010000), ['Other flags: 0x00010000'])
  })
})

describe('fieldLabel', () => {
  it('turns field names into labels, keeping acronyms', () => {
    assert.equal(fieldLabel('DestinationTag'), 'Destination tag')
    assert.equal(fieldLabel('LastLedgerSequence'), 'Last ledger sequence')
    assert.equal(fieldLabel('NFTokenID'), 'NFToken ID')
    assert.equal(fieldLabel('AMMID'), 'AMMID')
    assert.equal(fieldLabel('Fee'), 'Fee')
  })
})

describe('hexToText', () => {
  it('decodes readable UTF-8', () => {
    assert.equal(hexToText('48656C6C6F'), 'Hello')
    assert.equal(hexToText('e282ac'), '€')
  })

  it('refuses binary data, control characters and malformed hex', () => {
    assert.equal(hexToText('FF'), null)
    assert.equal(hexToText('00'), null)
    assert.equal(hexToText('ABC'), null)
    assert.equal(hexToText(''), null)
  })
})

describe('hasDeceptiveCharacters', () => {
  it('flags direction overrides, zero-width characters and controls', () => {
    assert.equal(hasDeceptiveCharacters('invoice \u202Egnp.exe'), true)
    assert.equal(hasDeceptiveCharacters('pay\u200Bpal'), true)
    assert.equal(hasDeceptiveCharacters('bell\u0007'), true)
    assert.equal(hasDeceptiveCharacters('next\u0085line'), true, 'a C1 control')
    assert.equal(hasDeceptiveCharacters('Exa\u034Fmple'), true, 'a default-ignorable mark')
    assert.equal(hasDeceptiveCharacters('blank\u2800'), true, 'the braille blank')
  })

  it('lets emoji with their presentation selector through', () => {
    assert.equal(hasDeceptiveCharacters('Thanks \u2764\uFE0F'), false)
  })

  it('lets ordinary multi-line text through', () => {
    assert.equal(hasDeceptiveCharacters('I agree.\n\tSigned: Zoë 日本'), false)
  })
})

describe('formatRemaining', () => {
  it('counts down in minutes and seconds, with hours when needed', () => {
    assert.equal(formatRemaining(299_001), '5:00')
    assert.equal(formatRemaining(59_000), '0:59')
    assert.equal(formatRemaining(3_723_000), '1:02:03')
    assert.equal(formatRemaining(-5_000), '0:00')
  })
})

describe('expiredHeadline', () => {
  const expiresAtMs = Date.UTC(2026, 0, 15, 12, 5, 0)

  it('words an expiry noticed well before expiresAt as a possible cancellation', () => {
    assert.equal(expiredHeadline(expiresAtMs, expiresAtMs - 60_000), 'This request was cancelled or expired')
  })

  it('words an expiry at or after expiresAt (or within clock jitter of it) as an expiry', () => {
    assert.equal(expiredHeadline(expiresAtMs, expiresAtMs), 'This request expired')
    assert.equal(expiredHeadline(expiresAtMs, expiresAtMs + 10_000), 'This request expired')
    assert.equal(expiredHeadline(expiresAtMs, expiresAtMs - 1_000), 'This request expired')
  })
})

describe('describePayment', () => {
  const usd = { currency: 'USD', issuer: 'rvYAfWj5gh67oV6fW32ZzP3Aw4Eubs59B', value: '0.000001' }
  it('leads with what may leave the account when SendMax spends another currency, and says what arrives', () => {
    const payment = describePayment({ TransactionType: 'Payment', Amount: usd, SendMax: '1000000000' })
    assert.equal(payment.headline, 'Up to 1,000 XRP')
    assert.deepEqual(payment.details, [])
    assert.deepEqual(
      payment.receives,
      { text: 'They receive 0.000001 USD', details: [['Issuer', usd.issuer]] },
      'what arrives keeps its issuer',
    )
  })

  it('says a partial payment may deliver as little as DeliverMin, or any amount', () => {
    const partial = { TransactionType: 'Payment', Amount: { ...usd, value: '100' }, Flags: 0x00020000 }
    assert.deepEqual(describePayment({ ...partial, DeliverMin: { ...usd, value: '0.01' } }), {
      headline: 'Up to 100 USD',
      details: [['Issuer', usd.issuer]],
      receives: { text: 'They receive at most 100 USD, and may receive as little as 0.01 USD (a partial payment)', details: [] },
    })
    assert.match(describePayment(partial).receives?.text ?? '', /as little as any amount/)
  })

  it('keeps a plain payment as the amount delivered', () => {
    assert.deepEqual(describePayment({ TransactionType: 'Payment', Amount: '2500000' }), {
      headline: '2.5 XRP',
      details: [],
      receives: null,
    })
  })
})

describe('describeOffer', () => {
  const usd = { currency: 'USD', issuer: 'rvYAfWj5gh67oV6fW32ZzP3Aw4Eubs59B', value: '50' }
  it("reads the ledger's taker-side names from the maker's side: TakerGets is what the account gives", () => {
    const offer = describeOffer({ TransactionType: 'OfferCreate', TakerGets: '100000000', TakerPays: usd })
    assert.equal(offer.headline, 'Pay at most 100 XRP')
    assert.deepEqual(offer.details, [])
    assert.deepEqual(offer.receives, { text: 'To receive 50 USD', details: [['Issuer', usd.issuer]] })
    assert.match(
      offer.remainder,
      /^What does not trade at once stays on the order book, adding to the account’s reserve, until someone takes it or it is cancelled\.$/,
    )
  })

  it('a Sell offer gives all it offers for at least the amount asked; an expiring one says it may expire', () => {
    const offer = describeOffer({
      TransactionType: 'OfferCreate',
      TakerGets: usd,
      TakerPays: '1000000',
      Flags: 0x00080000,
      Expiration: 800_000_000,
    })
    assert.equal(offer.headline, 'Sell 50 USD')
    assert.deepEqual(offer.details, [['Issuer', usd.issuer]])
    assert.equal(offer.receives.text, 'For at least 1 XRP')
    assert.match(offer.remainder, /it is cancelled or it expires\.$/)
  })

  it('says nothing stays on the book for immediate-or-cancel and fill-or-kill offers', () => {
    const base = { TransactionType: 'OfferCreate', TakerGets: '1', TakerPays: usd }
    assert.match(describeOffer({ ...base, Flags: 0x00020000 }).remainder, /the rest is cancelled: nothing stays on the order book/)
    assert.match(describeOffer({ ...base, Flags: 0x00040000 }).remainder, /in full at once or not at all: nothing stays/)
  })
})

describe('transactionConsequence', () => {
  it('names what deletes the account or hands control of it to another key, and nothing for the rest', () => {
    assert.match(transactionConsequence({ TransactionType: 'AccountDelete' }) ?? '', /deletes the signing account/)
    assert.match(transactionConsequence({ TransactionType: 'SetRegularKey', RegularKey: 'rKey' }) ?? '', /the key below full control/)
    assert.match(transactionConsequence({ TransactionType: 'SetRegularKey' }) ?? '', /removes the signing account’s regular key/)
    assert.match(transactionConsequence({ TransactionType: 'SignerListSet', SignerQuorum: 2 }) ?? '', /add up to 2/)
    assert.match(transactionConsequence({ TransactionType: 'AccountSet', SetFlag: 4 }) ?? '', /disables the signing account’s master key/)
    assert.equal(transactionConsequence({ TransactionType: 'AccountSet', SetFlag: 1 }), null)
    assert.equal(transactionConsequence({ TransactionType: 'Payment' }), null)
  })
})

describe('issued amounts', () => {
  it('group their digits as XRP amounts do', () => {
    assert.equal(describeAmount({ currency: 'USD', issuer: 'r', value: '1000000' })?.headline, '1,000,000 USD')
    assert.equal(describeAmount({ currency: 'USD', issuer: 'r', value: '-1234.5678' })?.headline, '-1,234.5678 USD')
    assert.equal(describeAmount({ currency: 'USD', issuer: 'r', value: '1e-5' })?.headline, '1e-5 USD')
  })
})
