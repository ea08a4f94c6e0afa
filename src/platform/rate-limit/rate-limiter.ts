// Fixed-window counters behind one small interface: in memory for one process, in Redis for many.

export interface RateLimitDecision {
  allowed: boolean
  limit: number
  /** Requests left in the current window after this one. */
  remaining: number
  /** When the current window ends, in epoch milliseconds. */
  resetAtMs: number
}

export interface RateLimiter {
  /** Counts one request against `key`; at most `limit` are allowed per window of `windowMs`, which starts at the key's first request. */
  consume(key: string, limit: number, windowMs: number): Promise<RateLimitDecision>
  /** When `key` has used up `limit` in its current window, the end of that window (epoch ms); otherwise undefined. Counts nothing. */
  exhaustedUntil(key: string, limit: number, windowMs: number): Promise<number | undefined>
  close(): Promise<void>
}

/** Whole seconds from `nowMs` until `resetAtMs`, rounded up; 0 once it has passed (X-RateLimit-Reset). */
export function secondsUntil(resetAtMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((resetAtMs - nowMs) / 1000))
}

/** Retry-After for a refused request: at least 1, since "retry in 0 s" would invite an immediate retry that is refused again. */
export function retryAfterSeconds(decision: RateLimitDecision, nowMs: number): number {
  return Math.max(1, secondsUntil(decision.resetAtMs, nowMs))
}
