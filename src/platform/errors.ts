// The one error type of the service: a status, a message a developer can act on, and details for 422.
export interface FieldError {
  field: string
  message: string
}

export class AppError extends Error {
  override name = 'AppError'
  constructor(
    readonly statusCode: number,
    message: string,
    readonly details?: FieldError[],
    readonly headers?: Record<string, string>,
    /** Fields the error body carries beside `error`, e.g. the uuid of the payload a conflict is with. */
    readonly fields?: Record<string, string>,
  ) {
    super(message)
  }
}

export const badRequest = (message: string) => new AppError(400, message)
export const unauthorized = (message: string) => new AppError(401, message)
export const forbidden = (message: string) => new AppError(403, message)
export const notFound = (message: string) => new AppError(404, message)
export const conflict = (message: string, fields?: Record<string, string>) => new AppError(409, message, undefined, undefined, fields)
export const gone = (message: string) => new AppError(410, message)
export const unprocessable = (details: FieldError[], message = 'Validation failed') => new AppError(422, message, details)
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new AppError(429, message, undefined, { 'retry-after': String(retryAfterSeconds) })
export const badGateway = (message: string) => new AppError(502, message)
export const serviceUnavailable = (message: string) => new AppError(503, message)
