// Assembles the Fastify instance: parsing and validation, errors, docs, health, and the route modules.
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import fastifySwagger from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifySchema,
  type FastifySchemaCompiler,
  type FastifyServerOptions,
  LogController,
} from 'fastify'
import secureJson from 'secure-json-parse'
import type { ServiceContext } from './context.js'
import { dashboardRoutes } from './features/accounts/dashboard-page.js'
import { authRoutes, sessionRoutes, signInHint } from './features/accounts/routes.js'
import { liveStreamsFor } from './features/payloads/live/live-streams.js'
import { payloadEventRoutes, signEventRoutes } from './features/payloads/live/routes.js'
import { payloadRoutes } from './features/payloads/routes.js'
import { PayloadView } from './features/payloads/schemas.js'
import { apiKeyRoutes } from './features/projects/api-key-routes.js'
import { logoRoutes } from './features/projects/logos.js'
import { projectPayloadRoutes } from './features/projects/payload-routes.js'
import { projectRoutes } from './features/projects/routes.js'
import { signPageRoutes } from './features/signing/page.js'
import { signQrRoutes } from './features/signing/qr.js'
import { signRequestHook, signRoutes } from './features/signing/routes.js'
import { payloadDeliveryRoutes } from './features/webhooks/payload-delivery-routes.js'
import { webhookRoutes } from './features/webhooks/routes.js'
import { DELIVERY_BODY_SCHEMAS, DeliveryView, WebhookView } from './features/webhooks/schemas.js'
import { apiKeyScope, sessionScope } from './features/webhooks/scopes.js'
import { AppError, badRequest, unprocessable } from './platform/errors.js'
import { apiKeyAuthHook, requestCounter } from './platform/http/api-key-auth.js'
import { registerCookies } from './platform/http/cookies.js'
import { registerErrorHandling } from './platform/http/errors.js'
import { registerHealthRoutes } from './platform/http/health.js'
import { countsAfterIdempotencyCheck, idempotencyHooks } from './platform/http/idempotency.js'
import { MAX_JSON_NESTING, nestsDeeperThan } from './platform/http/json-nesting.js'
import type { Metrics } from './platform/http/metrics.js'
import { registerPageOrigins } from './platform/http/page-origins.js'
import { ErrorBody, ValidationErrorBody } from './platform/http/schemas.js'
import { registerPageSecurityHeaders } from './platform/http/security-headers.js'
import { sessionAuthHook, sessionCookie } from './platform/http/session-auth.js'
import { refuseUnstorableValues } from './platform/http/unstorable-values.js'
import { holdsApiKeyLike, redactUrl } from './platform/logger.js'

type ValidatorFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']

export const BODY_LIMIT_BYTES = 64 * 1024
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/

