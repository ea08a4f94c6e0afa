// TypeBox schemas and helpers shared by every feature's schemas: one schema gives validation, the handler's types
// (through the TypeBox type provider), the OpenAPI document and the SDK's types.
import { type Static, type TSchema, Type } from 'typebox'

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'What went wrong, in a sentence a developer can act on' }),
    submission: Type.Optional(
      Type.Literal('in-doubt', {
        description:
          'On a 409 of a signAndSubmit request: a signed transaction of the request may already be on the XRP Ledger, its outcome is being checked; do not sign again',
      }),
    ),
  },
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

/**
 * A string from a fixed list. Written as `{type: "string", enum}` (not a union of literals) so that a wrong value is
 * one 422 detail, "must be one of a, b", and the OpenAPI document shows an enum; typed as the union of the values.
 */
export const StringEnum = <const Values extends readonly string[]>(
  values: Values,
  options: { description?: string; default?: Values[number] } = {},
) => Type.Unsafe<Values[number]>({ type: 'string', enum: [...values], ...options })

/** A reference to a schema the app adds under its $id (one component in the OpenAPI document), typed as that schema. */
export function RefTo<Schema extends TSchema>(schema: Schema) {
  const { $id } = schema as { $id?: unknown }
  if (typeof $id !== 'string') throw new Error('A referenced schema needs an $id')
  return Type.Unsafe<Static<Schema>>(Type.Ref($id))
}

export const Nullable = <Schema extends TSchema>(schema: Schema, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description })

/** An instant, as every response writes it. */
export const Timestamp = (description = 'ISO 8601 UTC, millisecond precision') => Type.String({ format: 'date-time', description })

export const NullableTimestamp = (description: string) => Type.Union([Timestamp(), Type.Null()], { description })

/** Any JSON object (a transaction's fields). */
export const AnyObject = (description?: string) =>
  Type.Unsafe<Record<string, unknown>>(
    Type.Object({}, { additionalProperties: true, ...(description === undefined ? {} : { description }) }),
  )

/**
 * The deepest page a list serves. Without a bound, an offset such as 99999999999999999999 reached the database,
 * which refused it (a 500); a million rows in, offset paging is a scan anyway, and filters serve better.
 */
export const MAX_PAGE_OFFSET = 1_000_000

const PAGE_DEFAULTS = { limit: 20, offset: 0 }

/** The paging fields of a list's query string; `skipped` names what the offset counts. */
export const PageQuery = (skipped: string) => ({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: PAGE_DEFAULTS.limit, description: 'Page size, 1 to 100' })),
  offset: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_PAGE_OFFSET,
      default: PAGE_DEFAULTS.offset,
      description: `${skipped} to skip, 0 to ${MAX_PAGE_OFFSET}`,
    }),
  ),
})

/** A page of a list: how many items, after how many. */
export interface Page {
  limit: number
  offset: number
}

/** The page a list query asks for (validation has filled in the defaults; the types cannot know it). */
function pageOf(query: Partial<Page>): Page {
  return { limit: query.limit ?? PAGE_DEFAULTS.limit, offset: query.offset ?? PAGE_DEFAULTS.offset }
}

/** The paging a list answered with, beside its items. */
export const PageFields = {
  limit: Type.Integer(),
  offset: Type.Integer(),
  hasMore: Type.Boolean({
    description: 'Whether items follow this page: ask for the next with offset + limit, or (payloads) after = its last uuid',
  }),
}

/**
 * A page of a list as its route answers it: `read` is asked for one row more than the page holds, which tells whether
 * another page follows (`hasMore`).
 */
export async function readPage<T>(
  query: Partial<Page>,
  read: (rows: Page) => Promise<readonly T[]>,
): Promise<{ items: T[]; limit: number; offset: number; hasMore: boolean }> {
  const page = pageOf(query)
  const rows = await read({ limit: page.limit + 1, offset: page.offset })
  return { items: rows.slice(0, page.limit), limit: page.limit, offset: page.offset, hasMore: rows.length > page.limit }
}

export const UuidParams = Type.Object({ uuid: Type.String({ description: 'Payload UUID' }) }, { additionalProperties: false })

/** The api_key query parameter every API-key endpoint accepts. */
export const ApiKeyQuery = { api_key: Type.Optional(Type.String({ description: 'API key, when not sent as Authorization: Bearer' })) }

export const ApiKeyOnlyQuery = Type.Object(ApiKeyQuery, { additionalProperties: false })

type ErrorResponses<Codes extends number> = { [Code in Codes]: Code extends 422 ? typeof ValidationErrorRef : typeof ErrorRef }
const ErrorRef = RefTo(ErrorBody)
const ValidationErrorRef = RefTo(ValidationErrorBody)

/** Error responses a route documents; the status codes it may return beside its successes. */
export function errorResponses<const Codes extends number>(...codes: Codes[]): ErrorResponses<Codes> {
  const responses: Record<number, TSchema> = {}
  for (const code of codes) responses[code] = code === 422 ? ValidationErrorRef : ErrorRef
  return responses as ErrorResponses<Codes>
}
