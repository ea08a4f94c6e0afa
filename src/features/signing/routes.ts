// The wallet-facing API (docs/signing.md): public, the payload uuid is the capability. Used by the signing page.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isUuid } from '../../platform/crypto/ids.js'
import { notFound, tooManyRequests } from '../../platform/errors.js'
import { errorResponses, Timestamp, UuidParams } from '../../platform/http/schemas.js'
import { type RateLimiter, retryAfterSeconds } from '../../platform/rate-limit/rate-limiter.js'
import { PAYLOAD_STATUSES, PAYLOAD_TYPES } from '../payloads/model.js'
import { NOT_FOUND_MESSAGE } from '../payloads/service.js'
import { MultisignViewSchema } from './multisign/schema.js'
import type { SigningService } from './service.js'
import { MAX_SIGNED_BLOB_BYTES } from './verify/signed-blob.js'
import { toResolution, WALLET_ADAPTERS, type WalletAdapterName } from './view.js'

/**
 * Requests per payload uuid per minute, all wallet-facing routes together. The page polls every 2 seconds (30 a
 * minute) and a user approves a few times at most; this leaves room for two open tabs and retries, and stops a
 * script from hammering one payload. Floods over many uuids are for the network in front of the service to stop.
 */
export const SIGN_REQUESTS_PER_MINUTE = 120
const RATE_WINDOW_MS = 60_000

const WalletAdapterSchema = Type.String({ enum: [...WALLET_ADAPTERS], description: 'gemwallet, crossmark, ledger, xaman or developer' })
const AnyObject = Type.Object({}, { additionalProperties: true })

const SignViewSchema = Type.Object({
  uuid: Type.String({ format: 'uuid' }),
  type: Type.String({ enum: [...PAYLOAD_TYPES] }),
  status: Type.String({ enum: [...PAYLOAD_STATUSES] }),
  expiresAt: Timestamp(),
  network: Type.String({ description: 'XRPL_NETWORK, e.g. testnet or mainnet' }),
  project: Type.Object({
    name: Type.String({ description: "The project's display name, or its name" }),
    website: Type.Optional(Type.String({ description: "The project's website origin, present only once verified" })),
    logoUrl: Type.Optional(Type.String({ description: "The project's logo on this service" })),
  }),
  transaction: Type.Optional({ ...AnyObject, description: 'sign, signAndSubmit: the requested transaction' }),
  message: Type.Optional(Type.String({ description: 'signMessage: the text whose UTF-8 bytes are signed' })),
  challenge: Type.Optional(Type.String({ description: 'connect: the exact text to sign' })),
  customInstructions: Type.Optional(Type.String()),
  signers: Type.Optional(Type.Array(Type.String(), { description: 'options.signers: only these accounts may sign this request' })),
  multisign: Type.Optional(MultisignViewSchema),
  wallets: Type.Object(
    {
      xaman: Type.Boolean({ description: 'The operator configured Xaman' }),
      developer: Type.Boolean({ description: 'The developer wallet is offered (never on mainnet)' }),
    },
    { description: 'The wallets that need the service: browser extensions and Ledger need nothing from it' },
  ),
  signerAddress: Type.Optional(Type.String()),
  txHash: Type.Optional(Type.String()),
  walletAdapter: Type.Optional(Type.String()),
  resolvedAt: Type.Optional(Timestamp()),
  redirectUrl: Type.Optional(
    Type.String({ description: "Signed or rejected: the app's returnUrl with {uuid}, {txHash} and {externalId} filled in" }),
  ),
  signed: Type.Optional(
    Type.Object(
      { account: Type.Optional(Type.String()), fee: Type.Optional(Type.String({ description: 'Drops' })) },
      { description: 'Signed transactions: the account and fee the wallet filled in' },
    ),
  ),
  explorerUrl: Type.Optional(Type.String({ description: "The transaction's page on the network's explorer (XRPL_EXPLORER_URL)" })),
  submission: Type.Optional(
    Type.Object(
      {
        engineResult: Type.Union([Type.String(), Type.Null()]),
        validatedResult: Type.Union([Type.String(), Type.Null()]),
        ledgerIndex: Type.Union([Type.Integer(), Type.Null()]),
      },
      { description: 'signAndSubmit once signed: the submission and, once validated, its final result' },
    ),
  ),
})

const ResolutionSchema = Type.Object({
  uuid: Type.String({ format: 'uuid' }),
  status: Type.String({ enum: ['signed', 'rejected', 'pending'], description: 'pending: a multisigned request that needs more signers' }),
  signerAddress: Type.Optional(Type.String()),
  txHash: Type.Optional(Type.String()),
  walletAdapter: Type.Optional(Type.String()),
  resolvedAt: Type.Optional(Timestamp()),
  redirectUrl: Type.Optional(Type.String()),
  multisign: Type.Optional(MultisignViewSchema),
})

