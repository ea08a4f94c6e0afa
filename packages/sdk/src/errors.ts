// The one error type of the client: every answer that is not a success, with what the service said.

export interface FieldError {
  field: string
  message: string
}

export class CountersignError extends Error {
  override name = 'CountersignError'

  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** The service's message, a sentence saying what to do. */
    message: string,
    /** 422: which fields broke which rule. */
    readonly details: FieldError[] | undefined = undefined,
    /** 429 and 503: seconds the service asked to wait before trying again. */
    readonly retryAfterSeconds: number | undefined = undefined,
  ) {
    super(message)
  }

  /** Reads an error answer: JSON `{error, details?}`, or whatever a proxy in between sent. */
  static async fromResponse(response: Response): Promise<CountersignError> {
    const retryAfter = parseRetryAfterSeconds(response.headers.get('retry-after'))
    const text = await response.text().catch(() => '')
    let message = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`
    let details: FieldError[] | undefined
    try {
      const body = JSON.parse(text) as { error?: unknown; details?: unknown }
      if (typeof body.error === 'string') message = body.error
      if (Array.isArray(body.details)) details = body.details as FieldError[]
    } catch {
      // Not the service's JSON (a proxy's page): the status says enough.
    }
    return new CountersignError(response.status, message, details, retryAfter)
  }
}

/** Retry-After as seconds: a number of seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfterSeconds(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const dateMs = Date.parse(value)
  return Number.isNaN(dateMs) ? undefined : Math.max(0, Math.ceil((dateMs - Date.now()) / 1000))
}