export async function buildApp(ctx: ServiceContext, metrics: Metrics): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      // A client's id is kept when it is safe to log: never one shaped like an API key, which would be logged whole.
      return typeof given === 'string' && REQUEST_ID.test(given) && !holdsApiKeyLike(given) ? given : randomUUID()
    },
    return503OnClosing: true,
    // A whole request (headers and body, 64 KiB at most) within REQUEST_TIMEOUT_MS, checked a few times within it: a
    // body trickled in a byte at a time had held a connection for as long as the client liked (Fastify's default, 0,
    // turns Node's own limit off). A response, a live stream's included, is not limited by it.
    requestTimeout: ctx.config.requestTimeoutMs,
    http: {
      headersTimeout: ctx.config.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(100, Math.floor(ctx.config.requestTimeoutMs / 4)),
    },
    trustProxy: ctx.config.trustProxy,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: answerRouterError,
    clientErrorHandler: answerClientError,
    schemaController: { compilersFactory: { buildValidator: validatorCompiler as unknown as ValidatorFactory } },
  })

  registerJsonParser(app)
  await registerCookies(app)
  registerErrorHandling(app)
  app.addHook('preValidation', refuseUnstorableValues)
  app.decorateRequest('principal', null)

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
    reply.header('x-content-type-options', 'nosniff')
  })
  closeConnectionsWhenClosing(app)
  registerPageOrigins(app, { publicUrl: ctx.config.publicUrl, signingUrl: ctx.config.signingUrl })
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Countersign API',
        version: '1.0.0',
        description:
          'Payload signing requests for the XRP Ledger. Authenticate API-key endpoints with `Authorization: Bearer <API key>` or `?api_key=`.',
      },
      servers: [{ url: ctx.config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: sessionCookie(ctx.config.publicUrl).name,
            description:
              "The dashboard's session, set by signing in; state-changing requests also need the dashboard's Origin. An account makes at most 600 requests a minute with its sessions: more is 429 with Retry-After",
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  })
  await app.register(fastifySwaggerUi, { routePrefix: '/docs', staticCSP: true })
  // The shapes routes refer to by $id: one component each in the OpenAPI document, the delivery bodies included.
  for (const schema of [ErrorBody, ValidationErrorBody, PayloadView, WebhookView, DeliveryView, ...DELIVERY_BODY_SCHEMAS]) {
    app.addSchema(schema)
  }

  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  registerHealthRoutes(app, ctx, metrics)
  // One hook for the log line and the metrics (a root hook reaches every plugin, those registered before it too).
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      { method: request.method, url: redactUrl(request.url), statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    )
    metrics.observeRequest(request, reply)
    done()
  })
  const liveStreams = liveStreamsFor(app, {
    events: ctx.liveEvents,
    slots: ctx.streamSlots,
    clock: ctx.clock,
    heartbeatMs: ctx.config.liveHeartbeatMs,
    logger: ctx.logger,
  })

  await app.register(
    async (api) => {
      documentSecurity(api, [{ bearer: [] }, { apiKeyQuery: [] }])
      const rate = { rateLimiter: ctx.rateLimiter, limits: ctx.config.limits, now: () => ctx.clock.now() }
      api.addHook(
        'onRequest',
        apiKeyAuthHook({
          authenticator: ctx.authenticator,
          authFailuresPerMinute: ctx.config.authFailuresPerMinute,
          countedLater: countsAfterIdempotencyCheck,
          ...rate,
        }),
      )
      const countRequest = requestCounter(rate)
      const idempotency = idempotencyHooks({
        db: ctx.storage.db,
        dialect: ctx.storage.dialect,
        secretBox: ctx.secretBox,
        now: () => ctx.clock.now(),
        countRequest,
      })
      api.decorateRequest('idempotency', null)
      api.addHook('preValidation', idempotency.checkIdempotencyKey)
      api.addHook('onSend', idempotency.releaseUnfinished)
      await api.register(payloadRoutes, {
        payloads: ctx.payloads,
        countRequest,
        limits: ctx.config.limits,
        signingOrigin: ctx.config.signingUrl,
        now: () => ctx.clock.now(),
      })
      await api.register(webhookRoutes, { webhooks: ctx.webhooks, scope: apiKeyScope })
      await api.register(payloadEventRoutes, { streams: liveStreams, payloads: ctx.payloads, limits: ctx.config.limits })
    },
    { prefix: '/api/v1' },
  )

  // The wallet-facing API and the signing page: public, the payload uuid is the capability (never behind the API key).
  await app.register(
    async (wallet) => {
      documentSecurity(wallet, [])
      wallet.addHook('onRequest', signRequestHook({ rateLimiter: ctx.rateLimiter, now: () => ctx.clock.now() }))
      await wallet.register(signRoutes, { signing: ctx.signing })
      await wallet.register(signEventRoutes, { streams: liveStreams, signing: ctx.signing })
    },
    { prefix: '/api/v1' },
  )
  await app.register(async (page) => {
    documentSecurity(page, [])
    page.addHook('onRequest', signRequestHook({ rateLimiter: ctx.rateLimiter, now: () => ctx.clock.now() }))
    await page.register(signQrRoutes, { payloads: ctx.payloads })
  })
  // The browser pages and their assets, under the pages' security headers.
  await app.register(async (pages) => {
    await registerPageSecurityHeaders(pages)
    await pages.register(signPageRoutes, {})
    await pages.register(dashboardRoutes, {})
  })
  // Project logos: images with their own headers (logos.ts), outside the pages' security headers.
  await app.register(logoRoutes, { projects: ctx.projects })

  // Dashboard sign-in, and the session-authenticated endpoints (never opened by an API key).
  await app.register(authRoutes, {
    publicUrl: ctx.config.publicUrl,
    accounts: ctx.accounts,
    sessions: ctx.sessions,
    oidc: ctx.oidc,
    serverSecret: ctx.serverSecret,
    now: () => ctx.clock.now(),
  })
  await app.register(
    async (dashboard) => {
      documentSecurity(dashboard, [{ session: [] }])
      dashboard.decorateRequest('dashboardSession', null)
      dashboard.addHook(
        'onRequest',
        sessionAuthHook({
          sessions: ctx.sessions,
          publicUrl: ctx.config.publicUrl,
          signInHint: signInHint(ctx.oidc !== undefined),
          rateLimiter: ctx.rateLimiter,
          now: () => ctx.clock.now(),
        }),
      )
      await dashboard.register(sessionRoutes)
      await dashboard.register(projectRoutes, { projects: ctx.accountProjects })
      await dashboard.register(apiKeyRoutes, { projects: ctx.accountProjects })
      await dashboard.register(projectPayloadRoutes, { projects: ctx.accountProjects })
      await dashboard.register(webhookRoutes, {
        webhooks: ctx.webhooks,
        scope: sessionScope(ctx.accountProjects),
        prefix: '/projects/:projectId',
      })
      await dashboard.register(payloadDeliveryRoutes, { projects: ctx.accountProjects, webhooks: ctx.webhooks })
    },
    { prefix: '/api/v1' },
  )

  return app
}

