// The Idempotency-Key header of creations (docs/api.md): a request repeated with the same key and body gets the first
// response again and creates nothing; the key is claimed in the database, so this holds across instances.
import { createHash, randomUUID } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Db, DbOrTx, Dialect } from '../db/database.js'
import { IdempotencyClaims, idempotencyKeysRepository, type KeptResponse } from '../db/idempotency-keys-repository.js'
import { AppError, unprocessable } from '../errors.js'
import { principalOf, type RequestCounter } from './api-key-auth.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes an Idempotency-Key: its rate counting waits until the key is checked (a failed claim is let go). */
    idempotent?: boolean
  }
  interface FastifyRequest {
    /** Set when the request holds an Idempotency-Key: the handler records its response with it. */
    idempotency: IdempotentRequest | null
  }
}

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key'
export const REPLAYED_HEADER = 'idempotent-replayed'
const KEY_PATTERN = '^[\\x20-\\x7E]{1,255}$'
const KEY = new RegExp(KEY_PATTERN)
/** How long a key is kept: a repeat within this time gets the first response. */
export const IDEMPOTENCY_KEY_KEEP_MS = 24 * 60 * 60 * 1000
/** What a repeat answers when the response kept for its key can no longer be opened (lost with its server secret). */
export const LOST_RESPONSE_MESSAGE =
  'The response kept for this Idempotency-Key was sealed under a server secret that was lost, and can no longer be shown. The request it answered was done: look its result up (GET) instead of repeating it'
/** How long a claim outlives a request that never finished (its instance died) before another may take the key. */
const CLAIM_LEASE_MS = 60_000

/** The header as a route's schema declares it, so that the OpenAPI document shows it. */
export const IdempotencyKeyHeaders = Type.Object({
  [IDEMPOTENCY_KEY_HEADER]: Type.Optional(
    Type.String({
      pattern: KEY_PATTERN,
      description:
        '1-255 printable ASCII characters, kept 24 hours per project. A repeat with the same body gets the first response with ' +
        '`Idempotent-Replayed: true` and creates nothing; with another body it is 422; while the first is still running, 409.',
    }),
  ),
})

export interface IdempotentRequest {
  /**
   * The response to keep under the key, sealed: the write that creates the resource records it (recordKeptResponse),
   * so that both commit or neither. The route answers with `statusCode` only once that write has committed: a request
   * that ends with another status lets go of its key (releaseUnfinished).
   */
  keep(statusCode: number, body: unknown): KeptResponse
}

/** Records a kept response in the write that creates its resource; 409 when the request no longer holds the key. */
export async function recordKeptResponse(db: DbOrTx, kept: KeptResponse): Promise<void> {
  if (!(await idempotencyKeysRepository.complete(db, kept))) throw stillInFlight()
}

export interface IdempotencyDeps {
  db: Db
  dialect: Dialect
  /** Seals stored responses (a webhook's creation response holds its secret): the service's secret box. */
  secretBox: { seal(plain: string): string; open(sealed: string): string }
  now: () => number
  /** Counts the request against the project's rate (the API-key hook left it to this hook): every request, repeats too. */
  countRequest: RequestCounter
}

/** True when the API-key hook must leave the rate counting to the idempotency hook, which lets go of the key at a 429. */
export function countsAfterIdempotencyCheck(request: FastifyRequest): boolean {
  return request.routeOptions.config.idempotent === true && request.headers[IDEMPOTENCY_KEY_HEADER] !== undefined
}

/** How many times a header was sent, from the raw list of names and values as they came. */
function headerCount(rawHeaders: string[], name: string): number {
  let count = 0
  for (let index = 0; index < rawHeaders.length; index += 2) if (rawHeaders[index]?.toLowerCase() === name) count++
  return count
}

/** A request that holds its key's claim: what lets the claim go, and the status of the response it keeps, once it keeps one. */
interface Holding {
  release(): Promise<void>
  keptStatus?: number
}

