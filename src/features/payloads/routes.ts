// The payload API for applications (docs/interface.md §4, docs/api.md): create, read, cancel and list payloads.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { isUuid } from '../../platform/crypto/ids.js'
import { notFound, tooManyRequests } from '../../platform/errors.js'
import { principalOf } from '../../platform/http/api-key-auth.js'
import { IdempotencyKeyHeaders } from '../../platform/http/idempotency.js'
import {
  ApiKeyOnlyQuery,
  ApiKeyQuery,
  errorResponses,
  NullableTimestamp,
  PageFields,
  PageQuery,
  Timestamp,
  UuidParams,
} from '../../platform/http/schemas.js'
import { type RateLimiter, retryAfterSeconds } from '../../platform/rate-limit/rate-limiter.js'
import { PLAN_LABELS, type PlanLimits, type PlanName } from '../projects/plans.js'
import { MultisignViewSchema } from '../signing/multisign/schema.js'
import {
  EXTERNAL_ID_PATTERN,
  MAX_ALLOWED_SIGNERS,
  MAX_CUSTOM_INSTRUCTIONS_CHARS,
  MAX_METADATA_BYTES,
  PAYLOAD_STATUSES,
  PAYLOAD_TYPES,
  type PayloadType,
  SUBMISSION_OUTCOMES,
  toCreatedView,
  toPayloadView,
} from './model.js'
import type { PayloadListQuery } from './repository.js'
import { NOT_FOUND_MESSAGE, type PayloadService } from './service.js'

const PayloadTypeSchema = Type.Union(
  PAYLOAD_TYPES.map((t) => Type.Literal(t)),
  { description: 'connect, sign, signAndSubmit or signMessage' },
)
const PayloadStatusSchema = Type.Union(PAYLOAD_STATUSES.map((s) => Type.Literal(s)))
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()])

const CreatePayloadBody = Type.Object(
  {
    type: Type.String({ enum: [...PAYLOAD_TYPES], description: 'connect, sign, signAndSubmit or signMessage' }),
    transaction: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'Raw XRPL transaction fields; required for sign and signAndSubmit' }),
    ),
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
              maxItems: 64,
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
            Type.Object(
              {},
              {
                additionalProperties: true,
                description: `Any JSON object, at most ${MAX_METADATA_BYTES} bytes serialized; returned on reads and in webhook bodies`,
              },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)

const CreatedPayload = Type.Object({
  uuid: Type.String({ format: 'uuid' }),
  type: PayloadTypeSchema,
  status: PayloadStatusSchema,
  signingUrl: Type.String({ format: 'uri' }),
  expiresAt: Timestamp(),
  createdAt: Timestamp(),
})

export const PayloadViewSchema = Type.Object(
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
    externalId: Nullable(Type.String({ description: 'options.externalId, null when not given' })),
    metadata: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
      description: 'options.metadata, null when not given',
    }),
    txBlob: Type.Optional(Nullable(Type.String({ description: 'sign, signAndSubmit: the signed transaction blob, hex' }))),
    publicKey: Type.Optional(Nullable(Type.String({ description: 'signMessage, connect: the signing public key, hex' }))),
    signature: Type.Optional(Nullable(Type.String({ description: 'signMessage, connect: the signature, hex' }))),
    submission: Type.Optional(
      Type.Object(
        {
          engineResult: Nullable(Type.String({ description: 'Engine result of the submission, e.g. tesSUCCESS or terQUEUED' })),
          validatedResult: Nullable(Type.String({ description: 'Final TransactionResult once validated' })),
          ledgerIndex: Type.Union([Type.Integer(), Type.Null()], { description: 'Ledger that validated the transaction' }),
          outcome: Type.Union([Type.String({ enum: [...SUBMISSION_OUTCOMES] }), Type.Null()], {
            description: 'succeeded, failed or dropped once final; null until then',
          }),
          deliveredAmount: Type.Union(
            [Type.String(), Type.Object({ currency: Type.String(), issuer: Type.String(), value: Type.String() }), Type.Null()],
            { description: "Payments: the validated metadata's delivered_amount (drops, or an issued-currency amount); null otherwise" },
          ),
        },
        { description: 'signAndSubmit only: what happened on the ledger' },
      ),
    ),
    multisign: Type.Optional(MultisignViewSchema),
  },
  { $id: 'Payload' },
)

const ListQuery = Type.Object(
  {
    ...ApiKeyQuery,
    ...PageQuery('Payloads'),
    status: Type.Optional(Type.String({ enum: [...PAYLOAD_STATUSES], description: 'Only payloads in this status' })),
    type: Type.Optional(Type.String({ enum: [...PAYLOAD_TYPES], description: 'Only payloads of this type' })),
    externalId: Type.Optional(Type.String({ description: 'Only the payload with this externalId' })),
  },
  { additionalProperties: false },
)

