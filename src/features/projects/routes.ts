// The project endpoints (docs/interface.md §4-5), authenticated by the dashboard session: projects, API keys,
// usage, analytics, and read access to payloads for the dashboard.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { toIso } from '../../platform/clock.js'
import { errorResponses, NullableTimestamp, PageFields, PageQuery, Timestamp } from '../../platform/http/schemas.js'
import { sessionOf } from '../../platform/http/session-auth.js'
import { PAYLOAD_STATUSES, PAYLOAD_TYPES, type Payload, type PayloadStatus, type PayloadType, toPayloadView } from '../payloads/model.js'
import { PayloadViewSchema } from '../payloads/routes.js'
import type { AccountProjects } from './account-projects.js'
import { ANALYTICS_PERIODS, type AnalyticsPeriod, DEFAULT_ANALYTICS_PERIOD } from './analytics.js'
import type { ApiKeyRecord } from './api-keys-repository.js'
import { DEFAULT_API_KEY_NAME, MAX_NAME_CHARS } from './names.js'
import { PLAN_NAMES } from './plans.js'
import { logoPath, MAX_LOGO_BYTES, WEBSITE_PROOF_PATH, websiteProofLine } from './project-branding.js'
import type { Project } from './repository.js'

const Name = (description: string) => Type.String({ description: `${description}; 1 to ${MAX_NAME_CHARS} characters after trimming` })
const TAGS = ['projects']
const SESSION_NOTE = 'Session-authenticated (the dashboard cookie); API keys are not accepted. Changes need an Origin equal to PUBLIC_URL.'

const ProjectParams = Type.Object({ id: Type.String({ description: 'Project id, proj_...' }) }, { additionalProperties: false })
const KeyParams = Type.Object(
  { id: Type.String(), keyId: Type.String({ description: 'API key id, key_...' }) },
  { additionalProperties: false },
)
const PayloadParams = Type.Object(
  { id: Type.String(), uuid: Type.String({ description: 'Payload UUID' }) },
  { additionalProperties: false },
)

const CreateProjectBody = Type.Object({ name: Name('Project name') }, { additionalProperties: false })
const CreateKeyBody = Type.Object(
  { name: Type.Optional(Name(`Key name (default "${DEFAULT_API_KEY_NAME}")`)) },
  { additionalProperties: false },
)

const ProjectSummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  displayName: Type.Union([Type.String(), Type.Null()], {
    description: 'What the signing page names the project by; null: the name is shown',
  }),
  plan: Type.String({ enum: [...PLAN_NAMES] }),
  createdAt: Timestamp(),
})

const Website = Type.Union(
  [
    Type.Object({
      url: Type.String({ description: 'The origin the owner set' }),
      verified: Type.Boolean({ description: 'The signing page shows the website only when verified' }),
      verifiedAt: NullableTimestamp('When the proof was last found'),
      proofUrl: Type.String({ description: 'Where the website must publish the proof' }),
      proofLine: Type.String({ description: 'The line the proof file must hold' }),
    }),
    Type.Null(),
  ],
  { description: 'The project website, verified by a proof file it publishes (docs/pages.md)' },
)

const ProjectSettingsBody = Type.Object(
  {
    displayName: Type.Optional(
      Type.Union([Type.String({ maxLength: 1000 }), Type.Null()], {
        description: `Shown to end users on the signing page; 1 to ${MAX_NAME_CHARS} characters; null or "" clears it`,
      }),
    ),
    websiteUrl: Type.Optional(
      Type.Union([Type.String({ maxLength: 4096 }), Type.Null()], {
        description: 'An https URL of the project website (its origin is kept); null or "" clears it',
      }),
    ),
  },
  { additionalProperties: false },
)

const LogoBody = Type.Object(
  {
    image: Type.String({
      description: `A data URL, data:image/png;base64,...: PNG, JPEG or WebP, at most ${MAX_LOGO_BYTES / 1024} KB`,
    }),
  },
  { additionalProperties: false },
)

const ProjectDetail = Type.Object({
  ...ProjectSummary.properties,
  website: Website,
  logoUrl: Type.Union([Type.String(), Type.Null()], { description: "The logo's public URL on this service" }),
  usage: Type.Object(
    { month: Type.String({ description: 'UTC month, YYYY-MM' }), used: Type.Integer(), limit: Type.Integer() },
    { description: "Payloads created this month against the plan's monthly limit" },
  ),
  limits: Type.Object({
    requestsPerMinute: Type.Integer(),
    minPollIntervalMs: Type.Integer(),
    maxExpiresInSeconds: Type.Integer(),
    monthlyPayloads: Type.Integer(),
  }),
})

