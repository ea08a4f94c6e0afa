// A project's payloads as the dashboard reads them (docs/interface.md §5), authenticated by the dashboard session:
// the analytics of their statuses by day, the list, and one payload with what was requested.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses, readPage } from '../../platform/http/schemas.js'
import { PayloadList, ProjectPayloadListQuery } from '../payloads/schemas.js'
import { toPayloadView } from '../payloads/view.js'
import type { AccountProjects } from './account-projects.js'
import { DEFAULT_ANALYTICS_PERIOD } from './analytics.js'
import { Analytics, AnalyticsQuery, PayloadDetail, ProjectParams, ProjectPayloadParams } from './schemas.js'
import { accountOf, PROJECT_TAGS, SESSION_NOTE } from './session-scope.js'
import { toPayloadDetail } from './view.js'

export interface ProjectPayloadRoutesDeps {
  projects: AccountProjects
}

export const projectPayloadRoutes: FastifyPluginAsyncTypebox<ProjectPayloadRoutesDeps> = async (app, { projects }) => {
  app.get(
    '/projects/:id/analytics',
    {
      schema: {
        summary: 'Usage analytics',
        description: `Payloads created in the last 30 or 7 UTC days (ending today), by their current status. ${SESSION_NOTE}`,
        tags: PROJECT_TAGS,
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
        tags: PROJECT_TAGS,
        params: ProjectParams,
        querystring: ProjectPayloadListQuery,
        response: { 200: PayloadList, ...errorResponses(401, 404, 422) },
      },
    },
    async (request) => {
      const { id } = request.params
      const { status, type, externalId, after, q } = request.query
      const search = q === undefined || q.trim() === '' ? undefined : q
      const { items, ...paging } = await readPage(request.query, (rows) =>
        projects.payloads(accountOf(request), id, { ...rows, status, type, externalId, after, search }),
      )
      return { payloads: items.map(toPayloadView), ...paging }
    },
  )

  app.get(
    '/projects/:id/payloads/:uuid',
    {
      schema: {
        summary: 'A payload with what was requested',
        description: `The payload as GET /payloads/{uuid} shows it, plus the request's transaction, message, customInstructions and returnUrl. ${SESSION_NOTE}`,
        tags: PROJECT_TAGS,
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
