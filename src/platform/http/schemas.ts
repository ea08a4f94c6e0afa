// TypeBox schemas shared by several routes: one schema gives validation, types and the OpenAPI document.
import { type TSchema, Type } from '@sinclair/typebox'

export const ErrorBody = Type.Object(
  { error: Type.String({ description: 'What went wrong, in a sentence a developer can act on' }) },
  { $id: 'ErrorBody', description: 'Every error response' },
)

export const ValidationErrorBody = Type.Object(
  {
    error: Type.String(),
    details: Type.Array(
      Type.Object({
        field: Type.String({ description: 'Path of the offending field, e.g. options.expiresIn' }),
        message: Type.String(),
      }),
    ),
  },
  { $id: 'ValidationErrorBody', description: '422: the request parsed but broke a rule' },
)

/** An instant, as every response writes it. */
export const Timestamp = (description = 'ISO 8601 UTC, millisecond precision') => Type.String({ format: 'date-time', description })

export const NullableTimestamp = (description: string) => Type.Union([Timestamp(), Type.Null()], { description })

/**
 * The deepest page a list serves. Without a bound, an offset such as 99999999999999999999 reached the database,
 * which refused it (a 500); a million rows in, offset paging is a scan anyway, and filters serve better.
 */
export const MAX_PAGE_OFFSET = 1_000_000

/** The paging fields of a list's query string; `skipped` names what the offset counts. */
export const PageQuery = (skipped: string) => ({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100' })),
  offset: Type.Optional(
    Type.Integer({ minimum: 0, maximum: MAX_PAGE_OFFSET, default: 0, description: `${skipped} to skip, 0 to ${MAX_PAGE_OFFSET}` }),
  ),
})

/** The paging a list answered with, beside its items. */
export const PageFields = { limit: Type.Integer(), offset: Type.Integer() }

export const UuidParams = Type.Object({ uuid: Type.String({ description: 'Payload UUID' }) }, { additionalProperties: false })

/** The api_key query parameter every API-key endpoint accepts. */
export const ApiKeyQuery = { api_key: Type.Optional(Type.String({ description: 'API key, when not sent as Authorization: Bearer' })) }

export const ApiKeyOnlyQuery = Type.Object(ApiKeyQuery, { additionalProperties: false })

/** Error responses a route documents; the status codes it may return beside its successes. */
export function errorResponses(...codes: number[]): Record<number, TSchema> {
  const responses: Record<number, TSchema> = {}
  for (const code of codes) responses[code] = code === 422 ? Type.Ref(ValidationErrorBody) : Type.Ref(ErrorBody)
  return responses
}
