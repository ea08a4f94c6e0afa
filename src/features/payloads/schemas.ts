// The payload API's shapes (docs/api.md): what POST /payloads accepts and what the payload endpoints answer. The
// route validates with them, the service and the browser code take their types from them, the SDK's are generated.
import { type Static, Type } from 'typebox'
import {
  AnyObject,
  ApiKeyQuery,
  Nullable,
  NullableTimestamp,
  type Page,
  PageFields,
  PageQuery,
  RefTo,
  StringEnum,
  Timestamp,
} from '../../platform/http/schemas.js'
import { MultisignViewSchema } from '../signing/multisign/schema.js'
import {
  EXTERNAL_ID_PATTERN,
  MAX_ALLOWED_SIGNERS,
  MAX_CUSTOM_INSTRUCTIONS_CHARS,
  MAX_METADATA_BYTES,
  PAYLOAD_STATUSES,
  PAYLOAD_TYPES,
  SUBMISSION_OUTCOMES,
} from './model.js'

export const PayloadTypeSchema = StringEnum(PAYLOAD_TYPES, { description: 'connect, sign, signAndSubmit or signMessage' })
export const PayloadStatusSchema = StringEnum(PAYLOAD_STATUSES)

export const CreatePayloadBody = Type.Object(
  {
    type: PayloadTypeSchema,
    transaction: Type.Optional(AnyObject('Raw XRPL transaction fields; required for sign and signAndSubmit')),
    message: Type.Optional(Type.String({ description: 'UTF-8 text to sign; required for signMessage; at most 4096 bytes, no U+0000' })),
    options: Type.Optional(
      Type.Object(
        {
          expiresIn: Type.Optional(
            Type.Integer({
              minimum: 1,
              description:
                "TTL in seconds; default 300, or the plan's maximum when that is lower; at most the plan's maximum (Free 300, Pro 86400)",
            }),
          ),
          returnUrl: Type.Optional(
            Type.String({ description: 'http(s) URL to send the user to afterwards; {uuid}, {txHash} and {externalId} are filled in' }),
          ),
          customInstructions: Type.Optional(
            Type.String({ maxLength: MAX_CUSTOM_INSTRUCTIONS_CHARS, description: 'Shown to the user on the signing page' }),
          ),
          signers: Type.Optional(
            Type.Array(Type.String({ maxLength: 64 }), {
              minItems: 1,
              maxItems: MAX_ALLOWED_SIGNERS,
              description: `1 to ${MAX_ALLOWED_SIGNERS} classic addresses: only these accounts may resolve the payload`,
            }),
          ),
          multisign: Type.Optional(
            Type.Boolean({
              description:
                "sign, signAndSubmit: collect the signatures of the Account's signer list (read from the XRPL node) and combine them at quorum",
            }),
          ),
          externalId: Type.Optional(
            Type.String({
              pattern: EXTERNAL_ID_PATTERN,
              description:
                "The application's own id, 1-64 characters of A-Z a-z 0-9 . _ : -; unique per project (409 with the existing uuid)",
            }),
          ),
          metadata: Type.Optional(
            AnyObject(`Any JSON object, at most ${MAX_METADATA_BYTES} bytes serialized; returned on reads and in webhook bodies`),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)
export type CreatePayloadRequest = Static<typeof CreatePayloadBody>

export const CreatedPayload = Type.Object({
  uuid: Type.String({ format: 'uuid' }),
  type: PayloadTypeSchema,
  status: PayloadStatusSchema,
  signingUrl: Type.String({ format: 'uri', description: 'The page to send the user to' }),
  expiresAt: Timestamp(),
  createdAt: Timestamp(),
})
export type CreatedPayload = Static<typeof CreatedPayload>

/** A payment's delivered amount: drops as a string, or an issued-currency amount. */
export const DeliveredAmountSchema = Type.Union([
  Type.String(),
  Type.Object({ currency: Type.String(), issuer: Type.String(), value: Type.String() }),
])

/** signAndSubmit: what happened on the ledger (the payload view, and the body of payload.finalized). */
export const SubmissionSchema = Type.Object(
  {
    engineResult: Nullable(Type.String({ description: 'Engine result of the submission, e.g. tesSUCCESS or terQUEUED' })),
    txHash: Nullable(
      Type.String(),
      "Once succeeded or failed: the hash of the transaction the validated ledger holds, the payload's txHash, or that of the same transaction signed otherwise (other signatures, another of the account's keys), which took its place",
    ),
    validatedResult: Nullable(Type.String({ description: 'Final TransactionResult once validated' })),
    ledgerIndex: Nullable(Type.Integer(), 'Ledger that validated the transaction'),
    outcome: Nullable(StringEnum(SUBMISSION_OUTCOMES), 'succeeded, failed or dropped once final; null until then'),
    deliveredAmount: Nullable(
      DeliveredAmountSchema,
      "Payments: the validated metadata's delivered_amount (drops, or an issued-currency amount); null otherwise",
    ),
  },
  { description: 'signAndSubmit only: what happened on the ledger' },
)
export type SubmissionView = Static<typeof SubmissionSchema>

export const PayloadView = Type.Object(
  {
    uuid: Type.String({ format: 'uuid' }),
    type: PayloadTypeSchema,
    status: PayloadStatusSchema,
    signerAddress: Nullable(Type.String({ description: 'XRPL address of the signer; set once signed' })),
    txHash: Nullable(Type.String({ description: 'Hash of the signed transaction (sign, signAndSubmit); set once signed' })),
    walletAdapter: Nullable(Type.String({ description: 'Wallet used to resolve the payload' })),
    expiresAt: Timestamp(),
    createdAt: Timestamp(),
    resolvedAt: NullableTimestamp('Set on every move out of pending, expiry included'),
    externalId: Nullable(Type.String(), 'options.externalId, null when not given'),
    metadata: Nullable(AnyObject(), 'options.metadata, null when not given'),
    txBlob: Type.Optional(
      Nullable(
        Type.String({
          description:
            'sign, signAndSubmit: the signed transaction blob, hex. connect: the signed sign-in record when the wallet signed one (a Ledger device, Xaman), null when it signed the challenge text',
        }),
      ),
    ),
    publicKey: Type.Optional(Nullable(Type.String({ description: 'signMessage, connect: the signing public key, hex' }))),
    signature: Type.Optional(Nullable(Type.String({ description: 'signMessage, connect: the signature, hex' }))),
    challenge: Type.Optional(
      Type.String({
        description:
          "connect: the sign-in text the service issued for this payload, to check the signature against on the application's side",
      }),
    ),
    submission: Type.Optional(SubmissionSchema),
    multisign: Type.Optional(MultisignViewSchema),
  },
  { $id: 'Payload' },
)
export type PayloadView = Static<typeof PayloadView>

const PayloadFilters = {
  ...PageQuery('Payloads'),
  after: Type.Optional(
    Type.String({
      description:
        'A cursor: the page starts after this payload (the last uuid of the page before), so that payloads created while a client pages neither move nor repeat items. Not with offset.',
    }),
  ),
  status: Type.Optional(StringEnum(PAYLOAD_STATUSES, { description: 'Only payloads in this status' })),
  type: Type.Optional(StringEnum(PAYLOAD_TYPES, { description: 'Only payloads of this type' })),
  externalId: Type.Optional(Type.String({ description: 'Only the payload with this externalId' })),
}

/** GET /payloads (API key) and GET /projects/{id}/payloads (session). */
export const PayloadListQuery = Type.Object(PayloadFilters, { additionalProperties: false })
export type PayloadListQuery = Static<typeof PayloadListQuery>
/** GET /projects/{id}/payloads (session): the filters, and the dashboard's search. */
export const ProjectPayloadListQuery = Type.Object(
  {
    ...PayloadFilters,
    q: Type.Optional(
      Type.String({
        maxLength: 200,
        description: "Search: a payload uuid or its first characters (at least 4), a signer's classic address, or an externalId",
      }),
    ),
  },
  { additionalProperties: false },
)
export type ProjectPayloadListQuery = Static<typeof ProjectPayloadListQuery>
/**
 * A page of payloads, with the list's filters and the dashboard's search (docs/pages.md): a payload uuid or its start
 * (at least 4 characters), a signer's classic address, or an externalId.
 */
export type PayloadPage = Omit<PayloadListQuery, keyof Page> & Page & { search?: string }
export const ApiKeyPayloadListQuery = Type.Object({ ...ApiKeyQuery, ...PayloadFilters }, { additionalProperties: false })

export const PayloadList = Type.Object({ payloads: Type.Array(RefTo(PayloadView)), ...PageFields })
export type PayloadList = Static<typeof PayloadList>

/** 409 of POST /payloads: the externalId is taken (uuid names its payload), or the Idempotency-Key is in use. */
export const CreateConflict = Type.Object(
  {
    error: Type.String(),
    uuid: Type.Optional(Type.String({ format: 'uuid', description: 'The payload that already has this externalId' })),
  },
  { description: 'options.externalId is taken (uuid names its payload), or the Idempotency-Key is in use by a request still running' },
)

export const CancelledPayload = Type.Object({ uuid: Type.String({ format: 'uuid' }), status: Type.Literal('expired') })
