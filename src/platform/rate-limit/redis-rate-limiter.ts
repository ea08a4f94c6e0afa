// The Redis rate limiter: counts shared by every instance (REDIS_URL), with a per-instance fallback while Redis is away.
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { type IRateLimiterOptions, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible'
import type { Clock } from '../clock.js'
import { closeRedis, connectedWithin, lazyRedis } from '../redis.js'
import { type Count, consumeOneByOne, type RateLimitDecision, type RateLimiter, windowSeconds } from './rate-limiter.js'

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
const DEFAULT_KEY_PREFIX = 'countersign:rate'

/**
 * consumeInTurn's script. Each key is counted as rate-limiter-flexible's own script counts it (the same key, value and
 * expiry), so that a key counted here and by `consume` on another request or instance holds one count. KEYS[2] is
 * counted only when KEYS[1]'s count is within ARGV[1]. Returns {count, ms left} for each key counted.
 */
const CONSUME_IN_TURN_LUA = `
local function count(key, seconds)
  redis.call('set', key, 0, 'EX', seconds, 'NX')
  local consumed = redis.call('incrby', key, 1)
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    redis.call('expire', key, seconds)
    ttl = 1000 * seconds
  end
  return {consumed, ttl}
end
local first = count(KEYS[1], ARGV[2])
if first[1] > tonumber(ARGV[1]) then return first end
local second = count(KEYS[2], ARGV[3])
return {first[1], first[2], second[1], second[2]}
`

/** The command ioredis's defineCommand adds for CONSUME_IN_TURN_LUA. */
interface WithConsumeInTurn {
  countersignConsumeInTurn(
    firstKey: string,
    thenKey: string,
    firstLimit: number,
    firstSeconds: number,
    thenSeconds: number,
  ): Promise<[number, number] | [number, number, number, number]>
}

/**
 * Fixed windows in Redis (rate-limiter-flexible's RateLimiterRedis): a window starts at its key's first request and
 * lasts `windowMs` rounded up to whole seconds (windowSeconds). When Redis cannot be reached (connection lost, a command times out)
 * the request is counted by an in-memory limiter of this instance instead, and a warning is logged: the API keeps
 * answering, and for that time each instance enforces the limits on its own share of the traffic (fail open).
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly client: Redis
  private readonly limiters = new Map<string, RateLimiterRedis>()
  private readonly fallbacks = new Map<string, FallbackLimiter>()
  private firstConnection: Promise<void> | undefined
  private lastWarningMs = Number.NEGATIVE_INFINITY

  constructor(private readonly options: RedisRateLimiterOptions) {
    this.client = lazyRedis(options.redisUrl, { maxRetriesPerRequest: 1, commandTimeout: COMMAND_TIMEOUT_MS })
    this.client.on('error', (error) => this.warnFallback(error))
    this.client.defineCommand('countersignConsumeInTurn', { numberOfKeys: 2, lua: CONSUME_IN_TURN_LUA })
  }

  async consume(key: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    await this.connected()
    return this.counted(this.limiterFor(limit, windowMs).consume(key, 1), limit)
  }

  /** One script in Redis; while Redis is away, both counted by this instance's fallback, as `consume` does. */
  async consumeInTurn(first: Count, then: Count): Promise<[RateLimitDecision, RateLimitDecision | undefined]> {
    await this.connected()
    // Not waiting on a connection that is down (as rejectIfRedisNotReady for consume): the fallback answers at once.
    if (this.client.status === 'ready') {
      try {
        const counts = await (this.client as unknown as WithConsumeInTurn).countersignConsumeInTurn(
          this.redisKey(first.key),
          this.redisKey(then.key),
          first.limit,
          windowSeconds(first.windowMs),
          windowSeconds(then.windowMs),
        )
        const [firstCount, firstMsLeft, thenCount, thenMsLeft] = counts
        return [
          this.counts(first.limit, firstCount, firstMsLeft),
          thenCount === undefined || thenMsLeft === undefined ? undefined : this.counts(then.limit, thenCount, thenMsLeft),
        ]
      } catch {
        // Counted below, by this instance; the fallback warns.
      }
    }
    return consumeOneByOne(
      (count) => this.counted(this.fallbackFor(count.limit, count.windowMs).consume(count.key, 1), count.limit),
      first,
      then,
    )
  }

  /** Fails open: when Redis cannot answer, nothing counts as exhausted (consume still counts, in the fallback). */
  async exhaustedUntil(key: string, limit: number, windowMs: number): Promise<number | undefined> {
    await this.connected()
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

  private connected(): Promise<void> {
    this.firstConnection ??= connectedWithin(this.client, FIRST_CONNECTION_WAIT_MS)
    return this.firstConnection
  }

  /** rate-limiter-flexible answers an allowed count with its result and a refused one by rejecting with it. */
  private async counted(consuming: Promise<RateLimiterRes>, limit: number): Promise<RateLimitDecision> {
    let result: RateLimiterRes
    try {
      result = await consuming
    } catch (refused) {
      if (!(refused instanceof RateLimiterRes)) throw refused
      return this.decision(false, limit, refused)
    }
    return this.decision(true, limit, result)
  }

  private decision(allowed: boolean, limit: number, result: RateLimiterRes): RateLimitDecision {
    return { allowed, limit, remaining: result.remainingPoints, resetAtMs: this.options.clock.now() + result.msBeforeNext }
  }

  /** A key's count and the milliseconds left in its window, read as rate-limiter-flexible reads its own script's answer. */
  private counts(limit: number, count: number, msLeft: number): RateLimitDecision {
    return { allowed: count <= limit, limit, remaining: Math.max(limit - count, 0), resetAtMs: this.options.clock.now() + msLeft }
  }

  /** Where rate-limiter-flexible keeps `key` (its getKey). */
  private redisKey(key: string): string {
    return this.keyPrefix.length > 0 ? `${this.keyPrefix}:${key}` : key
  }

  private get keyPrefix(): string {
    return this.options.keyPrefix ?? DEFAULT_KEY_PREFIX
  }

  private limiterFor(limit: number, windowMs: number): RateLimiterRedis {
    const id = shapeId(limit, windowMs)
    let limiter = this.limiters.get(id)
    if (!limiter) {
      limiter = new RateLimiterRedis({
        ...limiterShape(this.keyPrefix, limit, windowMs),
        storeClient: this.client,
        // Not waiting on a connection that is down: the fallback answers at once.
        rejectIfRedisNotReady: true,
        insuranceLimiter: this.fallbackFor(limit, windowMs),
      })
      this.limiters.set(id, limiter)
    }
    return limiter
  }

  /** This instance's count of one limit while Redis is away: `consume`'s (as its insurance) and consumeInTurn's. */
  private fallbackFor(limit: number, windowMs: number): FallbackLimiter {
    const id = shapeId(limit, windowMs)
    let fallback = this.fallbacks.get(id)
    if (!fallback) {
      fallback = new FallbackLimiter(limiterShape(this.keyPrefix, limit, windowMs), () => this.warnFallback())
      this.fallbacks.set(id, fallback)
    }
    return fallback
  }

  private warnFallback(error?: unknown): void {
    const nowMs = this.options.clock.now()
    if (nowMs - this.lastWarningMs < WARN_EVERY_MS) return
    this.lastWarningMs = nowMs
    this.options.logger.warn({ err: error }, 'Redis is unreachable: rate limits are counted per instance until it is back')
  }
}

/** One limiter (and one fallback) a shape of limit: how many a window, and how long it is. */
function shapeId(limit: number, windowMs: number): string {
  return `${limit}:${windowMs}`
}

function limiterShape(keyPrefix: string, limit: number, windowMs: number): IRateLimiterOptions {
  return { keyPrefix, points: limit, duration: windowSeconds(windowMs) }
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