/** Fastify's router refuses a path segment longer than this before any route runs (its default). */
const MAX_PARAM_LENGTH = 100

/**
 * Once the instance is stopping, every answer closes its connection (Connection: close): a kept-alive connection
 * whose request was in flight when the stop began had stayed open, idle, for the keep-alive timeout (72 s), and held
 * the stop as long, past the 30 s an orchestrator waits (deployment.md).
 */
function closeConnectionsWhenClosing(app: FastifyInstance): void {
  let closing = false
  app.addHook('preClose', (done) => {
    closing = true
    done()
  })
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('connection', 'close')
    return payload
  })
}

/** Names, in the OpenAPI document, how every route of the plugin is authenticated (an empty list: public). */
function documentSecurity(plugin: FastifyInstance, security: Record<string, string[]>[]): void {
  plugin.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, security }
  })
}

/**
 * What Fastify's router refuses before any route or hook runs (a path that does not decode, a path parameter over
 * MAX_PARAM_LENGTH characters), answered in the service's error shape with the request's id, rather than in
 * Fastify's own, which echoed the whole path back.
 */
function answerRouterError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff')
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    reply.code(414).send({ error: `A segment of the request path is longer than ${MAX_PARAM_LENGTH} characters` })
  } else if (error.code === 'FST_ERR_BAD_URL') {
    reply.code(400).send({ error: 'The request path is not valid: a % in it must begin an escape such as %2F' })
  } else {
    reply.code(400).send({ error: 'Bad request' })
  }
}

