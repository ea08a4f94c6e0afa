// The wallet-facing API's shapes (docs/signing.md): what the signing page reads and what a wallet sends. The signing
// page's code takes its types from them.
import { type Static, Type } from 'typebox'
import { AnyObject, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { PayloadStatusSchema, PayloadTypeSchema, SubmissionSchema } from '../payloads/schemas.js'
import { MultisignViewSchema } from './multisign/schema.js'
import { MAX_SIGNED_BLOB_BYTES } from './verify/signed-blob.js'
import { WALLET_ADAPTERS } from './view.js'

const WalletAdapterSchema = StringEnum(WALLET_ADAPTERS, { description: 'gemwallet, crossmark, ledger, xaman or developer' })

/** Once resolved: who signed, with what, and where the user goes next. */
const Outcome = Type.Object({
  signerAddress: Type.Optional(Type.String()),
  txHash: Type.Optional(Type.String()),
  walletAdapter: Type.Optional(Type.String()),
  resolvedAt: Type.Optional(Timestamp()),
  redirectUrl: Type.Optional(
    Type.String({ description: "Signed or rejected: the app's returnUrl with {uuid}, {txHash} and {externalId} filled in" }),
  ),
})
export type Outcome = Static<typeof Outcome>

export const SignView = Type.Object({
  uuid: Type.String({ format: 'uuid' }),
  type: PayloadTypeSchema,
  status: PayloadStatusSchema,
  expiresAt: Timestamp(),
  network: Type.String({ description: 'XRPL_NETWORK, e.g. testnet or mainnet' }),
  project: Type.Object({
    name: Type.String({ description: "The project's display name, or its name" }),
    website: Type.Optional(Type.String({ description: "The project's website origin, present only once verified" })),
    logoUrl: Type.Optional(Type.String({ description: "The project's logo on this service" })),
  }),
  transaction: Type.Optional(AnyObject('sign, signAndSubmit: the requested transaction')),
  message: Type.Optional(Type.String({ description: 'signMessage: the text whose UTF-8 bytes are signed' })),
  challenge: Type.Optional(Type.String({ description: 'connect: the exact text to sign' })),
  customInstructions: Type.Optional(Type.String()),
  signers: Type.Optional(Type.Array(Type.String(), { description: 'options.signers: only these accounts may sign this request' })),
  wallets: Type.Object(
    {
      xaman: Type.Boolean({ description: 'The operator configured Xaman' }),
      developer: Type.Boolean({ description: 'The developer wallet is offered (never on mainnet)' }),
    },
    { description: 'The wallets that need the service: browser extensions and Ledger need nothing from it' },
  ),
  ...Outcome.properties,
  signed: Type.Optional(
    Type.Object(
      { account: Type.Optional(Type.String()), fee: Type.Optional(Type.String({ description: 'Drops' })) },
      { description: 'Signed transactions: the account and fee the wallet filled in' },
    ),
  ),
  explorerUrl: Type.Optional(
    Type.String({
      description:
        "The transaction's page on the network's explorer (XRPL_EXPLORER_URL): of the transaction the ledger holds, once known (submission.txHash)",
    }),
  ),
  submission: Type.Optional(
    Type.Pick(SubmissionSchema, ['engineResult', 'txHash', 'validatedResult', 'ledgerIndex'], {
      description: 'signAndSubmit once signed: the submission and, once validated, its final result',
    }),
  ),
  submissionInDoubt: Type.Optional(
    Type.Literal(true, {
      description:
        'Pending signAndSubmit: a signed transaction of this request may be on its way to the ledger; approving or rejecting ' +
        'is refused (409) until the service knows whether the ledger took it',
    }),
  ),
  multisign: Type.Optional(MultisignViewSchema),
})
export type SignView = Static<typeof SignView>

export const Resolution = Type.Object({
  uuid: Type.String({ format: 'uuid' }),
  status: StringEnum(['signed', 'rejected', 'pending'], {
    description: 'pending: a multisigned request that recorded this signer’s answer and needs more; resolvedAt is then absent',
  }),
  ...Outcome.properties,
  multisign: Type.Optional(MultisignViewSchema),
})
export type Resolution = Static<typeof Resolution>

export const ApproveBody = Type.Object(
  {
    walletAdapter: WalletAdapterSchema,
    signedTransaction: Type.Optional(
      Type.String({
        maxLength: MAX_SIGNED_BLOB_BYTES * 2,
        description: 'sign, signAndSubmit; connect from a wallet that signs only transactions (Ledger): the signed blob, hex',
      }),
    ),
    publicKey: Type.Optional(Type.String({ maxLength: 200, description: 'signMessage, connect: the signing public key, hex' })),
    signature: Type.Optional(
      Type.String({ maxLength: 300, description: 'signMessage, connect: the signature over the UTF-8 bytes of the text, hex' }),
    ),
  },
  { additionalProperties: false },
)
/** What a wallet sends to approve; which fields a payload type needs is checked by the signing service. */
export type Approval = Static<typeof ApproveBody>

export const RejectBody = Type.Object(
  {
    walletAdapter: Type.Optional(WalletAdapterSchema),
    signerAccount: Type.Optional(Type.String({ maxLength: 35, description: 'Multisigned requests only: the signer who rejects' })),
  },
  { additionalProperties: false },
)
export type Rejection = Static<typeof RejectBody>

export const AccountParams = Type.Object({ uuid: Type.String(), address: Type.String({ maxLength: 64 }) }, { additionalProperties: false })

/** The fields a wallet without a ledger connection (a Ledger device) needs to build a transaction of this account. */
export const AccountFill = Type.Object({
  fee: Type.String({ description: 'Drops' }),
  sequence: Type.Integer(),
  lastLedgerSequence: Type.Integer(),
  networkId: Type.Optional(Type.Integer()),
})
export type AccountFill = Static<typeof AccountFill>

/** The Xaman sign request the service created for a signing request. */
export const XamanStart = Type.Object({
  qrUrl: Type.String({ description: 'A PNG of the QR code to scan with Xaman' }),
  deepLink: Type.String({ description: 'Opens Xaman on a phone, or Xaman’s own page elsewhere' }),
})
export type XamanStart = Static<typeof XamanStart>