export interface PayloadRoutesDeps {
  payloads: PayloadService
  pollGate: RateLimiter
  limits: Record<PlanName, PlanLimits>
  publicUrl: string
  now: () => number
}

export async function payloadRoutes(app: FastifyInstance, deps: PayloadRoutesDeps): Promise<void> {
  app.addSchema(PayloadViewSchema)

  app.post(
    '/payloads',
    {
      config: { idempotent: true },
      schema: {
        summary: 'Create a payload',
        tags: ['payloads'],
        headers: IdempotencyKeyHeaders,
        querystring: ApiKeyOnlyQuery,
        body: CreatePayloadBody,
        response: {
          201: CreatedPayload,
          ...errorResponses(400, 401, 403, 413, 415, 422, 429),
          409: Type.Object(
            {
              error: Type.String(),
              uuid: Type.Optional(Type.String({ format: 'uuid', description: 'The payload that already has this externalId' })),
            },
            {
              description:
                'options.externalId is taken (uuid names its payload), or the Idempotency-Key is in use by a request still running',
            },
          ),
        },
      },
    },
    async (request, reply) => {
      const body = request.body as typeof CreatePayloadBody.static
      const idempotency = request.idempotency
      const payload = await deps.payloads.create(
        principalOf(request),
        { ...body, type: body.type as PayloadType },
        idempotency ? (tx, created) => idempotency.complete(tx, 201, toCreatedView(created, deps.publicUrl)) : undefined,
      )
      return reply.code(201).send(toCreatedView(payload, deps.publicUrl))
    },
  )

  app.get(
    '/payloads/:uuid',
    {
      schema: {
        summary: 'Get a payload',
        description: "Polling faster than the plan's minimum interval (Free 3 s, Pro 1 s) per payload is refused with 429 and Retry-After.",
        tags: ['payloads'],
        params: UuidParams,
        querystring: ApiKeyOnlyQuery,
        response: { 200: Type.Ref(PayloadViewSchema), ...errorResponses(401, 404, 422, 429) },
      },
    },
    async (request) => {
      const principal = principalOf(request)
      const { uuid } = request.params as { uuid: string }
      if (!isUuid(uuid)) throw notFound(NOT_FOUND_MESSAGE)
      const intervalMs = deps.limits[principal.plan].minPollIntervalMs
      // 0 means no poll gate (config takes 0 or whole seconds). The limiter is not asked: Redis would make 0 a 1 s gate.
      if (intervalMs > 0) {
        const gate = await deps.pollGate.consume(`poll:${principal.projectId}:${uuid}`, 1, intervalMs)
        if (!gate.allowed) {
          const retryAfter = retryAfterSeconds(gate, deps.now())
          throw tooManyRequests(
            `Polling too fast: the ${PLAN_LABELS[principal.plan]} plan allows one GET of a payload every ${intervalMs / 1000} s; ` +
              `retry after ${retryAfter} s, or use webhooks or the live stream`,
            retryAfter,
          )
        }
      }
      return toPayloadView(await deps.payloads.getForProject(principal.projectId, uuid))
    },
  )

  app.delete(
    '/payloads/:uuid',
    {
      schema: {
        summary: 'Cancel a pending payload',
        description: 'The payload becomes expired. 409 when it is not pending.',
        tags: ['payloads'],
        params: UuidParams,
        querystring: ApiKeyOnlyQuery,
        response: {
          200: Type.Object({ uuid: Type.String({ format: 'uuid' }), status: Type.Literal('expired') }),
          ...errorResponses(401, 404, 409, 429),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request)
      const { uuid } = request.params as { uuid: string }
      if (!isUuid(uuid)) throw notFound(NOT_FOUND_MESSAGE)
      const payload = await deps.payloads.cancel(principal.projectId, uuid)
      return { uuid: payload.uuid, status: 'expired' as const }
    },
  )

  app.get(
    '/payloads',
    {
      schema: {
        summary: "List the project's payloads, newest first",
        tags: ['payloads'],
        querystring: ListQuery,
        response: {
          200: Type.Object({ payloads: Type.Array(Type.Ref(PayloadViewSchema)), ...PageFields }),
          ...errorResponses(401, 422, 429),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request)
      const query = request.query as PayloadListQuery
      const payloads = await deps.payloads.list(principal.projectId, query)
      return { payloads: payloads.map(toPayloadView), limit: query.limit, offset: query.offset }
    },
  )
}
