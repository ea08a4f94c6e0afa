// Counts open live streams per key (a project, a payload) so that they can be capped: in this process, or in Redis
// across every instance.
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Clock } from '../../../platform/clock.js'
import { closeRedis, connectedWithin, lazyRedis } from '../../../platform/redis.js'

export interface StreamSlot {
  /** Keeps the slot held; a stream calls it at each heartbeat. */
  renew(): void
  release(): void
}

export interface StreamSlots {
  /** Takes one of `limit` slots under `key`, or returns undefined when all are taken. */
  acquire(key: string, limit: number): Promise<StreamSlot | undefined>
  close(): Promise<void>
}

export class MemoryStreamSlots implements StreamSlots {
  private readonly held = new Map<string, number>()

  acquire(key: string, limit: number): Promise<StreamSlot | undefined> {
    const count = this.held.get(key) ?? 0
    if (count >= limit) return Promise.resolve(undefined)
    this.held.set(key, count + 1)
    let released = false
    return Promise.resolve({
      renew: () => {},
      release: () => {
        if (released) return
        released = true
        const left = (this.held.get(key) ?? 1) - 1
        if (left === 0) this.held.delete(key)
        else this.held.set(key, left)
      },
    })
  }

  close(): Promise<void> {
    return Promise.resolve()
  }
}

/** A stream opened right after start waits this long at most for the first connection, so that it is counted. */
const FIRST_CONNECTION_WAIT_MS = 2000
/** A Redis that has not answered a command in this long counts as away (as for the rate limits). */
const COMMAND_TIMEOUT_MS = 500

/** Drops lapsed leases, then adds this one if fewer than the limit are held. KEYS[1]; ARGV: now, lease end, limit, member, key TTL. */
const ACQUIRE_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`

/**
 * Slots are leases in a sorted set per key, scored by when they lapse: a stream renews its lease at each heartbeat,
 * so the slots of an instance that died are free again one lease later. When Redis cannot be reached, or does not
 * answer within COMMAND_TIMEOUT_MS, the slot is counted in this instance's memory instead, against the same limit
 * (each instance then allows up to the limit, as the rate limits do): refusing every stream during an outage would
 * protect nothing, and letting every stream through uncounted had let one client open any number of them. Nor does a
 * stream wait for a Redis that stopped answering: without the timeout, its opening had waited for as long as Redis
 * was silent. A slot taken in Redis by a script that answered too late lapses one lease later, never renewed.
 */
export class RedisStreamSlots implements StreamSlots {
  private readonly client: Redis
  private firstConnection: Promise<void> | undefined
  private nextMember = 0
  private readonly instanceId = Math.random().toString(36).slice(2)
  private readonly fallback = new MemoryStreamSlots()

  constructor(
    redisUrl: string,
    private readonly options: { clock: Clock; leaseMs: number; logger: Logger; keyPrefix?: string },
  ) {
    this.client = lazyRedis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: COMMAND_TIMEOUT_MS })
    this.client.on('error', (error) => options.logger.warn({ err: error }, 'Redis connection for live stream caps failed; retrying'))
  }

  async acquire(key: string, limit: number): Promise<StreamSlot | undefined> {
    const setKey = `${this.options.keyPrefix ?? 'countersign:streams'}:${key}`
    const member = `${this.instanceId}:${this.nextMember++}`
    const { clock, leaseMs, logger } = this.options
    this.firstConnection ??= connectedWithin(this.client, FIRST_CONNECTION_WAIT_MS)
    await this.firstConnection
    try {
      const nowMs = clock.now()
      const taken = await this.client.eval(ACQUIRE_SCRIPT, 1, setKey, nowMs, nowMs + leaseMs, limit, member, leaseMs * 2)
      if (taken !== 1) return undefined
    } catch (error) {
      logger.warn({ err: error }, 'could not count live streams in Redis; counted by this instance alone')
      return this.fallback.acquire(key, limit)
    }
    let released = false
    return {
      // Added again if it is gone, not only updated: a Redis restarted without its data, or an outage longer than a
      // lease (whose slots the next acquire drops), had left every stream still open uncounted, and the project or the
      // payload as many again (measured: 20 open of a cap of 10 after one restart). A release is sent after the last
      // renew on the same connection, and no renew follows it.
      renew: () => {
        if (released) return
        const leaseEndMs = clock.now() + leaseMs
        this.client
          .multi()
          .zadd(setKey, leaseEndMs, member)
          .pexpire(setKey, leaseMs * 2)
          .exec()
          .catch((error: unknown) => logger.warn({ err: error }, 'could not renew a live stream slot in Redis'))
      },
      release: () => {
        if (released) return
        released = true
        this.client
          .zrem(setKey, member)
          .catch((error: unknown) => logger.warn({ err: error }, 'could not release a live stream slot in Redis'))
      },
    }
  }

  async close(): Promise<void> {
    await closeRedis(this.client)
  }
}
