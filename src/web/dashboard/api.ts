// The session endpoints as the dashboard calls them: same-origin fetches that carry the session cookie (and, for
// changes, the Origin header the browser adds), typed by the shapes the server declares.
import type { Analytics, AnalyticsPeriod, DailyAnalytics } from '../../domain/analytics.js'
import type { FieldError } from '../../domain/errors.js'
import type { PayloadView } from '../../domain/payloads.js'

export interface Account {
  id: string
  email: string | null
  name: string | null
}

export interface ProjectSummary {
  id: string
  name: string
  plan: string
  createdAt: string
}

export interface ProjectDetail extends ProjectSummary {
  usage: { month: string; used: number; limit: number }
  limits: { requestsPerMinute: number; minPollIntervalMs: number; maxExpiresInSeconds: number; monthlyPayloads: number }
}

export interface CreatedProject {
  id: string
  name: string
  apiKey: string
}

export interface ApiKeySummary {
  id: string
  name: string
  prefix: string
  createdAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

export interface CreatedApiKey {
  id: string
  name: string
  prefix: string
  apiKey: string
  createdAt: string
}

export type Period = AnalyticsPeriod
export type DailyCounts = DailyAnalytics
export type { Analytics }

/** A payload as the list and detail show it: the payload API's own view. */
export type PayloadSummary = PayloadView

export interface PayloadDetail extends PayloadSummary {
  transaction: Record<string, unknown> | null
  message: string | null
  customInstructions: string | null
  returnUrl: string | null
}

export interface PayloadFilter {
  limit: number
  offset: number
  status?: string
  type?: string
}

export interface Webhook {
  id: string
  url: string
  events: string[]
  createdAt: string
  disabledAt?: string
  disabledReason?: string | null
}

export interface CreatedWebhook {
  id: string
  url: string
  secret: string
  events: string[]
}

export interface Delivery {
  id: string
  event: string
  payloadUuid: string | null
  state: string
  attempts: number
  lastStatusCode: number | null
  lastError: string | null
  nextAttemptAt: string | null
  createdAt: string
  completedAt: string | null
}

/** A delivery listed under its payload: which webhook it went to as well. */
export interface PayloadDelivery extends Delivery {
  webhookId: string
}

/** An error answer of the API, or a failure to reach it (status 0). */
export class ApiError extends Error {
  override name = 'ApiError'
  constructor(
    readonly status: number,
    message: string,
    readonly details: FieldError[] = [],
  ) {
    super(message)
  }
}

const project = (id: string) => `/api/v1/projects/${encodeURIComponent(id)}`
const webhook = (projectId: string, webhookId: string) => `${project(projectId)}/webhooks/${encodeURIComponent(webhookId)}`

export const api = {
  session: () => get<{ account: Account }>('/api/v1/session'),
  signInMethods: () => get<{ oidc: boolean; localLink: boolean }>('/auth/methods'),

  projects: async () => (await get<{ projects: ProjectSummary[] }>('/api/v1/projects')).projects,
  createProject: (name: string) => send<CreatedProject>('POST', '/api/v1/projects', { name }),
  project: (id: string) => get<ProjectDetail>(project(id)),
  analytics: (id: string, period: Period) => get<Analytics>(`${project(id)}/analytics?period=${period}`),

  keys: async (id: string) => (await get<{ keys: ApiKeySummary[] }>(`${project(id)}/keys`)).keys,
  createKey: (id: string, name: string) => send<CreatedApiKey>('POST', `${project(id)}/keys`, { name }),
  revokeKey: (id: string, keyId: string) =>
    send<{ id: string; revokedAt: string }>('DELETE', `${project(id)}/keys/${encodeURIComponent(keyId)}`),

  payloads: async (id: string, filter: PayloadFilter) => {
    const query = new URLSearchParams({ limit: String(filter.limit), offset: String(filter.offset) })
    if (filter.status) query.set('status', filter.status)
    if (filter.type) query.set('type', filter.type)
    return (await get<{ payloads: PayloadSummary[] }>(`${project(id)}/payloads?${query}`)).payloads
  },
  payload: (id: string, uuid: string) => get<PayloadDetail>(`${project(id)}/payloads/${encodeURIComponent(uuid)}`),
  payloadDeliveries: async (id: string, uuid: string) =>
    (await get<{ deliveries: PayloadDelivery[] }>(`${project(id)}/payloads/${encodeURIComponent(uuid)}/deliveries`)).deliveries,

  webhooks: async (id: string) => (await get<{ webhooks: Webhook[] }>(`${project(id)}/webhooks`)).webhooks,
  createWebhook: (id: string, url: string, events: string[]) => send<CreatedWebhook>('POST', `${project(id)}/webhooks`, { url, events }),
  deleteWebhook: (id: string, webhookId: string) => send<{ id: string }>('DELETE', webhook(id, webhookId)),
  deliveries: async (id: string, webhookId: string) =>
    (await get<{ deliveries: Delivery[] }>(`${webhook(id, webhookId)}/deliveries?limit=50`)).deliveries,
  retryDelivery: (id: string, webhookId: string, deliveryId: string) =>
    send<Delivery>('POST', `${webhook(id, webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/retry`),
  sendTest: (id: string, webhookId: string) => send<Delivery>('POST', `${webhook(id, webhookId)}/test`),
}

function get<T>(url: string): Promise<T> {
  return call<T>(url, { method: 'GET', headers: { accept: 'application/json' } })
}

function send<T>(method: 'POST' | 'DELETE', url: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  return call<T>(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
}

async function call<T>(url: string, init: RequestInit): Promise<T> {
  let response: Response
  try {
    response = await fetch(url, { ...init, cache: 'no-store', credentials: 'same-origin' })
  } catch (error) {
    throw new ApiError(0, `The service could not be reached (${(error as Error).message})`)
  }
  if (!response.ok) throw await errorFrom(response)
  return (await response.json()) as T
}

async function errorFrom(response: Response): Promise<ApiError> {
  let body: { error?: unknown; details?: unknown } = {}
  try {
    body = (await response.json()) as typeof body
  } catch {
    // A proxy's HTML error page: the status alone has to speak.
  }
  const message = typeof body.error === 'string' ? body.error : `The service answered with status ${response.status}`
  const details = Array.isArray(body.details)
    ? body.details.filter((detail): detail is FieldError => typeof detail?.field === 'string' && typeof detail?.message === 'string')
    : []
  return new ApiError(response.status, message, details)
}
