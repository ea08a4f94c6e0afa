// How the browser pages call the service: same-origin fetches that are never cached, and one error type for every
// answer that is not a success. Its own messages start in lower case, so that a page can put them in a sentence.
import type { FieldError } from '../../platform/errors.js'

/** An error answer of the API, or a failure to reach it (status 0). */
export class ApiError extends Error {
  override name = 'ApiError'
  constructor(
    readonly status: number,
    message: string,
    readonly details: FieldError[] = [],
    /** A 409 for a submission in doubt: a signed transaction of the request may be on the ledger already. */
    readonly submissionInDoubt = false,
  ) {
    super(message)
  }
}

/** Sends a request with a JSON body (when there is one) and returns the successful response; throws ApiError otherwise. */
export async function callApi(url: string, init: { method: string; body?: string }): Promise<Response> {
  let response: Response
  try {
    response = await fetch(url, {
      ...init,
      cache: 'no-store',
      credentials: 'same-origin',
      headers:
        init.body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
    })
  } catch (error) {
    throw new ApiError(0, `the service could not be reached (${(error as Error).message})`)
  }
  if (response.ok) return response
  throw await errorFrom(response)
}

async function errorFrom(response: Response): Promise<ApiError> {
  let body: unknown
  try {
    body = await response.json()
  } catch {
    // A proxy's HTML error page: the status alone has to speak.
  }
  const { error, details, submission } = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {}
  const message = typeof error === 'string' ? error : `the service answered with status ${response.status}`
  const fieldErrors = Array.isArray(details)
    ? details
        .filter((detail): detail is FieldError => typeof detail?.field === 'string' && typeof detail?.message === 'string')
        .map(({ field, message }) => ({ field, message }))
    : []
  return new ApiError(response.status, message, fieldErrors, submission === 'in-doubt')
}
