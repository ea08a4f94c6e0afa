// The client's errors: CountersignError for every answer that is not a success, a subclass per kind of refusal, one for a
// request that got no answer, and WebhookVerificationError for a delivery that does not verify.

export interface FieldError {
  field: string
  message: string
}

export class CountersignError extends Error {
  override name = 'CountersignError'

  constructor(
    /** The HTTP status; 0 when no answer came (ConnectionError). */
    readonly status: number,
    /** The service's message, a sentence saying what to do; for a 422, followed by the first field that broke a rule. */
    message: string,
    /** 422: which fields broke which rule. */
    readonly details: FieldError[] | undefined = undefined,
    /** 429 and 503: seconds the service asked to wait before trying again. */
    readonly retryAfterSeconds: number | undefined = undefined,
    /** The whole JSON body of the answer, for fields beyond `error` and `details` (e.g. a 409's `uuid`). */
    readonly body: Record<string, unknown> | undefined = undefined,
    /** The answer's X-Request-Id: the id of the service's log line for this request, to quote when asking for help. */
    readonly requestId: string | undefined = undefined,
  ) {
    super(message)
  }

  /** Reads an error answer: JSON `{error, details?}`, or whatever a proxy in between sent. */
  static async fromResponse(response: Response): Promise<CountersignError> {
    const retryAfter = parseRetryAfterSeconds(response.headers.get('retry-after'))
    const text = await response.text().catch(() => '')
    let message = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`
    let details: FieldError[] | undefined
    let body: Record<string, unknown> | undefined
    try {
      const parsed: unknown = JSON.parse(text)
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        body = parsed as Record<string, unknown>
        if (typeof body.error === 'string') message = body.error
        if (Array.isArray(body.details)) details = body.details as FieldError[]
      }
    } catch {
      // Not the service's JSON (a proxy's page): the status says enough.
    }
    const ErrorClass = ERROR_CLASSES[response.status] ?? (response.status >= 500 ? ServerError : CountersignError)
    const requestId = response.headers.get('x-request-id') ?? undefined
    return new ErrorClass(response.status, withFirstDetail(message, details), details, retryAfter, body, requestId)
  }
}

/** 400: the body is not JSON, or not an object. */
export class BadRequestError extends CountersignError {
  override name = 'BadRequestError'
}

/** 401: the API key is missing, unknown or revoked. */
export class AuthenticationError extends CountersignError {
  override name = 'AuthenticationError'
}

/** 403: the plan does not allow it (webhooks need Pro), or the monthly payload limit is reached. */
export class PermissionError extends CountersignError {
  override name = 'PermissionError'
}

/** 404: no such payload, webhook or delivery in this project. */
export class NotFoundError extends CountersignError {
  override name = 'NotFoundError'
}

/** 409: the request conflicts with the current state (already resolved, disabled webhook, a reused externalId...). */
export class ConflictError extends CountersignError {
  override name = 'ConflictError'

  /** For a payload whose externalId is taken: the uuid of the payload that has it. */
  get uuid(): string | undefined {
    return typeof this.body?.uuid === 'string' ? this.body.uuid : undefined
  }
}

/** 410: the payload expired. */
export class GoneError extends CountersignError {
  override name = 'GoneError'
}

/** 422: the request parsed but broke a rule; `details` names the fields. */
export class ValidationError extends CountersignError {
  override name = 'ValidationError'
}

/** 429: too many requests; `retryAfterSeconds` says when to try again. */
export class RateLimitError extends CountersignError {
  override name = 'RateLimitError'
}

/** 5xx: the service, or what is in front of it, failed. */
export class ServerError extends CountersignError {
  override name = 'ServerError'
}

/** No answer came: the connection failed or dropped. `cause` is the underlying error. */
export class ConnectionError extends CountersignError {
  override name = 'ConnectionError'

  constructor(message: string, options: { cause: unknown }) {
    super(0, message)
    this.cause = options.cause
  }
}

/** A 422's sentence says only that validation failed: the first broken rule is what to fix, so the message names it. */
function withFirstDetail(message: string, details: FieldError[] | undefined): string {
  const first = details?.[0]
  if (first === undefined || typeof first.field !== 'string' || typeof first.message !== 'string') return message
  const more = (details?.length ?? 1) - 1
  return `${message}: ${first.field} ${first.message}${more > 0 ? ` (and ${more} more in details)` : ''}`
}

const ERROR_CLASSES: Record<number, typeof CountersignError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  410: GoneError,
  422: ValidationError,
  429: RateLimitError,
}

/** Retry-After as seconds: a number of seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfterSeconds(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const dateMs = Date.parse(value)
  return Number.isNaN(dateMs) ? undefined : Math.max(0, Math.ceil((dateMs - Date.now()) / 1000))
}

/** Why a webhook delivery did not verify. */
export type WebhookVerificationFailure = 'missing_header' | 'invalid_timestamp' | 'timestamp_out_of_range' | 'invalid_signature'

/** A webhook delivery that does not prove it comes from the service: answer it with 400 or 401, and do not act on it. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError'

  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message)
  }
}