const KeySummary = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'The start of the key, enough to recognise it; the full key is shown only at creation' }),
  createdAt: Timestamp(),
  lastUsedAt: NullableTimestamp('Updated at most once a minute'),
  revokedAt: NullableTimestamp('Set once the key is revoked'),
})

const CreatedKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  apiKey: Type.String({ description: 'The full key: shown only in this response' }),
  createdAt: Timestamp(),
})

const AnalyticsQuery = Type.Object(
  {
    period: Type.Optional(
      Type.String({ enum: [...ANALYTICS_PERIODS], default: DEFAULT_ANALYTICS_PERIOD, description: '30d (default) or 7d' }),
    ),
  },
  { additionalProperties: false },
)
const Count = Type.Integer({ minimum: 0 })
const AnalyticsBody = Type.Object({
  period: Type.String({ enum: [...ANALYTICS_PERIODS] }),
  totals: Type.Object(
    {
      total: Count,
      signed: Count,
      rejected: Count,
      expired: Count,
      pending: Count,
      signingRate: Type.Integer({ description: 'round(100 * signed / (signed + rejected + expired)); 0 when none is resolved' }),
    },
    { description: 'Payloads created in the period, by current status' },
  ),
  walletBreakdown: Type.Array(Type.Object({ walletAdapter: Type.String(), count: Count }), {
    description: 'Signed payloads of the period by wallet, largest first',
  }),
  daily: Type.Array(
    Type.Object({ day: Type.String({ description: 'UTC day, YYYY-MM-DD' }), total: Count, signed: Count, rejected: Count, expired: Count }),
    { description: 'One entry per UTC day of the period, oldest first; days without payloads are zeros' },
  ),
})

const PayloadListQuery = Type.Object(
  {
    ...PageQuery('Payloads'),
    status: Type.Optional(Type.String({ enum: [...PAYLOAD_STATUSES], description: 'Only payloads in this status' })),
    type: Type.Optional(Type.String({ enum: [...PAYLOAD_TYPES], description: 'Only payloads of this type' })),
    q: Type.Optional(
      Type.String({
        maxLength: 200,
        description: "Search: a payload uuid or its first characters (at least 4), a signer's classic address, or an externalId",
      }),
    ),
  },
  { additionalProperties: false },
)
const PayloadView = Type.Object(PayloadViewSchema.properties)
const PayloadDetail = Type.Object({
  ...PayloadViewSchema.properties,
  transaction: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'The requested transaction' }),
  message: Type.Union([Type.String(), Type.Null()], { description: 'signMessage: the message to sign' }),
  customInstructions: Type.Union([Type.String(), Type.Null()]),
  returnUrl: Type.Union([Type.String(), Type.Null()]),
})

const toProjectSummary = (project: Project) => ({
  id: project.id,
  name: project.name,
  displayName: project.displayName,
  plan: project.plan,
  createdAt: toIso(project.createdAtMs),
})

const toWebsite = (project: Project) =>
  project.website === null
    ? null
    : {
        url: project.website.url,
        verified: project.website.verifiedAtMs !== null,
        verifiedAt: project.website.verifiedAtMs === null ? null : toIso(project.website.verifiedAtMs),
        proofUrl: `${project.website.url}${WEBSITE_PROOF_PATH}`,
        proofLine: websiteProofLine(project.website.token),
      }

const toKeySummary = (key: ApiKeyRecord) => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  createdAt: toIso(key.createdAtMs),
  lastUsedAt: key.lastUsedAtMs === null ? null : toIso(key.lastUsedAtMs),
  revokedAt: key.revokedAtMs === null ? null : toIso(key.revokedAtMs),
})

const toPayloadDetail = (payload: Payload) => ({
  ...toPayloadView(payload),
  transaction: payload.transaction,
  message: payload.message,
  customInstructions: payload.customInstructions,
  returnUrl: payload.returnUrl,
})

export interface ProjectRoutesDeps {
  projects: AccountProjects
}

