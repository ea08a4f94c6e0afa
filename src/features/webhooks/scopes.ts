// Where the webhook API is registered (docs/interface.md §4, docs/webhooks.md): under the API-key scope
// (/api/v1/webhooks/..., for applications) and under the session scope (/api/v1/projects/{projectId}/webhooks/...,
// for the dashboard). A scope says whose project a request acts for, and what its routes add to the OpenAPI document.
import type { FastifyRequest } from 'fastify'
import { type TProperties, type TString, Type } from 'typebox'
import { notFound } from '../../platform/errors.js'
import { principalOf } from '../../platform/http/api-key-auth.js'
import { ApiKeyQuery } from '../../platform/http/schemas.js'
import { sessionOf } from '../../platform/http/session-auth.js'
import type { AccountProjects } from '../projects/account-projects.js'
import { SESSION_NOTE } from '../projects/session-scope.js'
import type { ProjectScope } from './service.js'

/** Where the webhook routes are registered, and for which project a request there acts. */
export interface WebhookScope {
  /** Path parameters of the prefix the routes are registered under: none, or the project's (`projectId`). */
  params: { projectId?: TString }
  /** Query parameters every route accepts besides its own: `api_key` under the API-key scope. */
  query: TProperties
  /** Statuses any route may answer besides its own: 401, and 429 (the project's rate) or 404 (not the account's project). */
  errors: readonly (401 | 404 | 429)[]
  tags: string[]
  /** Ends every route's description in the OpenAPI document. */
  note: string
  /** Whether creations honour an Idempotency-Key (docs/api.md): under the API-key scope, whose hooks implement it. */
  idempotent: boolean
  /** The project the request acts for, with its plan (webhooks are a Pro feature). */
  projectOf(request: FastifyRequest): ProjectScope | Promise<ProjectScope>
}

/** For applications: the API key's project. */
export const apiKeyScope: WebhookScope = {
  params: {},
  query: ApiKeyQuery,
  errors: [401, 429],
  tags: ['webhooks'],
  note: 'Webhooks are a Pro plan feature: a Free project gets 403 on every webhook endpoint.',
  idempotent: true,
  projectOf: principalOf,
}

/** For the dashboard, under the prefix /projects/:projectId: the signed-in account's own project (404 for any other). */
export function sessionScope(projects: AccountProjects): WebhookScope {
  return {
    params: { projectId: Type.String({ description: 'Project id, proj_...' }) },
    query: {},
    errors: [401, 404],
    tags: ['projects'],
    note: `${SESSION_NOTE} Webhooks are a Pro plan feature: a Free project gets 403.`,
    idempotent: false,
    projectOf: (request) => accountProject(projects, request, projectIdOf(request.params)),
  }
}

/** The signed-in account's own project (404 otherwise) as the webhook service sees it: its id and plan. */
export async function accountProject(projects: AccountProjects, request: FastifyRequest, projectId: string): Promise<ProjectScope> {
  const project = await projects.project(sessionOf(request).account.id, projectId)
  return { projectId: project.id, plan: project.plan }
}

function projectIdOf(params: unknown): string {
  if (typeof params === 'object' && params !== null && 'projectId' in params && typeof params.projectId === 'string')
    return params.projectId
  throw notFound('Project not found')
}
