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
 * The counts of every request waiting, in one script: each key is counted as rate-limiter-flexible's own script counts
 * it (the same key, value and expiry), so that a key counted here and read by `exhaustedUntil` holds one count.
 * ARGV holds three values a key: its limit, its window in seconds, and 1 when it is counted only if the key before it
 * was within its limit (a request's second limit, consumeInTurn), else 0. Returns {count, ms left} a key, {-1, -1} for
 * one not counted, {-2, -2} for one Redis refused (a key of another type, written by someone else): that request alone
 * is counted by the instance. A key that comes again (the rate of one project) is read once and added to once, at the end.
 */
const COUNT_ALL_LUA = `
local counted = {}
local ttls = {}
local added = {}
local order = {}
local function refused(reply)
  return type(reply) == 'table' and reply.err ~= nil
end
local function count(key, seconds)
  if counted[key] then
    counted[key] = counted[key] + 1
    added[key] = added[key] + 1
    return counted[key], ttls[key]
  end
  if refused(redis.pcall('set', key, 0, 'EX', seconds, 'NX')) then return nil end
  local consumed = redis.pcall('incrby', key, 1)
  if refused(consumed) then return nil end
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    redis.call('expire', key, seconds)
    ttl = 1000 * seconds
  end
  counted[key] = consumed
  ttls[key] = ttl
  added[key] = 0
  order[#order + 1] = key
  return consumed, ttl
end
local answers = {}
local previousAllowed = true
for i = 1, #KEYS do
  local limit = tonumber(ARGV[3 * i - 2])
  if ARGV[3 * i] == '1' and not previousAllowed then
    answers[2 * i - 1] = -1
    answers[2 * i] = -1
  else
    local consumed, ttl = count(KEYS[i], ARGV[3 * i - 1])
    if consumed == nil then
      answers[2 * i - 1] = -2
      answers[2 * i] = -2
      previousAllowed = false
    else
      answers[2 * i - 1] = consumed
      answers[2 * i] = ttl
      previousAllowed = consumed <= limit
    end
  end
end
for _, key in ipairs(order) do
  if added[key] > 0 then redis.call('incrby', key, added[key]) end
end
return answers
`

/** COUNT_ALL_LUA's answer for a key it did not count (the request's first limit refused it), and for one Redis refused. */
const NOT_COUNTED = -1
const REFUSED = -2

/** The command ioredis's defineCommand adds for COUNT_ALL_LUA: the number of keys, the keys, then ARGV. */
interface WithCountAll {
  countersignCountAll(keyCount: number, ...keysThenArgs: Array<string | number>): Promise<number[]>
}

/** The counts of one request: one limit, or two in turn. */
interface WaitingCounts {
  counts: Count[]
  /** When it began to wait (performance.now()). */
  sinceMs: number
  resolve: (decisions: Array<RateLimitDecision | undefined>) => void
  reject: (error: unknown) => void
}

/**
 * At most this many requests' counts in one script: Redis runs nothing else while a script runs (64 requests with a
 * poll gate each, about 1.7 ms on the slowest machine here), and it serves every instance.
 */
const MAX_COUNTED_TOGETHER = 64
/** Scripts on their way at once: a turn's requests go at the end of their turn, without waiting for the one before. */
const MAX_SCRIPTS_ON_THEIR_WAY = 4
/**
 * A request that has waited this long for a script to take it (every one on its way, Redis slow to answer) is counted
 * by the instance instead: a request never waits for Redis much longer than a command's own timeout.
 */
const LONGEST_WAIT_MS = COMMAND_TIMEOUT_MS / 2
/** Requests waiting beyond this number are counted by the instance at once. */
const MAX_WAITING = MAX_COUNTED_TOGETHER * MAX_SCRIPTS_ON_THEIR_WAY * 4

/**
 * Fixed windows in Redis (rate-limiter-flexible's RateLimiterRedis): a window starts at its key's first request and
 * lasts `windowMs` rounded up to whole seconds (windowSeconds). When Redis cannot be reached (connection lost, a command times out)
 * the request is counted by an in-memory limiter of this instance instead, and a warning is logged: the API keeps
 * answering, and for that time each instance enforces the limits on its own share of the traffic (fail open).
 *
 * Counted together: the requests that arrive in one turn of the event loop are counted by one script at the turn's end,
 * in the order they came (a group commit of counts); while MAX_SCRIPTS_ON_THEIR_WAY are on their way, the next waits,
 * gathering the requests that come meanwhile. Each request is still counted once, on its own key and with its own
 * answer, so a limit stays exact; one script instead of one a request saves the client and Redis the work of a command
 * each (docs/performance.md, "twelfth session"). A lone request waits for nothing but the end of its turn; none waits
 * for Redis much longer than a command's timeout (LONGEST_WAIT_MS, then the fallback; a script that fails sends every
 * request waiting to the fallback).
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly client: Redis
  private readonly limiters = new Map<string, RateLimiterRedis>()
  private readonly fallbacks = new Map<string, FallbackLimiter>()
  private firstConnection: Promise<void> | undefined
  private lastWarningMs = Number.NEGATIVE_INFINITY
  /** Requests whose counts wait for the next script, in the order they came. */
  private waiting: WaitingCounts[] = []
  private scriptsOnTheirWay = 0
  /** A script is due at the end of this turn. */
  private dueAtTurnEnd = false

  constructor(private readonly options: RedisRateLimiterOptions) {
    this.client = lazyRedis(options.redisUrl, { maxRetriesPerRequest: 1, commandTimeout: COMMAND_TIMEOUT_MS })
    this.client.on('error', (error) => this.warnFallback(error))
    this.client.defineCommand('countersignCountAll', { lua: COUNT_ALL_LUA })
  }

  async consume(key: string, limit: number, windowMs: number): Promise<RateLimitDecision> {
    const [decision] = await this.countTogether([{ key, limit, windowMs }])
    return decision as RateLimitDecision
  }

  /** `then` counted in the same script as `first`, only when `first` allowed the request. */
  async consumeInTurn(first: Count, then: Count): Promise<[RateLimitDecision, RateLimitDecision | undefined]> {
    const [decision, next] = await this.countTogether([first, then])
    return [decision as RateLimitDecision, next]
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

  /** Counts one request's limits with the others waiting; while Redis is away, this instance's fallback counts them. */
  private async countTogether(counts: Count[]): Promise<Array<RateLimitDecision | undefined>> {
    await this.connected()
    // Not waiting on a connection that is down, nor behind a crowd that Redis is not keeping up with: counted here.
    if (this.client.status !== 'ready' || this.waiting.length >= MAX_WAITING) return this.countHere(counts)
    return new Promise((resolve, reject) => {
      this.waiting.push({ counts, sinceMs: performance.now(), resolve, reject })
      this.countAtTurnEnd()
    })
  }

  private countAtTurnEnd(): void {
    if (this.dueAtTurnEnd || this.scriptsOnTheirWay >= MAX_SCRIPTS_ON_THEIR_WAY) return
    this.dueAtTurnEnd = true
    setImmediate(() => {
      this.dueAtTurnEnd = false
      void this.countWaiting()
    })
  }

  /** One script for the requests waiting (up to MAX_COUNTED_TOGETHER); those that waited too long are counted here. */
  private async countWaiting(): Promise<void> {
    const tooLongSince = performance.now() - LONGEST_WAIT_MS
    while (this.waiting.length > 0 && (this.waiting[0] as WaitingCounts).sinceMs < tooLongSince) {
      this.countHereFor(this.waiting.shift() as WaitingCounts)
    }
    const group = this.waiting.splice(0, MAX_COUNTED_TOGETHER)
    if (group.length === 0) return
    this.scriptsOnTheirWay += 1
    try {
      this.countAtTurnEnd()
      let answers: number[]
      try {
        answers = await this.countInRedis(group)
      } catch {
        // Redis did not answer (or not in time): this group, and every request waiting behind it, counted here; the
        // fallback warns.
        for (const waiting of [...group, ...this.waiting.splice(0)]) this.countHereFor(waiting)
        return
      }
      let at = 0
      for (const waiting of group) {
        const answered = waiting.counts.map((count) => ({ count, consumed: answers[at++] as number, msLeft: answers[at++] as number }))
        // Redis refused one of its keys: the request is counted here instead.
        if (answered.some(({ consumed }) => consumed === REFUSED)) this.countHereFor(waiting)
        else {
          waiting.resolve(
            answered.map(({ count, consumed, msLeft }) =>
              consumed === NOT_COUNTED ? undefined : this.counts(count.limit, consumed, msLeft),
            ),
          )
        }
      }
    } catch (error) {
      for (const waiting of group) waiting.reject(error)
    } finally {
      this.scriptsOnTheirWay -= 1
      if (this.waiting.length > 0) this.countAtTurnEnd()
    }
  }

  private countInRedis(group: WaitingCounts[]): Promise<number[]> {
    const keys = group.flatMap(({ counts }) => counts.map((count) => this.redisKey(count.key)))
    const args = group.flatMap(({ counts }) =>
      counts.flatMap((count, index) => [count.limit, windowSeconds(count.windowMs), index > 0 ? 1 : 0]),
    )
    return (this.client as unknown as WithCountAll).countersignCountAll(keys.length, ...keys, ...args)
  }

  private countHereFor(waiting: WaitingCounts): void {
    this.countHere(waiting.counts).then(waiting.resolve, waiting.reject)
  }

  /** This instance's fallback counts a request's limits, in turn, while Redis is away. */
  private async countHere(counts: Count[]): Promise<Array<RateLimitDecision | undefined>> {
    const count = (c: Count) => this.counted(this.fallbackFor(c.limit, c.windowMs).consume(c.key, 1), c.limit)
    const [first, then] = counts as [Count, Count | undefined]
    return then === undefined ? [await count(first)] : consumeOneByOne(count, first, then)
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
      // Read only (exhaustedUntil): the counts are the script's (countWaiting).
      limiter = new RateLimiterRedis({
        ...limiterShape(this.keyPrefix, limit, windowMs),
        storeClient: this.client,
        rejectIfRedisNotReady: true,
      })
      this.limiters.set(id, limiter)
    }
    return limiter
  }

  /** This instance's count of one limit while Redis is away. */
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
