// The session endpoints as the dashboard calls them: same-origin fetches that carry the session cookie (and, for
// changes, the Origin header the browser adds), typed by the shapes the server declares.

import type { PayloadEvent, PayloadView } from '../../features/payloads/model.js'
import type { Analytics, AnalyticsPeriod, DailyAnalytics } from '../../features/projects/analytics.js'
import type { DeliveryView, WebhookView } from '../../features/webhooks/model.js'
import { callApi } from '../shared/api-client.js'

export interface Account {
  id: string
  email: string | null
  name: string | null
}

export interface ProjectSummary {
  id: string
  name: string
  displayName: string | null
  plan: string
  createdAt: string
}

export interface ProjectWebsite {
  url: string
  verified: boolean
  verifiedAt: string | null
  proofUrl: string
  proofLine: string
}

export interface ProjectDetail extends ProjectSummary {
  website: ProjectWebsite | null
  logoUrl: string | null
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
  /** A uuid or its start, or a signer address. */
  q?: string
}

/** A webhook and a delivery as the webhook API shows them. */
export type { DeliveryView, WebhookView }

export interface CreatedWebhook {
  id: string
  url: string
  secret: string
  events: PayloadEvent[]
}

/** A delivery listed under its payload: which webhook it went to as well. */
export interface PayloadDelivery extends DeliveryView {
  webhookId: string
}

const project = (id: string) => `/api/v1/projects/${encodeURIComponent(id)}`
const webhook = (projectId: string, webhookId: string) => `${project(projectId)}/webhooks/${encodeURIComponent(webhookId)}`

export const api = {
  session: () => get<{ account: Account }>('/api/v1/session'),
  signInMethods: () => get<{ oidc: boolean; localLink: boolean }>('/auth/methods'),

  projects: async () => (await get<{ projects: ProjectSummary[] }>('/api/v1/projects')).projects,
  createProject: (name: string) => send<CreatedProject>('POST', '/api/v1/projects', { name }),
  project: (id: string) => get<ProjectDetail>(project(id)),
  updateProject: (id: string, change: { displayName?: string | null; websiteUrl?: string | null }) =>
    send<ProjectDetail>('PATCH', project(id), change),
  verifyWebsite: (id: string) =>
    send<{ check: { verified: boolean; problem?: string }; project: ProjectDetail }>('POST', `${project(id)}/website/verify`),
  setLogo: (id: string, image: string) => send<ProjectDetail>('PUT', `${project(id)}/logo`, { image }),
  deleteLogo: (id: string) => send<ProjectDetail>('DELETE', `${project(id)}/logo`),
  analytics: (id: string, period: Period) => get<Analytics>(`${project(id)}/analytics?period=${period}`),

  keys: async (id: string) => (await get<{ keys: ApiKeySummary[] }>(`${project(id)}/keys`)).keys,
  createKey: (id: string, name: string) => send<CreatedApiKey>('POST', `${project(id)}/keys`, { name }),
  revokeKey: (id: string, keyId: string) =>
    send<{ id: string; revokedAt: string }>('DELETE', `${project(id)}/keys/${encodeURIComponent(keyId)}`),

  payloads: async (id: string, filter: PayloadFilter) => {
    const query = new URLSearchParams({ limit: String(filter.limit), offset: String(filter.offset) })
    if (filter.status) query.set('status', filter.status)
    if (filter.type) query.set('type', filter.type)
    if (filter.q) query.set('q', filter.q)
    return (await get<{ payloads: PayloadSummary[] }>(`${project(id)}/payloads?${query}`)).payloads
  },
  payload: (id: string, uuid: string) => get<PayloadDetail>(`${project(id)}/payloads/${encodeURIComponent(uuid)}`),
  payloadDeliveries: async (id: string, uuid: string) =>
    (await get<{ deliveries: PayloadDelivery[] }>(`${project(id)}/payloads/${encodeURIComponent(uuid)}/deliveries`)).deliveries,

  webhooks: async (id: string) => (await get<{ webhooks: WebhookView[] }>(`${project(id)}/webhooks`)).webhooks,
  createWebhook: (id: string, url: string, events: PayloadEvent[]) =>
    send<CreatedWebhook>('POST', `${project(id)}/webhooks`, { url, events }),
  deleteWebhook: (id: string, webhookId: string) => send<{ id: string }>('DELETE', webhook(id, webhookId)),
  deliveries: async (id: string, webhookId: string) =>
    (await get<{ deliveries: DeliveryView[] }>(`${webhook(id, webhookId)}/deliveries?limit=50`)).deliveries,
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
