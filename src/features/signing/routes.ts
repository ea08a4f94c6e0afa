// The wallet-facing API (docs/signing.md): public, the payload uuid is the capability. Used by the signing page.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { isUuid } from '../../platform/crypto/ids.js'
import { notFound } from '../../platform/errors.js'
import { errorResponses, UuidParams } from '../../platform/http/schemas.js'
import { consumePerMinute, type RateLimiter } from '../../platform/rate-limit/rate-limiter.js'
import { NOT_FOUND_MESSAGE } from '../payloads/service.js'
import { AccountFill, AccountParams, ApproveBody, RejectBody, Resolution, SignView, XamanStart } from './schemas.js'
import type { SigningService } from './service.js'
import { toResolution } from './view.js'

/**
 * Requests per payload uuid per minute, all wallet-facing routes together. The page polls every 2 seconds (30 a
 * minute) and a user approves a few times at most; this leaves room for two open tabs and retries, and stops a
 * script from hammering one payload. Floods over many uuids are for the network in front of the service to stop.
 */
export const SIGN_REQUESTS_PER_MINUTE = 120

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
    const uuid = uuidOf(request.params)
    if (uuid === undefined || !isUuid(uuid)) throw notFound(NOT_FOUND_MESSAGE)
    const count = { key: `sign:${uuid.toLowerCase()}`, limit: SIGN_REQUESTS_PER_MINUTE, what: 'requests for this signing request' }
    await consumePerMinute(deps.rateLimiter, count, deps.now)
  }
}

/** The uuid path parameter, before any route schema has checked the parameters (the hook runs first). */
function uuidOf(params: unknown): string | undefined {
  if (typeof params !== 'object' || params === null || !('uuid' in params)) return undefined
  return typeof params.uuid === 'string' ? params.uuid : undefined
}

export interface SignRoutesDeps {
  signing: SigningService
}

/** Registered under signRequestHook. */
export const signRoutes: FastifyPluginAsyncTypebox<SignRoutesDeps> = async (app, deps) => {
  app.get(
    '/sign/:uuid',
    {
      schema: {
        summary: 'Read a signing request (the signing page)',
        description: 'Public: the uuid is the capability. A pending Xaman request is checked with Xaman first.',
        tags: ['signing'],
        params: UuidParams,
        response: { 200: SignView, ...errorResponses(404, 429, 502) },
      },
    },
    async (request) => deps.signing.view(request.params.uuid),
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
        response: { 200: Resolution, ...errorResponses(400, 403, 404, 409, 410, 413, 415, 422, 429, 502) },
      },
    },
    async (request) => {
      return toResolution(await deps.signing.approve(request.params.uuid, request.body))
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
        response: { 200: Resolution, ...errorResponses(400, 404, 409, 410, 415, 422, 429) },
      },
      // Every field is optional: a rejection sent without a body is a rejection that says nothing more.
      preValidation: async (request) => {
        request.body ??= {}
      },
    },
    async (request) => {
      const rejected = await deps.signing.reject(request.params.uuid, request.body?.walletAdapter, request.body?.signerAccount)
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
        params: AccountParams,
        response: { 200: AccountFill, ...errorResponses(404, 409, 410, 422, 429, 502) },
      },
    },
    async (request) => {
      const { uuid, address } = request.params
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
            'signMessage is 422: Xaman does not sign free-form messages; a multisigned request is 422: Xaman does not sign for multisigning.',
          tags: ['signing'],
          params: UuidParams,
          body: Type.Optional(Type.Object({}, { additionalProperties: false })),
          response: { 200: XamanStart, ...errorResponses(404, 409, 410, 422, 429, 502) },
        },
      },
      async (request) => deps.signing.startXaman(request.params.uuid),
    )
  }
}