/**
 * What Node's HTTP parser refuses before any request exists (a request line or header that is not HTTP, headers over
 * Node's 16 KB, a request that took too long to arrive), answered in the service's error shape too, rather than in
 * Fastify's own; the connection is closed after it, as Node does.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket & { _httpMessage?: { headersSent?: boolean } }): void {
  // A connection the client reset has nothing left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  // Garbage after a request whose answer is under way (a live stream's): an answer written now would land inside that
  // one's body. Node's own handler holds back the same way; the connection is closed.
  if (socket._httpMessage?.headersSent === true) {
    socket.destroy(error)
    return
  }
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are larger than 16 KB']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request took too long to arrive']
        : [400, 'The request is not valid HTTP']
  const body = JSON.stringify({ error: message })
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(error)
}

const AJV_OPTIONS = { allErrors: true, strict: false, removeAdditional: false as const, useDefaults: true }
/**
 * One pair per process, shared by every app built in it (one in a deployed process, one per test service in a test
 * process): Ajv compiles its meta-schema once per instance and each route schema once per schema object, which is
 * most of the time an app takes to build.
 */
const bodyAjv = addFormats.default(new Ajv({ ...AJV_OPTIONS, coerceTypes: false }))
const textAjv = addFormats.default(new Ajv({ ...AJV_OPTIONS, coerceTypes: true }))

/**
 * Bodies are validated strictly (a string is never coerced into a number); query strings and path
 * parameters arrive as text, so their numbers are coerced, from decimal digits only (see integersAsDigits). Set as
 * the compilers factory (not with setValidatorCompiler) so that plugins adding shared schemas keep it.
 */
function validatorCompiler(): FastifySchemaCompiler<FastifySchema> {
  return ({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv.compile(schema) : integersAsDigits(schema, textAjv.compile(schema)))
}

/** An integer as text in a query or a path: decimal digits, with a minus sign for a negative one. */
const DECIMAL_INTEGER = /^-?[0-9]+$/

/**
 * A text part's validator that takes an integer only as decimal digits. Ajv coerces text with JavaScript's Number(),
 * which reads "0x10" as 16, "1e2" as 100, " 5" and "5.0" as 5: a mistyped `limit` would be obeyed as another number
 * rather than refused.
 */
function integersAsDigits(schema: unknown, validate: ValidateFunction): ValidateFunction {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {}
  const integers = Object.keys(properties).filter((name) => properties[name]?.type === 'integer')
  if (integers.length === 0) return validate
  const checked = ((data: Record<string, unknown> | undefined) => {
    const errors = integers
      .filter((name) => typeof data?.[name] === 'string' && !DECIMAL_INTEGER.test(data[name] as string))
      .map((name) => ({
        instancePath: `/${name}`,
        schemaPath: '',
        keyword: 'type',
        params: {},
        message: 'must be an integer in decimal digits',
      }))
    checked.errors = errors.length > 0 ? errors : undefined
    if (errors.length > 0) return false
    const valid = validate(data)
    checked.errors = validate.errors
    return valid
  }) as ValidateFunction
  return checked
}

/** JSON is the only body type (anything else is 415, as is a compressed body), with prototype-poisoning protection; an empty body (a DELETE sent with a JSON content type) is no body. */
function registerJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // A compressed body would be read as its compressed bytes: refused as what it is, not as JSON that does not parse.
    const encoding = request.headers['content-encoding']
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      return done(new AppError(415, `Unsupported Content-Encoding ${encoding}: send the body uncompressed`), undefined)
    }
    // Likewise a transfer coding besides chunked (`gzip, chunked`): Node undoes the chunking and hands the rest on as it is.
    const transfer = request.headers['transfer-encoding']
    if (transfer?.split(',').some((coding) => coding.trim().toLowerCase() !== 'chunked')) {
      return done(new AppError(415, `Unsupported Transfer-Encoding ${transfer}: send the body uncompressed`), undefined)
    }
    if (body === '') return done(null, undefined)
    if (nestsDeeperThan(body as string, MAX_JSON_NESTING)) {
      return done(
        unprocessable([{ field: 'body', message: `must not nest objects and arrays more than ${MAX_JSON_NESTING} levels deep` }]),
        undefined,
      )
    }
    try {
      done(null, secureJson.parse(body as string, undefined, { protoAction: 'error', constructorAction: 'error' }))
    } catch {
      done(badRequest('Request body is not valid JSON'), undefined)
    }
  })
}
