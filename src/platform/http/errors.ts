// Maps every error to the one error contract: JSON {"error"} (with "details" for 422), never a stack or SQL.
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify'
import { isLimitError, isUnavailableError } from '../db/unavailable.js'
import { AppError, type FieldError } from '../errors.js'

interface AjvError {
  keyword: string
  instancePath: string
  message?: string
  params: Record<string, unknown>
}

const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Content-Type: send the body as application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Request body is empty: send a JSON object',
  FST_ERR_CTP_INVALID_JSON_BODY: 'Request body is not valid JSON',
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) return sendAppError(reply, error)
    if (error.validation) return sendValidationError(reply, error.validationContext ?? 'body', error.validation as AjvError[])
    // A client that closed its connection in the middle of the body is ECONNRESET too, with a 400 of Node's: its own
    // doing, not a dependency away (a dependency's errors carry no status).
    const clientError = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500
    if (!clientError && isUnavailableError(error)) {
      if (isLimitError(error)) request.log.error({ err: error }, 'database at one of its limits')
      else request.log.warn({ err: error }, 'dependency unavailable')
      return reply.code(503).header('retry-after', '5').send({ error: 'Service temporarily unavailable; retry shortly' })
    }
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) {
      const message = (error.code && FASTIFY_MESSAGES[error.code]) || error.message || 'Bad request'
      // A route may have a limit of its own (a logo's), which is the one the client went over.
      const limit = request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit
      return reply.code(status).send({ error: status === 413 ? `${message} (the limit is ${limit} bytes)` : message })
    }
    request.log.error({ err: error }, 'request failed')
    return reply.code(500).send({ error: 'Internal server error' })
  })

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `Route not found: ${request.method} ${request.url.split('?')[0]}` })
  })
}

function sendAppError(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.headers) reply.headers(error.headers)
  // Every 422 lists its first MAX_DETAILS problems, whichever rule found them.
  const body = error.details
    ? { error: error.message, details: error.details.slice(0, MAX_DETAILS) }
    : { error: error.message, ...error.fields }
  return reply.code(error.statusCode).send(body)
}

/** The most field errors a 422 lists (docs/api.md, "Errors"). */
export const MAX_DETAILS = 50

function sendValidationError(reply: FastifyReply, part: string, errors: AjvError[]): FastifyReply {
  // docs/api.md, "Creating payloads": 400 for a body that is not a JSON object; 422 for one that parses but breaks a rule.
  if (part === 'body' && errors.some((e) => e.instancePath === '' && e.keyword === 'type')) {
    return reply.code(400).send({ error: 'Request body must be a JSON object' })
  }
  // Ajv reports every error (allErrors): a 60 KB array of wrong items gives tens of thousands. The first MAX_DETAILS
  // distinct ones are listed, found in one pass, so that no body costs more to answer than to read.
  const seen = new Set<string>()
  const details: FieldError[] = []
  for (const error of errors) {
    const detail = toFieldError(part, error)
    const key = `${detail.field}\u0000${detail.message}`
    if (seen.has(key)) continue
    seen.add(key)
    details.push(detail)
    if (details.length === MAX_DETAILS) break
  }
  return reply.code(422).send({ error: 'Validation failed', details })
}

function toFieldError(part: string, error: AjvError): FieldError {
  const path = error.instancePath.split('/').filter(Boolean).join('.')
  const join = (name: string) => (path ? `${path}.${name}` : name)
  switch (error.keyword) {
    case 'required':
      return { field: join(String(error.params.missingProperty)), message: 'is required' }
    case 'additionalProperties':
      return {
        field: join(String(error.params.additionalProperty)),
        message: part === 'querystring' ? 'is not a known query parameter' : 'is not a known field',
      }
    case 'enum':
      return { field: path || part, message: `must be one of ${(error.params.allowedValues as unknown[]).join(', ')}` }
    default:
      return { field: path || part, message: boundMessage(error) ?? error.message ?? 'is invalid' }
  }
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
}

/** The schema's type and bounds, said as the hand-written rules say theirs (Ajv's own: "must NOT have more than 200 characters"). */
function boundMessage(error: AjvError): string | undefined {
  const limit = error.params.limit
  switch (error.keyword) {
    case 'type':
      if (typeof error.params.type !== 'string') return undefined
      return `must be ${error.params.type
        .split(',')
        .map((type) => TYPE_NAMES[type] ?? type)
        .join(' or ')}`
    case 'maxLength':
      return `must be at most ${limit} characters`
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${limit} characters`
    case 'maxItems':
      return `must list at most ${limit} items`
    case 'minItems':
      return `must list at least ${limit} ${limit === 1 ? 'item' : 'items'}`
    case 'maximum':
      return `must be at most ${limit}`
    case 'minimum':
      return `must be at least ${limit}`
    case 'exclusiveMaximum':
      return `must be less than ${limit}`
    case 'exclusiveMinimum':
      return `must be more than ${limit}`
    default:
      return undefined
  }
}
