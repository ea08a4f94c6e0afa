// Signed-in dashboard requests over real HTTP: an account with a session (made by the real services, as a
// sign-in would), and a client that sends its cookie and, for changes, the Origin a dashboard page sends.
import type { TestService } from './service.js'

export interface DashboardResponse {
  status: number
  headers: Headers
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies field by field
  body: any
}

export interface RequestOptions {
  /** The Origin header; the service's own origin unless given; null sends none. */
  origin?: string | null
  /** The raw body text, sent instead of `body` as JSON. */
  rawBody?: string
  headers?: Record<string, string>
}

export interface DashboardClient {
  accountId: string
  cookie: string
  get(path: string, options?: RequestOptions): Promise<DashboardResponse>
  post(path: string, body?: unknown, options?: RequestOptions): Promise<DashboardResponse>
  delete(path: string, options?: RequestOptions): Promise<DashboardResponse>
  patch(path: string, body?: unknown, options?: RequestOptions): Promise<DashboardResponse>
  put(path: string, body?: unknown, options?: RequestOptions): Promise<DashboardResponse>
}

/** Signs in `subject` (an account of a test provider) and returns a client with its session. */
export async function signedIn(t: TestService, subject: string, email = `${subject}@example.com`): Promise<DashboardClient> {
  const account = await t.service.ctx.accounts.recordSignIn({ issuer: 'https://idp.example', subject, email, name: subject })
  const session = await t.service.ctx.sessions.start(account.id)
  return dashboardClient(t, `cs_session=${session.token}`, account.id)
}

/** A client with any cookie (or none): for requests without a valid session. */
export function dashboardClient(t: TestService, cookie: string | undefined, accountId = ''): DashboardClient {
  const ownOrigin = new URL(t.config.publicUrl).origin
  async function send(method: string, path: string, body: unknown, options: RequestOptions = {}): Promise<DashboardResponse> {
    const headers: Record<string, string> = { ...options.headers }
    if (cookie) headers.cookie = cookie
    const origin = options.origin === undefined ? (method === 'GET' ? undefined : ownOrigin) : options.origin
    if (origin) headers.origin = origin
    const text = options.rawBody ?? (body === undefined ? undefined : JSON.stringify(body))
    if (text !== undefined) headers['content-type'] ??= 'application/json'
    const response = await fetch(`${t.url}${path}`, { method, headers, body: text, redirect: 'manual' })
    const raw = await response.text()
    return { status: response.status, headers: response.headers, body: raw === '' ? undefined : JSON.parse(raw) }
  }
  return {
    accountId,
    cookie: cookie ?? '',
    get: (path, options) => send('GET', path, undefined, options),
    post: (path, body, options) => send('POST', path, body, options),
    delete: (path, options) => send('DELETE', path, undefined, options),
    patch: (path, body, options) => send('PATCH', path, body, options),
    put: (path, body, options) => send('PUT', path, body, options),
  }
}
