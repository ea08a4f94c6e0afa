// The project endpoints (docs/interface.md §4-5), authenticated by the dashboard session: the account's projects, one
// project with its usage and limits, and what the signing page shows of it (display name, website, logo). Its API keys
// are api-key-routes.ts; its payloads and their analytics, payload-routes.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { errorResponses } from '../../platform/http/schemas.js'
import { type AccountProjects, WEBSITE_CHECKS_PER_MINUTE } from './account-projects.js'
import { logoPath, MAX_LOGO_BYTES, WEBSITE_PROOF_PATH } from './project-branding.js'
import {
  CreatedProject,
  CreateProjectBody,
  LogoBody,
  ProjectDetail,
  ProjectList,
  ProjectParams,
  ProjectSettingsBody,
  WebsiteCheck,
} from './schemas.js'
import { accountOf, PROJECT_TAGS, SESSION_NOTE } from './session-scope.js'
import { toProjectSummary, toWebsite } from './view.js'

export interface ProjectRoutesDeps {
  projects: AccountProjects
}

export const projectRoutes: FastifyPluginAsyncTypebox<ProjectRoutesDeps> = async (app, { projects }) => {
  app.post(
    '/projects',
    {
      schema: {
        summary: 'Create a project',
        description: `The project starts on the Free plan with one API key, returned here in full and never again. An account has at most PROJECTS_PER_ACCOUNT projects (20 by default): one more is 409. ${SESSION_NOTE}`,
        tags: PROJECT_TAGS,
        body: CreateProjectBody,
        response: {
          201: CreatedProject,
          ...errorResponses(400, 401, 403, 409, 422),
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
        tags: PROJECT_TAGS,
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
        tags: PROJECT_TAGS,
        params: ProjectParams,
        response: { 200: ProjectDetail, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const { id } = request.params
      return projectDetail(request, id)
    },
  )

  const projectDetail = async (request: FastifyRequest, id: string) => {
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
        tags: PROJECT_TAGS,
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
        description: `The service fetches ${WEBSITE_PROOF_PATH} from the website's origin (public addresses only, no redirects, 5 seconds, 4 KB) and looks for the project's proof line. 200 either way: \`check.verified\` says the outcome and \`check.problem\` why not. At most ${WEBSITE_CHECKS_PER_MINUTE} checks a minute per project: more is 429 with Retry-After. ${SESSION_NOTE}`,
        tags: PROJECT_TAGS,
        params: ProjectParams,
        response: {
          200: WebsiteCheck,
          ...errorResponses(401, 403, 404, 422, 429),
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
        tags: PROJECT_TAGS,
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
        tags: PROJECT_TAGS,
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
}
