// The in-memory rate limiter: the embedded default and the tests. Counts live in this process only.
//
// Not rate-limiter-flexible's RateLimiterMemory (which the Redis limiter uses while Redis is away): that one reads
// Date.now() and arms a timer per key, while every window here runs on the injected clock, so that limits, poll gates
// and their headers are tested by moving the clock rather than by waiting minutes. The windows are the Redis ones,
// rounded the same way (windowSeconds), and one behaviour test runs against both.
import type { Clock } from '../clock.js'
import { type Count, consumeOneByOne, type RateLimitDecision, type RateLimiter, windowSeconds } from './rate-limiter.js'

interface Window {
  count: number
  resetAtMs: number
}

/** Ended windows are dropped once this many keys are held, so memory stays bounded by active keys. */
const PRUNE_AT_SIZE = 10_000

export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, Window>()
  private pruneAtSize = PRUNE_AT_SIZE

  constructor(private readonly clock: Clock) {}

  consume(key: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    const nowMs = this.clock.now()
    let window = this.windows.get(key)
    if (!window || window.resetAtMs <= nowMs) {
      if (this.windows.size >= this.pruneAtSize) this.prune(nowMs)
      window = { count: 0, resetAtMs: nowMs + windowSeconds(windowMs) * 1000 }
      this.windows.set(key, window)
    }
    const allowed = window.count < limit
    if (allowed) window.count += 1
    return Promise.resolve({ allowed, limit, remaining: Math.max(0, limit - window.count), resetAtMs: window.resetAtMs })
  }

  consumeInTurn(first: Count, then: Count): Promise<[RateLimitDecision, RateLimitDecision | undefined]> {
    return consumeOneByOne((count) => this.consume(count.key, count.limit, count.windowMs), first, then)
  }

  exhaustedUntil(key: string, limit: number): Promise<number | undefined> {
    const window = this.windows.get(key)
    const exhausted = window !== undefined && window.resetAtMs > this.clock.now() && window.count >= limit
    return Promise.resolve(exhausted ? window.resetAtMs : undefined)
  }

  /** How many keys' windows are held (ended ones included until the next pruning). */
  get heldKeys(): number {
    return this.windows.size
  }

  close(): Promise<void> {
    this.windows.clear()
    return Promise.resolve()
  }

  private prune(nowMs: number): void {
    for (const [key, window] of this.windows) if (window.resetAtMs <= nowMs) this.windows.delete(key)
    // Many live keys: prune again only after as many more arrive, so pruning stays amortised O(1).
    this.pruneAtSize = Math.max(PRUNE_AT_SIZE, this.windows.size * 2)
  }
}