export function idempotencyHooks(deps: IdempotencyDeps) {
  const pending = new WeakMap<FastifyRequest, Holding>()
  const claims = new IdempotencyClaims(deps.db, deps.dialect)

  /** preValidation: the body is parsed and not yet changed by schema defaults, so the fingerprint is of what was sent. */
  async function checkIdempotencyKey(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!countsAfterIdempotencyCheck(request)) return
    const key = request.headers[IDEMPOTENCY_KEY_HEADER]
    // Node joins a header sent twice into one value ("a1, a2"), which would be a key neither copy named.
    const copies = headerCount(request.raw.rawHeaders, IDEMPOTENCY_KEY_HEADER)
    if (typeof key !== 'string' || !KEY.test(key) || copies > 1) {
      await deps.countRequest(request, reply)
      throw unprocessable(
        [{ field: 'Idempotency-Key', message: copies > 1 ? 'must be sent once' : 'must be 1 to 255 printable ASCII characters' }],
        'Invalid Idempotency-Key header',
      )
    }
    const { projectId } = principalOf(request)
    const fingerprint = fingerprintOf(request)
    const claimToken = randomUUID()
    const nowMs = deps.now()
    const held = await claims.claim({
      projectId,
      key,
      fingerprint,
      claimToken,
      nowMs,
      leaseMs: CLAIM_LEASE_MS,
      keepMs: IDEMPOTENCY_KEY_KEEP_MS,
    })
    if (held === true) {
      const claim = { projectId, key, claimToken }
      const release = () => idempotencyKeysRepository.release(deps.db, claim)
      try {
        await deps.countRequest(request, reply)
      } catch (error) {
        await release()
        throw error
      }
      const holding: Holding = { release }
      pending.set(request, holding)
      request.idempotency = {
        keep(statusCode, body) {
          holding.keptStatus = statusCode
          return { ...claim, statusCode, responseSealed: deps.secretBox.seal(JSON.stringify(body)) }
        },
      }
      return
    }
    if (held.fingerprint !== fingerprint) {
      await deps.countRequest(request, reply)
      throw unprocessable(
        [
          {
            field: 'Idempotency-Key',
            message: 'was already used with a different request in the last 24 hours; send a new key for a new request',
          },
        ],
        'Idempotency-Key reused with a different request body',
      )
    }
    // A repeat creates nothing, but it is a request like any other for the rate: uncounted, a loop of replays (or of
    // 409s while the first runs) was a read endpoint outside every limit.
    await deps.countRequest(request, reply)
    if (held.response_sealed === null || held.status_code === null) throw stillInFlight()
    let kept: unknown
    try {
      kept = JSON.parse(deps.secretBox.open(held.response_sealed))
    } catch (error) {
      // Sealed under a server secret this instance does not have: an older value a lost secret left behind (the start
      // checks the newest, deployment.md). The request was done; what it answered is gone.
      request.log.error({ err: error, key }, 'a response kept with an Idempotency-Key does not open under the server secret')
      throw new AppError(409, LOST_RESPONSE_MESSAGE)
    }
    reply.header(REPLAYED_HEADER, 'true').code(held.status_code).send(kept)
    return reply
  }

  /**
   * onSend: a request that ends without the response it kept (it failed before or at the write) lets go of its key, so
   * that a retry runs. The release deletes only a claim with no kept response, so a response committed after all stays.
   */
  async function releaseUnfinished(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const unfinished = pending.get(request)
    if (unfinished) {
      pending.delete(request)
      if (reply.statusCode !== unfinished.keptStatus) await unfinished.release()
    }
    return payload
  }

  return { checkIdempotencyKey, releaseUnfinished }
}

function stillInFlight(): AppError {
  return new AppError(409, 'A request with this Idempotency-Key is still in progress; retry shortly for its response', undefined, {
    'retry-after': '1',
  })
}

/** The route and the body, with object keys sorted: a repeat is the same request however its JSON was laid out. */
function fingerprintOf(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.routeOptions.url}\n${canonicalJson(request.body)}`)
    .digest('hex')
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}
