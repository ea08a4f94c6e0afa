// The Countersign client: every API-key endpoint, typed, over the global fetch.
import { ConnectionError, CountersignError } from './errors.js'
import { readEventStream } from './event-stream.js'
import type {
  CreatedPayload,
  CreatedWebhook,
  CreatePayloadRequest,
  CreateWebhookRequest,
  Delivery,
  DeliveryList,
  ListDeliveriesOptions,
  ListPayloadsOptions,
  Payload,
  PayloadList,
  ReplayRequest,
  ReplayResult,
  RotatedSecret,
  Webhook,
} from './types.js'

export interface CountersignOptions {
  apiKey: string
  /** The service's address, e.g. https://countersign.example.com (without /api/v1). */
  baseUrl: string
  /**
   * Times a request is sent again: after a 429 (waiting its Retry-After), and, when repeating it is safe (a GET, or a
   * creation carrying its Idempotency-Key), after a connection failure or a 502, 503 or 504. 2 by default, 0 to never retry.
   */
  maxRetries?: number
  /** A retry asked to wait longer than this is not made: the error is thrown; 60 000 ms by default. */
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

/** Options of a creation: POST /payloads and POST /webhooks. */
export interface CreateOptions {
  signal?: AbortSignal
  /**
   * The Idempotency-Key header: a repeat with the same key and body returns the first answer and creates nothing, for
   * 24 hours. A random one is made for each call by default and reused on the client's own retries; pass your own (1 to
   * 255 printable ASCII characters, e.g. your order id) to make a creation safe to repeat across calls or processes.
   */
  idempotencyKey?: string
}

interface RequestOptions {
  body?: unknown
  query?: Record<string, string | number | undefined>
  signal?: AbortSignal | undefined
  accept?: string
  idempotencyKey?: string | undefined
  /** Send again after a 429, a connection failure or an unavailable service (within the client's bounds); true by default. */
  retry?: boolean
}

/** Answers after which a request that is safe to repeat is sent again: the service, or what is in front of it, was unavailable. */
const RETRIED_STATUSES = new Set([502, 503, 504])

/** The wait before retry n (from 0) after a connection failure or an unavailable service without Retry-After. */
const backoffMs = (attempt: number) => 500 * 2 ** attempt

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

