// Fixed-window counters behind one small interface: in memory for one process, in Redis for many, with one
// behaviour (the same tests run against both).
import { tooManyRequests } from '../errors.js'

export interface RateLimitDecision {
  allowed: boolean
  limit: number
  /** Requests left in the current window after this one. */
  remaining: number
  /** When the current window ends, in epoch milliseconds. */
  resetAtMs: number
}

/** One limit a request is counted against: at most `limit` per window of `windowMs` (rounded up to whole seconds) per `key`. */
export interface Count {
  key: string
  limit: number
  windowMs: number
}

export interface RateLimiter {
  /**
   * Counts one request against `key`; at most `limit` are allowed per window, which starts at the key's first request
   * and lasts `windowMs` rounded up to whole seconds (windowSeconds), whichever store counts.
   */
  consume(key: string, limit: number, windowMs: number): Promise<RateLimitDecision>
  /**
   * Two limits a request passes in turn (its project's rate, then a payload's poll gate), in one trip to the store:
   * `first` is counted, and `then` only when `first` allowed the request. `then`'s decision is undefined when it was not
   * counted. Each count is the one `consume` makes on its key.
   */
  consumeInTurn(first: Count, then: Count): Promise<[RateLimitDecision, RateLimitDecision | undefined]>
  /** When `key` has used up `limit` in its current window, the end of that window (epoch ms); otherwise undefined. Counts nothing. */
  exhaustedUntil(key: string, limit: number, windowMs: number): Promise<number | undefined>
  close(): Promise<void>
}

/**
 * The length of a window in whole seconds, at least 1: Redis expires keys by the second (rate-limiter-flexible's
 * `duration`), and the memory store counts the same windows so that a limit behaves alike with and without Redis.
 */
export function windowSeconds(windowMs: number): number {
  return Math.max(1, Math.ceil(windowMs / 1000))
}

/** consumeInTurn for a store that counts one key at a time: `first`, then `then` only when `first` allowed the request. */
export async function consumeOneByOne(
  consume: (count: Count) => Promise<RateLimitDecision>,
  first: Count,
  then: Count,
): Promise<[RateLimitDecision, RateLimitDecision | undefined]> {
  const decision = await consume(first)
  return [decision, decision.allowed ? await consume(then) : undefined]
}

/** Whole seconds from `nowMs` until `resetAtMs`, rounded up; 0 once it has passed (X-RateLimit-Reset). */
export function secondsUntil(resetAtMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((resetAtMs - nowMs) / 1000))
}

/** Retry-After for a refused request: at least 1, since "retry in 0 s" would invite an immediate retry that is refused again. */
export function retryAfterSeconds(decision: RateLimitDecision, nowMs: number): number {
  return Math.max(1, secondsUntil(decision.resetAtMs, nowMs))
}

/**
 * Counts one request against `limit` a minute under `key`; over it, a 429 with Retry-After saying `Too many <what>: at
 * most <limit> a minute; retry in N s`. The per-minute bounds that send no X-RateLimit headers refuse so: the
 * wallet-facing API's per payload, the dashboard's per account, the website check's per project.
 */
export async function consumePerMinute(
  rateLimiter: RateLimiter,
  count: { key: string; limit: number; what: string },
  nowMs: () => number,
): Promise<void> {
  const decision = await rateLimiter.consume(count.key, count.limit, 60_000)
  if (decision.allowed) return
  const retryAfter = retryAfterSeconds(decision, nowMs())
  throw tooManyRequests(`Too many ${count.what}: at most ${count.limit} a minute; retry in ${retryAfter} s`, retryAfter)
}
