// The project endpoints (docs/interface.md §4-5), authenticated by the dashboard session: projects, API keys,
// usage, analytics, and read access to payloads for the dashboard.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { toIso } from '../../platform/clock.js'
import { errorResponses, pageOf } from '../../platform/http/schemas.js'
import { sessionOf } from '../../platform/http/session-auth.js'
import { type Payload, toPayloadView } from '../payloads/model.js'
import { PayloadList, ProjectPayloadListQuery } from '../payloads/schemas.js'
import type { AccountProjects } from './account-projects.js'
import { DEFAULT_ANALYTICS_PERIOD } from './analytics.js'
import type { ApiKeyRecord } from './api-keys-repository.js'
import { DEFAULT_API_KEY_NAME } from './names.js'
import { logoPath, MAX_LOGO_BYTES, WEBSITE_PROOF_PATH, websiteProofLine } from './project-branding.js'
import type { Project } from './repository.js'
import {
  Analytics,
  AnalyticsQuery,
  ApiKeyList,
  type ApiKeySummary,
  CreatedApiKey,
  CreatedProject,
  CreateKeyBody,
  CreateProjectBody,
  KeyParams,
  LogoBody,
  PayloadDetail,
  ProjectDetail,
  ProjectList,
  ProjectParams,
  ProjectPayloadParams,
  ProjectSettingsBody,
  type ProjectSummary,
  type ProjectWebsite,
  RevokedApiKey,
  WebsiteCheck,
} from './schemas.js'

const TAGS = ['projects']
const SESSION_NOTE = 'Session-authenticated (the dashboard cookie); API keys are not accepted. Changes need an Origin equal to PUBLIC_URL.'

const toProjectSummary = (project: Project): ProjectSummary => ({
  id: project.id,
  name: project.name,
  displayName: project.displayName,
  plan: project.plan,
  createdAt: toIso(project.createdAtMs),
})

const toWebsite = (project: Project): ProjectWebsite =>
  project.website === null
    ? null
    : {
        url: project.website.url,
        verified: project.website.verifiedAtMs !== null,
        verifiedAt: project.website.verifiedAtMs === null ? null : toIso(project.website.verifiedAtMs),
        proofUrl: `${project.website.url}${WEBSITE_PROOF_PATH}`,
        proofLine: websiteProofLine(project.website.token),
      }

const toKeySummary = (key: ApiKeyRecord): ApiKeySummary => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  createdAt: toIso(key.createdAtMs),
  lastUsedAt: key.lastUsedAtMs === null ? null : toIso(key.lastUsedAtMs),
  revokedAt: key.revokedAtMs === null ? null : toIso(key.revokedAtMs),
})

const toPayloadDetail = (payload: Payload): PayloadDetail => ({
  ...toPayloadView(payload),
  transaction: payload.transaction,
  message: payload.message,
  customInstructions: payload.customInstructions,
  returnUrl: payload.returnUrl,
})

export interface ProjectRoutesDeps {
  projects: AccountProjects
}

export const projectRoutes: FastifyPluginAsyncTypebox<ProjectRoutesDeps> = async (app, { projects }) => {
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
          201: CreatedProject,
          ...errorResponses(400, 401, 403, 422),
        },
      },
    },
    async (request, reply) => {
      const { name } = request.body
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
        response: { 200: ProjectList, ...errorResponses(401) },
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
      const { id } = request.params
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
      const { id } = request.params
      await projects.updateSettings(accountOf(request), id, request.body)
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
          200: WebsiteCheck,
          ...errorResponses(401, 403, 404, 422),
        },
      },
    },
    async (request) => {
      const { id } = request.params
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
      const { id } = request.params
      await projects.setLogo(accountOf(request), id, request.body.image)
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
      const { id } = request.params
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
        response: { 200: ApiKeyList, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const { id } = request.params
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
        response: { 201: CreatedApiKey, ...errorResponses(400, 401, 403, 404, 422) },
      },
      // Every field is optional, so no body at all is an empty one.
      preValidation: async (request) => {
        request.body ??= {}
      },
    },
    async (request, reply) => {
      const { id } = request.params
      const { name } = request.body
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
        response: { 200: RevokedApiKey, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const { id, keyId } = request.params
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
        response: { 200: Analytics, ...errorResponses(401, 404, 422) },
      },
    },
    async (request) => {
      const { id } = request.params
      const { period = DEFAULT_ANALYTICS_PERIOD } = request.query
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
        querystring: ProjectPayloadListQuery,
        response: { 200: PayloadList, ...errorResponses(401, 404, 422) },
      },
    },
    async (request) => {
      const { id } = request.params
      const { status, type, externalId, q } = request.query
      const page = pageOf(request.query)
      const search = q === undefined || q.trim() === '' ? undefined : q
      const payloads = await projects.payloads(accountOf(request), id, { ...page, status, type, externalId, search })
      return { payloads: payloads.map(toPayloadView), ...page }
    },
  )

  app.get(
    '/projects/:id/payloads/:uuid',
    {
      schema: {
        summary: 'A payload with what was requested',
        description: `The payload as GET /payloads/{uuid} shows it, plus the request's transaction, message, customInstructions and returnUrl. ${SESSION_NOTE}`,
        tags: TAGS,
        params: ProjectPayloadParams,
        response: { 200: PayloadDetail, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const { id, uuid } = request.params
      return toPayloadDetail(await projects.payload(accountOf(request), id, uuid))
    },
  )
}