  /**
   * @internal Sends a request; returns a successful response or throws CountersignError (ConnectionError when no answer
   * came). A 429 is waited out and sent again; a request safe to repeat (a GET, or one with an Idempotency-Key, which
   * is the same on every attempt) is also sent again after a connection failure or a 502, 503 or 504, and a keyed one
   * after a 409 with Retry-After (its first attempt still running).
   */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const url = new URL(`${this.apiBase}${path}`)
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value))
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.apiKey}`, accept: options.accept ?? 'application/json' }
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey
    const repeatable = method === 'GET' || options.idempotencyKey !== undefined
    const maxRetries = options.retry === false ? 0 : (this.options.maxRetries ?? 2)
    const maxWaitMs = this.options.maxRetryWaitMs ?? 60_000
    for (let attempt = 0; ; attempt++) {
      let response: Response
      try {
        response = await this.fetch(url, {
          method,
          headers,
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal: options.signal,
        })
      } catch (error) {
        if (options.signal?.aborted) throw error
        const failure = new ConnectionError(`Could not reach ${url.origin}: ${describeCause(error)}`, { cause: error })
        if (!repeatable || attempt >= maxRetries || backoffMs(attempt) > maxWaitMs) throw failure
        await sleep(backoffMs(attempt), options.signal)
        continue
      }
      if (response.ok) return response
      const error = await CountersignError.fromResponse(response)
      // A 429 was not acted on, so sending it again is safe, whatever the method.
      // A keyed creation whose first attempt is still running is a 409 with Retry-After: its answer comes shortly.
      const inProgress = error.status === 409 && options.idempotencyKey !== undefined && error.retryAfterSeconds !== undefined
      const retried = error.status === 429 || inProgress || (repeatable && RETRIED_STATUSES.has(error.status))
      const waitMs =
        error.retryAfterSeconds !== undefined ? error.retryAfterSeconds * 1000 : error.status === 429 ? 1000 : backoffMs(attempt)
      if (!retried || attempt >= maxRetries || waitMs > maxWaitMs) throw error
      await sleep(waitMs, options.signal)
    }
  }
}

class PayloadsApi {
  constructor(private readonly client: Countersign) {}

  /** Creates a payload, with an Idempotency-Key (a random one unless `options.idempotencyKey` is given). */
  create(request: CreatePayloadRequest, options: CreateOptions = {}): Promise<CreatedPayload> {
    return this.client.requestJson('POST', '/payloads', {
      body: request,
      signal: options.signal,
      idempotencyKey: options.idempotencyKey ?? crypto.randomUUID(),
    })
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
   * Every payload the filters match, newest first, page after page (`limit` a page, 100 by default) while the service
   * says more follow. Pages are by cursor (`after`, the last uuid seen): payloads created meanwhile are not among the
   * later pages, and none is seen twice. Give `after` to resume after a payload.
   */
  async *listAll(options: Omit<ListPayloadsOptions, 'offset'> & { signal?: AbortSignal } = {}): AsyncGenerator<Payload> {
    // An offset from a caller without the types would start every page after the first one wrong: it is not sent.
    const { offset: _offset, ...filters } = options as typeof options & { offset?: number }
    const limit = filters.limit ?? 100
    let after = filters.after
    for (;;) {
      const page = await this.list({ ...filters, limit, after })
      yield* page.payloads
      const last = page.payloads.at(-1)
      if (!page.hasMore || last === undefined) return
      after = last.uuid
    }
  }

  /**
   * The payload's live status (GET /payloads/{uuid}/events): its current state first, then each change; ends once it is
   * final (as waitForOutcome means it). A stream that ends or breaks before that (the connection dropped, the service
   * restarted) throws a ConnectionError rather than ending as if the payload were resolved: call events again, which
   * starts with the current state, or use waitForResolution or waitForOutcome, which reconnect on their own.
   */
  async *events(uuid: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<Payload> {
    const { signal } = options
    const response = await this.client.send('GET', `/payloads/${encodeURIComponent(uuid)}/events`, {
      signal,
      accept: 'text/event-stream',
    })
    let last: Payload | undefined
    try {
      for await (const data of readEventStream(response, signal)) {
        last = data as Payload
        yield last
      }
    } catch (error) {
      if (signal?.aborted) throw error
      throw streamEndedEarly(uuid, last, error)
    }
    if (last === undefined || !isFinal(last)) throw streamEndedEarly(uuid, last, undefined)
  }

  /**
   * Resolves with the payload once it is signed, rejected or expired. Follows the live stream, reconnecting when it
   * drops; when the stream is refused (the project's stream cap) or keeps failing, polls instead. A signAndSubmit
   * payload is signed when its transaction is submitted, before the ledger has decided: waitForOutcome waits for that.
   */
  waitForResolution(uuid: string, options: WaitOptions = {}): Promise<Payload> {
    return this.waitUntil(uuid, (payload) => payload.status !== 'pending', options)
  }

  /**
   * Resolves with the payload once nothing about it will change: rejected or expired, or signed, and for a
   * signAndSubmit payload its transaction's final outcome on the ledger known (`submission.outcome`: succeeded,
   * failed or dropped). What to wait for before treating a payment as made.
   */
  waitForOutcome(uuid: string, options: WaitOptions = {}): Promise<Payload> {
    return this.waitUntil(uuid, isFinal, options)
  }

  private async waitUntil(uuid: string, done: (payload: Payload) => boolean, options: WaitOptions): Promise<Payload> {
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
          retry: false,
        })
        for await (const data of readEventStream(response, signal)) {
          heard = true
          const payload = data as Payload
          if (done(payload)) return payload
        }
      } catch (error) {
        if (signal?.aborted) throw error
        if (error instanceof CountersignError && !(error instanceof ConnectionError)) {
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
      if (done(payload)) return payload
      await sleep(options.pollIntervalMs ?? 3000, signal)
    }
  }
}

/** The error of a live stream that ended before its payload was final: what happened, and how to carry on. */
function streamEndedEarly(uuid: string, last: Payload | undefined, cause: unknown): ConnectionError {
  const state = last === undefined ? 'before its first message' : `with the payload still ${last.status}`
  const how = cause === undefined ? 'ended' : `broke (${describeCause(cause)})`
  return new ConnectionError(
    `The live stream of payload ${uuid} ${how} ${state}: the connection dropped or the service restarted. Call ` +
      'payloads.events again, which starts with the current state, or use waitForResolution or waitForOutcome, which reconnect',
    { cause },
  )
}

/** Whether nothing about the payload will change: resolved, and a submitted transaction's outcome known. */
function isFinal(payload: Payload): boolean {
  if (payload.status === 'pending') return false
  return !(payload.status === 'signed' && payload.type === 'signAndSubmit' && (payload.submission?.outcome ?? null) === null)
}

class WebhooksApi {
  constructor(private readonly client: Countersign) {}

  /** Registers a webhook (Pro plan), with an Idempotency-Key like payloads.create. Keep the returned secret: it is shown only once. */
  create(request: CreateWebhookRequest, options: CreateOptions = {}): Promise<CreatedWebhook> {
    return this.client.requestJson('POST', '/webhooks', {
      body: request,
      signal: options.signal,
      idempotencyKey: options.idempotencyKey ?? crypto.randomUUID(),
    })
  }

  async list(options: { signal?: AbortSignal } = {}): Promise<Webhook[]> {
    const { webhooks } = await this.client.requestJson<{ webhooks: Webhook[] }>('GET', '/webhooks', { signal: options.signal })
    return webhooks
  }

  delete(id: string, options: { signal?: AbortSignal } = {}): Promise<{ id: string; deleted: true }> {
    return this.client.requestJson('DELETE', webhookPath(id), { signal: options.signal })
  }

  /** The webhook's deliveries, newest first, with each one's attempts, last status or error, and state. */
  deliveries(id: string, options: ListDeliveriesOptions & { signal?: AbortSignal } = {}): Promise<DeliveryList> {
    const { signal, ...query } = options
    return this.client.requestJson('GET', `${webhookPath(id)}/deliveries`, { query: { ...query }, signal })
  }

  /** Sends a finished delivery again, with its id and body; 409 (ConflictError) while it is pending or being sent. */
  retryDelivery(id: string, deliveryId: string, options: { signal?: AbortSignal } = {}): Promise<Delivery> {
    return this.client.requestJson('POST', `${webhookPath(id)}/deliveries/${encodeURIComponent(deliveryId)}/retry`, {
      signal: options.signal,
    })
  }

  /** Queues a signed test delivery, `{ event: 'webhook.test', webhookId, createdAt }`, tried once. */
  test(id: string, options: { signal?: AbortSignal } = {}): Promise<Delivery> {
    return this.client.requestJson('POST', `${webhookPath(id)}/test`, { signal: options.signal })
  }

  /**
   * Replaces the webhook's secret and returns the new one, once. For 24 hours deliveries carry signatures with both
   * the new and the old secret in webhook-signature, so the receiver can switch without losing a delivery.
   */
  rotateSecret(id: string, options: { signal?: AbortSignal } = {}): Promise<RotatedSecret> {
    return this.client.requestJson('POST', `${webhookPath(id)}/rotate-secret`, { signal: options.signal })
  }

  /** Sends again every delivery created since `since` (an ISO 8601 string or a Date) that failed or was cancelled; returns how many. */
  replay(id: string, request: { since: ReplayRequest['since'] | Date }, options: { signal?: AbortSignal } = {}): Promise<ReplayResult> {
    const since = request.since instanceof Date ? request.since.toISOString() : request.since
    return this.client.requestJson('POST', `${webhookPath(id)}/replay`, { body: { since }, signal: options.signal })
  }

  /** Enables a webhook disabled by a 410 Gone or by 5 days of failed deliveries. */
  enable(id: string, options: { signal?: AbortSignal } = {}): Promise<Webhook> {
    return this.client.requestJson('POST', `${webhookPath(id)}/enable`, { signal: options.signal })
  }
}

const webhookPath = (id: string) => `/webhooks/${encodeURIComponent(id)}`

function describeCause(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
  return cause instanceof Error ? cause.message : String(cause)
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