export async function projectRoutes(app: FastifyInstance, { projects }: ProjectRoutesDeps): Promise<void> {
  const accountOf = (request: Parameters<typeof sessionOf>[0]) => sessionOf(request).account.id

  app.post(
    '/projects',
    {
      schema: {
        summary: 'Create a project',
        description: `The project starts on the Free plan with one API key, returned here in full and never again. ${SESSION_NOTE}`,
        tags: TAGS,
        body: CreateProjectBody,
        response: {
          201: Type.Object({ id: Type.String(), name: Type.String(), apiKey: Type.String() }),
          ...errorResponses(400, 401, 403, 422),
        },
      },
    },
    async (request, reply) => {
      const { name } = request.body as typeof CreateProjectBody.static
      const { project, key } = await projects.create(accountOf(request), name)
      return reply.code(201).send({ id: project.id, name: project.name, apiKey: key.apiKey })
    },
  )

  app.get(
    '/projects',
    {
      schema: {
        summary: "List the account's projects",
        description: SESSION_NOTE,
        tags: TAGS,
        response: { 200: Type.Object({ projects: Type.Array(ProjectSummary) }), ...errorResponses(401) },
      },
    },
    async (request) => ({ projects: (await projects.list(accountOf(request))).map(toProjectSummary) }),
  )

  app.get(
    '/projects/:id',
    {
      schema: {
        summary: 'A project with its usage this month and its limits',
        description: SESSION_NOTE,
        tags: TAGS,
        params: ProjectParams,
        response: { 200: ProjectDetail, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      return projectDetail(request, id)
    },
  )

  const projectDetail = async (request: Parameters<typeof sessionOf>[0], id: string) => {
    const overview = await projects.overview(accountOf(request), id)
    const { requestsPerMinute, minPollIntervalMs, maxExpiresInSeconds, monthlyPayloads } = overview.limits
    const logoHash = await projects.logoHash(accountOf(request), id)
    return {
      ...toProjectSummary(overview.project),
      website: toWebsite(overview.project),
      logoUrl: logoHash === undefined ? null : logoPath(overview.project.id, logoHash),
      usage: overview.usage,
      limits: { requestsPerMinute, minPollIntervalMs, maxExpiresInSeconds, monthlyPayloads },
    }
  }

  app.patch(
    '/projects/:id',
    {
      schema: {
        summary: 'Change what the signing page shows of the project: its display name and website',
        description: `A new website starts unverified, with a new proof line; the same origin again keeps its verification. ${SESSION_NOTE}`,
        tags: TAGS,
        params: ProjectParams,
        body: ProjectSettingsBody,
        response: { 200: ProjectDetail, ...errorResponses(400, 401, 403, 404, 422) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      await projects.updateSettings(accountOf(request), id, request.body as typeof ProjectSettingsBody.static)
      return projectDetail(request, id)
    },
  )

  app.post(
    '/projects/:id/website/verify',
    {
      schema: {
        summary: "Check the website's proof now",
        description: `The service fetches ${WEBSITE_PROOF_PATH} from the website's origin (public addresses only, no redirects, 5 seconds, 4 KB) and looks for the project's proof line. 200 either way: \`check.verified\` says the outcome and \`check.problem\` why not. ${SESSION_NOTE}`,
        tags: TAGS,
        params: ProjectParams,
        response: {
          200: Type.Object({
            check: Type.Object({ verified: Type.Boolean(), problem: Type.Optional(Type.String()) }),
            project: ProjectDetail,
          }),
          ...errorResponses(401, 403, 404, 422),
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      const { check } = await projects.verifyWebsite(accountOf(request), id)
      return { check, project: await projectDetail(request, id) }
    },
  )

  app.put(
    '/projects/:id/logo',
    {
      // base64 makes the image a third larger; twice the limit leaves room, so that a logo a little too large gets
      // the 422 that says so rather than a bare 413.
      bodyLimit: 2 * MAX_LOGO_BYTES,
      schema: {
        summary: "Set the project's logo",
        description: `PNG, JPEG or WebP (SVG is refused: it can carry script), at most ${MAX_LOGO_BYTES / 1024} KB; the bytes must be of the declared type. ${SESSION_NOTE}`,
        tags: TAGS,
        params: ProjectParams,
        body: LogoBody,
        response: { 200: ProjectDetail, ...errorResponses(400, 401, 403, 404, 413, 422) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      await projects.setLogo(accountOf(request), id, (request.body as typeof LogoBody.static).image)
      return projectDetail(request, id)
    },
  )

  app.delete(
    '/projects/:id/logo',
    {
      schema: {
        summary: "Remove the project's logo",
        description: SESSION_NOTE,
        tags: TAGS,
        params: ProjectParams,
        response: { 200: ProjectDetail, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      await projects.deleteLogo(accountOf(request), id)
      return projectDetail(request, id)
    },
  )

  app.get(
    '/projects/:id/keys',
    {
      schema: {
        summary: "List the project's API keys",
        description: `Keys are listed by prefix; a full key is never shown again after its creation. ${SESSION_NOTE}`,
        tags: TAGS,
        params: ProjectParams,
        response: { 200: Type.Object({ keys: Type.Array(KeySummary) }), ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      return { keys: (await projects.keys(accountOf(request), id)).map(toKeySummary) }
    },
  )

  app.post(
    '/projects/:id/keys',
    {
      schema: {
        summary: 'Create an API key',
        description: `The full key is in this response only. ${SESSION_NOTE}`,
        tags: TAGS,
        params: ProjectParams,
        body: CreateKeyBody,
        response: { 201: CreatedKey, ...errorResponses(400, 401, 403, 404, 422) },
      },
      // Every field is optional, so no body at all is an empty one.
      preValidation: async (request) => {
        request.body ??= {}
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string }
      const { name } = request.body as typeof CreateKeyBody.static
      const key = await projects.createKey(accountOf(request), id, name ?? DEFAULT_API_KEY_NAME)
      return reply.code(201).send({ id: key.id, name: key.name, prefix: key.prefix, apiKey: key.apiKey, createdAt: toIso(key.createdAtMs) })
    },
  )

  app.delete(
    '/projects/:id/keys/:keyId',
    {
      schema: {
        summary: 'Revoke an API key',
        description: `The key gets 401 at once on this instance and within 5 seconds on every other. Revoking twice keeps the first time. ${SESSION_NOTE}`,
        tags: TAGS,
        params: KeyParams,
        response: { 200: Type.Object({ id: Type.String(), revokedAt: Timestamp() }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { id, keyId } = request.params as { id: string; keyId: string }
      const key = await projects.revokeKey(accountOf(request), id, keyId)
      return { id: key.id, revokedAt: toIso(key.revokedAtMs as number) }
    },
  )

  app.get(
    '/projects/:id/analytics',
    {
      schema: {
        summary: 'Usage analytics',
        description: `Payloads created in the last 30 or 7 UTC days (ending today), by their current status. ${SESSION_NOTE}`,
        tags: TAGS,
        params: ProjectParams,
        querystring: AnalyticsQuery,
        response: { 200: AnalyticsBody, ...errorResponses(401, 404, 422) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      const { period } = request.query as { period: AnalyticsPeriod }
      return projects.analytics(accountOf(request), id, period)
    },
  )

  app.get(
    '/projects/:id/payloads',
    {
      schema: {
        summary: "List the project's payloads, newest first",
        description: `The dashboard's view of GET /payloads. ${SESSION_NOTE}`,
        tags: TAGS,
        params: ProjectParams,
        querystring: PayloadListQuery,
        response: {
          200: Type.Object({ payloads: Type.Array(PayloadView), ...PageFields }),
          ...errorResponses(401, 404, 422),
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string }
      const query = request.query as { limit: number; offset: number; status?: PayloadStatus; type?: PayloadType; q?: string }
      const payloads = await projects.payloads(accountOf(request), id, {
        limit: query.limit,
        offset: query.offset,
        status: query.status,
        type: query.type,
        search: query.q === undefined || query.q.trim() === '' ? undefined : query.q,
      })
      return { payloads: payloads.map(toPayloadView), limit: query.limit, offset: query.offset }
    },
  )

  app.get(
    '/projects/:id/payloads/:uuid',
    {
      schema: {
        summary: 'A payload with what was requested',
        description: `The payload as GET /payloads/{uuid} shows it, plus the request's transaction, message, customInstructions and returnUrl. ${SESSION_NOTE}`,
        tags: TAGS,
        params: PayloadParams,
        response: { 200: PayloadDetail, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const { id, uuid } = request.params as { id: string; uuid: string }
      return toPayloadDetail(await projects.payload(accountOf(request), id, uuid))
    },
  )
}