const ApproveBody = Type.Object(
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

const RejectBody = Type.Object(
  {
    walletAdapter: Type.Optional(WalletAdapterSchema),
    signerAccount: Type.Optional(Type.String({ maxLength: 35, description: 'Multisigned requests only: the signer who rejects' })),
  },
  { additionalProperties: false },
)

export interface SignRequestHookDeps {
  rateLimiter: RateLimiter
  now: () => number
}

/**
 * The onRequest hook of every wallet-facing route, the signing page's live stream included: a malformed uuid is 404,
 * and the opening of a stream shares the per-payload request budget with the rest.
 */
export function signRequestHook(deps: SignRequestHookDeps) {
  return async function limitSignRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const nowMs = deps.now()
    // The service's clock, not the host's, dates these answers: the page counts down to expiresAt on it.
    reply.header('date', new Date(nowMs).toUTCString())
    reply.header('cache-control', 'no-store')
    const { uuid } = request.params as { uuid?: string }
    if (uuid === undefined || !isUuid(uuid)) throw notFound(NOT_FOUND_MESSAGE)
    const decision = await deps.rateLimiter.consume(`sign:${uuid.toLowerCase()}`, SIGN_REQUESTS_PER_MINUTE, RATE_WINDOW_MS)
    if (!decision.allowed) {
      const retryAfter = retryAfterSeconds(decision, deps.now())
      throw tooManyRequests(
        `Too many requests for this signing request: at most ${SIGN_REQUESTS_PER_MINUTE} a minute; retry in ${retryAfter} s`,
        retryAfter,
      )
    }
  }
}

export interface SignRoutesDeps {
  signing: SigningService
}

/** Registered under signRequestHook. */
export async function signRoutes(app: FastifyInstance, deps: SignRoutesDeps): Promise<void> {
  app.get(
    '/sign/:uuid',
    {
      schema: {
        summary: 'Read a signing request (the signing page)',
        description: 'Public: the uuid is the capability. A pending Xaman request is checked with Xaman first.',
        tags: ['signing'],
        params: UuidParams,
        response: { 200: SignViewSchema, ...errorResponses(404, 429, 502) },
      },
    },
    async (request) => deps.signing.view((request.params as { uuid: string }).uuid),
  )

  app.post(
    '/sign/:uuid/approve',
    {
      schema: {
        summary: 'Approve a signing request with a signature',
        description:
          'sign, signAndSubmit: {walletAdapter, signedTransaction}. signMessage, connect: {walletAdapter, publicKey, signature}; ' +
          'connect also takes {walletAdapter, signedTransaction} holding the connect transaction (docs/signing.md). ' +
          '422 when it does not verify or the ledger refuses the submission (the request stays pending); ' +
          '502 when the XRPL node is needed and cannot be reached or is not configured.',
        tags: ['signing'],
        params: UuidParams,
        body: ApproveBody,
        response: { 200: ResolutionSchema, ...errorResponses(400, 403, 404, 409, 410, 413, 415, 422, 429, 502) },
      },
    },
    async (request) => {
      const body = request.body as typeof ApproveBody.static
      const approved = await deps.signing.approve((request.params as { uuid: string }).uuid, {
        ...body,
        walletAdapter: body.walletAdapter as WalletAdapterName,
      })
      return toResolution(approved)
    },
  )

  app.post(
    '/sign/:uuid/reject',
    {
      schema: {
        summary: 'Reject a signing request',
        tags: ['signing'],
        params: UuidParams,
        body: RejectBody,
        response: { 200: ResolutionSchema, ...errorResponses(400, 404, 409, 410, 415, 422, 429) },
      },
    },
    async (request) => {
      const body = (request.body ?? {}) as typeof RejectBody.static
      const rejected = await deps.signing.reject(
        (request.params as { uuid: string }).uuid,
        body.walletAdapter as WalletAdapterName,
        body.signerAccount,
      )
      return toResolution(rejected)
    },
  )

  app.get(
    '/sign/:uuid/account/:address',
    {
      schema: {
        summary: 'Fee, Sequence and LastLedgerSequence for a transaction of this account',
        description: 'For wallets without a ledger connection (a Ledger device). 502 without a reachable XRPL node.',
        tags: ['signing'],
        params: Type.Object({ uuid: Type.String(), address: Type.String({ maxLength: 64 }) }, { additionalProperties: false }),
        response: {
          200: Type.Object({
            fee: Type.String({ description: 'Drops' }),
            sequence: Type.Integer(),
            lastLedgerSequence: Type.Integer(),
            networkId: Type.Optional(Type.Integer()),
          }),
          ...errorResponses(404, 409, 410, 422, 429, 502),
        },
      },
    },
    async (request) => {
      const { uuid, address } = request.params as { uuid: string; address: string }
      return deps.signing.transactionDefaults(uuid, address)
    },
  )

  if (deps.signing.xamanEnabled) {
    app.post(
      '/sign/:uuid/xaman',
      {
        schema: {
          summary: 'Create a Xaman sign request for this signing request',
          description:
            'Only when the operator configured Xaman. The result is fetched from Xaman by GET /sign/{uuid}. ' +
            'signMessage is 422: Xaman does not sign free-form messages.',
          tags: ['signing'],
          params: UuidParams,
          body: Type.Optional(Type.Object({}, { additionalProperties: false })),
          response: {
            200: Type.Object({
              qrUrl: Type.String({ description: 'A PNG of the QR code to scan with Xaman' }),
              deepLink: Type.String({ description: 'Opens Xaman on a phone, or Xaman’s own page elsewhere' }),
            }),
            ...errorResponses(404, 409, 410, 422, 429, 502),
          },
        },
      },
      async (request) => deps.signing.startXaman((request.params as { uuid: string }).uuid),
    )
  }
}
