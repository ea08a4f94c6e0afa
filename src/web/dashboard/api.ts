// The session endpoints as the dashboard calls them: same-origin fetches that carry the session cookie (and, for
// changes, the Origin header the browser adds), typed by the shapes the server declares.

import type { SessionAccount, SessionView, SignInMethods } from '../../features/accounts/schemas.js'
import type { PayloadEvent } from '../../features/payloads/model.js'
import type { PayloadList, PayloadView, ProjectPayloadListQuery } from '../../features/payloads/schemas.js'
import type { AnalyticsPeriod } from '../../features/projects/analytics.js'
import type {
  Analytics,
  ApiKeyList,
  ApiKeySummary,
  CreatedApiKey,
  CreatedProject,
  DailyAnalytics,
  PayloadDetail,
  ProjectDetail,
  ProjectList,
  ProjectSettings,
  ProjectSummary,
  ProjectWebsite,
  RevokedApiKey,
  WebsiteCheck,
} from '../../features/projects/schemas.js'
import type {
  CreatedWebhook,
  DeletedWebhook,
  DeliveryList,
  DeliveryView,
  PayloadDeliveryList,
  PayloadDeliveryView,
  WebhookList,
  WebhookView,
} from '../../features/webhooks/schemas.js'
import { callApi } from '../shared/api-client.js'

export type {
  Analytics,
  ApiKeySummary,
  CreatedApiKey,
  CreatedProject,
  CreatedWebhook,
  DeliveryView,
  PayloadDetail,
  ProjectDetail,
  ProjectSummary,
  ProjectWebsite,
  WebhookView,
}
export type Account = SessionAccount
export type Period = AnalyticsPeriod
export type DailyCounts = DailyAnalytics
export type PayloadSummary = PayloadView
export type PayloadDelivery = PayloadDeliveryView
/** A page of a project's payloads: the list's filters and the search (`q`). */
export type PayloadFilter = Omit<ProjectPayloadListQuery, 'limit' | 'offset'> & { limit: number; offset: number }

const project = (id: string) => `/api/v1/projects/${encodeURIComponent(id)}`
const webhook = (projectId: string, webhookId: string) => `${project(projectId)}/webhooks/${encodeURIComponent(webhookId)}`

export const api = {
  session: () => get<SessionView>('/api/v1/session'),
  signInMethods: () => get<SignInMethods>('/auth/methods'),

  projects: async () => (await get<ProjectList>('/api/v1/projects')).projects,
  createProject: (name: string) => send<CreatedProject>('POST', '/api/v1/projects', { name }),
  project: (id: string) => get<ProjectDetail>(project(id)),
  updateProject: (id: string, change: ProjectSettings) => send<ProjectDetail>('PATCH', project(id), change),
  verifyWebsite: (id: string) => send<WebsiteCheck>('POST', `${project(id)}/website/verify`),
  setLogo: (id: string, image: string) => send<ProjectDetail>('PUT', `${project(id)}/logo`, { image }),
  deleteLogo: (id: string) => send<ProjectDetail>('DELETE', `${project(id)}/logo`),
  analytics: (id: string, period: Period) => get<Analytics>(`${project(id)}/analytics?period=${period}`),

  keys: async (id: string) => (await get<ApiKeyList>(`${project(id)}/keys`)).keys,
  createKey: (id: string, name: string) => send<CreatedApiKey>('POST', `${project(id)}/keys`, { name }),
  revokeKey: (id: string, keyId: string) => send<RevokedApiKey>('DELETE', `${project(id)}/keys/${encodeURIComponent(keyId)}`),

  payloads: async (id: string, filter: PayloadFilter) => {
    const query = new URLSearchParams({ limit: String(filter.limit), offset: String(filter.offset) })
    if (filter.status) query.set('status', filter.status)
    if (filter.type) query.set('type', filter.type)
    if (filter.q) query.set('q', filter.q)
    return get<PayloadList>(`${project(id)}/payloads?${query}`)
  },
  payload: (id: string, uuid: string) => get<PayloadDetail>(`${project(id)}/payloads/${encodeURIComponent(uuid)}`),
  payloadDeliveries: async (id: string, uuid: string) =>
    (await get<PayloadDeliveryList>(`${project(id)}/payloads/${encodeURIComponent(uuid)}/deliveries`)).deliveries,

  webhooks: async (id: string) => (await get<WebhookList>(`${project(id)}/webhooks`)).webhooks,
  createWebhook: (id: string, url: string, events: PayloadEvent[]) =>
    send<CreatedWebhook>('POST', `${project(id)}/webhooks`, { url, events }),
  deleteWebhook: (id: string, webhookId: string) => send<DeletedWebhook>('DELETE', webhook(id, webhookId)),
  deliveries: async (id: string, webhookId: string) =>
    (await get<DeliveryList>(`${webhook(id, webhookId)}/deliveries?limit=50`)).deliveries,
  retryDelivery: (id: string, webhookId: string, deliveryId: string) =>
    send<DeliveryView>('POST', `${webhook(id, webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/retry`),
  sendTest: (id: string, webhookId: string) => send<DeliveryView>('POST', `${webhook(id, webhookId)}/test`),
  enableWebhook: (id: string, webhookId: string) => send<WebhookView>('POST', `${webhook(id, webhookId)}/enable`),
}

async function get<T>(url: string): Promise<T> {
  return (await callApi(url, { method: 'GET' })).json() as Promise<T>
}

async function send<T>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown): Promise<T> {
  return (await callApi(url, { method, body: body === undefined ? undefined : JSON.stringify(body) })).json() as Promise<T>
}
