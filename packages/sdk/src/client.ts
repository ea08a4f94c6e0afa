// The Countersign client: every API-key endpoint, typed, over the global fetch.
import { CountersignError } from './errors.js'
import { readEventStream } from './event-stream.js'
import type {
  CreatedPayload,
  CreatedWebhook,
  CreatePayloadRequest,
  CreateWebhookRequest,
  ListPayloadsOptions,
  Payload,
  PayloadList,
  Webhook,
} from './types.js'

export interface CountersignOptions {
  apiKey: string
  /** The service's address, e.g. https://countersign.example.com (without /api/v1). */
  baseUrl: string
  /** Times a request refused with 429 is sent again after waiting its Retry-After; 2 by default, 0 to never retry. */
  maxRetries?: number
  /** A 429 asking to wait longer than this is not retried but thrown; 60 000 ms by default. */
  maxRetryWaitMs?: number
  /** Another fetch (a proxy agent, a test double); the global fetch by default. */
  fetch?: typeof fetch
}

export interface WaitOptions {
  signal?: AbortSignal
  /**
   * Polling interval when the live stream cannot be used (refused, or failing again and again); 3000 ms by default,
   * the Free plan's minimum (Pro allows 1000). A poll refused as too fast waits for its Retry-After.
   */
  pollIntervalMs?: number
}

interface RequestOptions {
  body?: unknown
  query?: Record<string, string | number | undefined>
  signal?: AbortSignal | undefined
  accept?: string
  /** Send again after a 429's Retry-After (within the client's bounds); true by default. */
  retryOn429?: boolean
}

/** Consecutive stream attempts that end without news before waitForResolution polls instead. */
const STREAM_ATTEMPTS = 3

export class Countersign {
  readonly payloads: PayloadsApi
  readonly webhooks: WebhooksApi
  private readonly apiBase: string
  private readonly fetch: typeof fetch

  constructor(private readonly options: CountersignOptions) {
    if (!options.apiKey) throw new TypeError('Countersign: apiKey is required')
    this.apiBase = `${new URL(options.baseUrl).href.replace(/\/+$/, '')}/api/v1`
    this.fetch = options.fetch ?? globalThis.fetch
    this.payloads = new PayloadsApi(this)
    this.webhooks = new WebhooksApi(this)
  }

  /** @internal Sends one API request and returns its JSON; throws CountersignError for any answer that is not a success. */
  async requestJson<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options)
    return (await response.json()) as T
  }

  /** @internal Sends a request, waiting out and retrying 429 answers within bounds; returns a successful response. */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const url = new URL(`${this.apiBase}${path}`)
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value))
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.apiKey}`, accept: options.accept ?? 'application/json' }
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    const maxRetries = options.retryOn429 === false ? 0 : (this.options.maxRetries ?? 2)
    const maxWaitMs = this.options.maxRetryWaitMs ?? 60_000
    for (let attempt = 0; ; attempt++) {
      const response = await this.fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
      })
      if (response.ok) return response
      const error = await CountersignError.fromResponse(response)
      // A 429 was not acted on, so sending it again is safe, whatever the method.
      const waitMs = (error.retryAfterSeconds ?? 1) * 1000
      if (error.status !== 429 || attempt >= maxRetries || waitMs > maxWaitMs) throw error
      await sleep(waitMs, options.signal)
    }
  }
}

class PayloadsApi {
  constructor(private readonly client: Countersign) {}

  create(request: CreatePayloadRequest, options: { signal?: AbortSignal } = {}): Promise<CreatedPayload> {
    return this.client.requestJson('POST', '/payloads', { body: request, signal: options.signal })
  }

  get(uuid: string, options: { signal?: AbortSignal } = {}): Promise<Payload> {
    return this.client.requestJson('GET', `/payloads/${encodeURIComponent(uuid)}`, { signal: options.signal })
  }

  /** Cancels a pending payload, which becomes expired; 409 (CountersignError) when it is no longer pending. */
  cancel(uuid: string, options: { signal?: AbortSignal } = {}): Promise<{ uuid: string; status: 'expired' }> {
    return this.client.requestJson('DELETE', `/payloads/${encodeURIComponent(uuid)}`, { signal: options.signal })
  }

  /** The project's payloads, newest first. */
  list(options: ListPayloadsOptions & { signal?: AbortSignal } = {}): Promise<PayloadList> {
    const { signal, ...query } = options
    return this.client.requestJson('GET', '/payloads', { query: { ...query }, signal })
  }

  /**
   * Resolves with the payload once it is signed, rejected or expired. Follows the live stream, reconnecting when it
   * drops; when the stream is refused (the project's stream cap) or keeps failing, polls instead.
   */
  async waitForResolution(uuid: string, options: WaitOptions = {}): Promise<Payload> {
    const { signal } = options
    let failedAttempts = 0
    while (failedAttempts < STREAM_ATTEMPTS) {
      signal?.throwIfAborted()
      let heard = false
      try {
        const response = await this.client.send('GET', `/payloads/${encodeURIComponent(uuid)}/events`, {
          signal,
          accept: 'text/event-stream',
          // A refused stream (too many open, or the request rate) is answered by polling, which waits out its own 429s.
          retryOn429: false,
        })
        for await (const data of readEventStream(response, signal)) {
          heard = true
          const payload = data as Payload
          if (payload.status !== 'pending') return payload
        }
      } catch (error) {
        if (signal?.aborted) throw error
        if (error instanceof CountersignError) {
          // Refused: polling is the way. Other refusals (401, 404) would be the same when polled.
          if (error.status === 429) break
          if (error.status < 500) throw error
        }
      }
      failedAttempts = heard ? 0 : failedAttempts + 1
      // The stream ended or broke without the outcome: connect again, a little later each time it brings nothing.
      await sleep(heard ? 250 : 500 * 2 ** (failedAttempts - 1), signal)
    }
    for (;;) {
      const payload = await this.get(uuid, { signal })
      if (payload.status !== 'pending') return payload
      await sleep(options.pollIntervalMs ?? 3000, signal)
    }
  }
}

class WebhooksApi {
  constructor(private readonly client: Countersign) {}

  /** Registers a webhook (Pro plan). Keep the returned secret: it is shown only once. */
  create(request: CreateWebhookRequest, options: { signal?: AbortSignal } = {}): Promise<CreatedWebhook> {
    return this.client.requestJson('POST', '/webhooks', { body: request, signal: options.signal })
  }

  async list(options: { signal?: AbortSignal } = {}): Promise<Webhook[]> {
    const { webhooks } = await this.client.requestJson<{ webhooks: Webhook[] }>('GET', '/webhooks', { signal: options.signal })
    return webhooks
  }

  delete(id: string, options: { signal?: AbortSignal } = {}): Promise<{ id: string; deleted: true }> {
    return this.client.requestJson('DELETE', `/webhooks/${encodeURIComponent(id)}`, { signal: options.signal })
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
