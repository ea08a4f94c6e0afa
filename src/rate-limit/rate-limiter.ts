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
  close(): Promise<void>
}
