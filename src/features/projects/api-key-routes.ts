// The API-key endpoints of a project (docs/interface.md §5), authenticated by the dashboard session: list, create,
// revoke.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../../platform/http/schemas.js'
import { toIso } from '../../platform/utc.js'
import { type AccountProjects, MAX_ACTIVE_KEYS_PER_PROJECT } from './account-projects.js'
import { DEFAULT_API_KEY_NAME } from './names.js'
import { ApiKeyList, CreatedApiKey, CreateKeyBody, KeyParams, ProjectParams, RevokedApiKey } from './schemas.js'
import { accountOf, PROJECT_TAGS, SESSION_NOTE } from './session-scope.js'
import { toKeySummary } from './view.js'

export interface ApiKeyRoutesDeps {
  projects: AccountProjects
}

export const apiKeyRoutes: FastifyPluginAsyncTypebox<ApiKeyRoutesDeps> = async (app, { projects }) => {
  app.get(
    '/projects/:id/keys',
    {
      schema: {
        summary: "List the project's API keys",
        description: `Keys are listed by prefix; a full key is never shown again after its creation. ${SESSION_NOTE}`,
        tags: PROJECT_TAGS,
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
        description: `The full key is in this response only. A project has at most ${MAX_ACTIVE_KEYS_PER_PROJECT} active keys: one more is 409 (revoke one first). ${SESSION_NOTE}`,
        tags: PROJECT_TAGS,
        params: ProjectParams,
        body: CreateKeyBody,
        response: { 201: CreatedApiKey, ...errorResponses(400, 401, 403, 404, 409, 422) },
      },
      // Every field is optional, so no body at all is an empty one; a body of JSON `null` is still one that is not an
      // object (400, as on every route).
      preValidation: async (request) => {
        if (request.body === undefined) request.body = {}
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
        tags: PROJECT_TAGS,
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
}
