// The Redis rate limiter: counts shared by every instance (REDIS_URL), with a per-instance fallback while Redis is away.
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { type IRateLimiterOptions, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible'
import type { Clock } from '../clock.js'
import { closeRedis, connectedWithin, lazyRedis } from '../redis.js'
import type { RateLimitDecision, RateLimiter } from './rate-limiter.js'

export interface RedisRateLimiterOptions {
  redisUrl: string
  clock: Clock
  logger: Logger
  /** Prefix of every key in Redis; tests give each run its own. */
  keyPrefix?: string
}

/** A command Redis has not answered by then is given up, and the request is counted by the fallback instead. */
const COMMAND_TIMEOUT_MS = 500
/** The first requests wait this long at most for the first connection, so that a fresh instance counts in Redis from the start. */
const FIRST_CONNECTION_WAIT_MS = 2000
/** While Redis is away, the fallback warning is repeated at most this often. */
const WARN_EVERY_MS = 30_000

/**
 * Fixed windows in Redis (rate-limiter-flexible's RateLimiterRedis): a window starts at its key's first request and
 * lasts `windowMs` rounded up to whole seconds. When Redis cannot be reached (connection lost, a command times out)
 * the request is counted by an in-memory limiter of this instance instead, and a warning is logged: the API keeps
 * answering, and for that time each instance enforces the limits on its own share of the traffic (fail open).
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly client: Redis
  private readonly limiters = new Map<string, RateLimiterRedis>()
  private firstConnection: Promise<void> | undefined
  private lastWarningMs = Number.NEGATIVE_INFINITY

  constructor(private readonly options: RedisRateLimiterOptions) {
    this.client = lazyRedis(options.redisUrl, { maxRetriesPerRequest: 1, commandTimeout: COMMAND_TIMEOUT_MS })
    this.client.on('error', (error) => this.warnFallback(error))
  }

  async consume(key: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    this.firstConnection ??= connectedWithin(this.client, FIRST_CONNECTION_WAIT_MS)
    await this.firstConnection
    let result: RateLimiterRes
    try {
      result = await this.limiterFor(limit, windowMs).consume(key, 1)
    } catch (refused) {
      if (!(refused instanceof RateLimiterRes)) throw refused
      return this.decision(false, limit, refused)
    }
    return this.decision(true, limit, result)
  }

  /** Fails open: when Redis cannot answer, nothing counts as exhausted (consume still counts, in the fallback). */
  async exhaustedUntil(key: string, limit: number, windowMs: number): Promise<number | undefined> {
    this.firstConnection ??= connectedWithin(this.client, FIRST_CONNECTION_WAIT_MS)
    await this.firstConnection
    try {
      const result = await this.limiterFor(limit, windowMs).get(key)
      return result !== null && result.consumedPoints >= limit ? this.options.clock.now() + result.msBeforeNext : undefined
    } catch {
      return undefined
    }
  }

  async close(): Promise<void> {
    await closeRedis(this.client)
  }

  private decision(allowed: boolean, limit: number, result: RateLimiterRes): RateLimitDecision {
    return { allowed, limit, remaining: result.remainingPoints, resetAtMs: this.options.clock.now() + result.msBeforeNext }
  }

  private limiterFor(limit: number, windowMs: number): RateLimiterRedis {
    const id = `${limit}:${windowMs}`
    let limiter = this.limiters.get(id)
    if (!limiter) {
      const shape: IRateLimiterOptions = {
        keyPrefix: this.options.keyPrefix ?? 'countersign:rate',
        points: limit,
        duration: Math.max(1, Math.ceil(windowMs / 1000)),
      }
      limiter = new RateLimiterRedis({
        ...shape,
        storeClient: this.client,
        // Not waiting on a connection that is down: the fallback answers at once.
        rejectIfRedisNotReady: true,
        insuranceLimiter: new FallbackLimiter(shape, () => this.warnFallback()),
      })
      this.limiters.set(id, limiter)
    }
    return limiter
  }

  private warnFallback(error?: unknown): void {
    const nowMs = this.options.clock.now()
    if (nowMs - this.lastWarningMs < WARN_EVERY_MS) return
    this.lastWarningMs = nowMs
    this.options.logger.warn({ err: error }, 'Redis is unreachable: rate limits are counted per instance until it is back')
  }
}

/** The in-memory limiter that answers while Redis is away, and says so. */
class FallbackLimiter extends RateLimiterMemory {
  constructor(
    options: IRateLimiterOptions,
    private readonly onUse: () => void,
  ) {
    super(options)
  }

  override consume(key: string | number, points?: number, options?: { [key: string]: unknown }): Promise<RateLimiterRes> {
    this.onUse()
    return super.consume(key, points, options)
  }
}
