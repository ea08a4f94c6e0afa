// Redis connections that open on first use: a process that never needs Redis (a CLI command) never connects, and
// so never waits on a connection at exit.
import type { Redis, RedisOptions } from 'ioredis'
import { loadOnDemand } from './load-on-demand.js'

/** A client that connects on its first command, or on connectedWithin(). */
export function lazyRedis(redisUrl: string, options: RedisOptions = {}): Redis {
  const ioredis = loadOnDemand<typeof import('ioredis')>('ioredis')
  return new ioredis.Redis(redisUrl, { ...options, lazyConnect: true })
}

/**
 * Starts connecting if not yet, and settles on 'ready', or after `maxWaitMs` when Redis does not answer: a fresh
 * instance's first requests then count in Redis from the start, yet an instance whose Redis is down still serves.
 */
export function connectedWithin(client: Redis, maxWaitMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve()
  if (client.status === 'wait') client.connect().catch(() => {})
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, maxWaitMs)
    timer.unref()
    client.once('ready', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}

/** Closes after the commands under way; a client that never connected is just dropped. */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status === 'wait' || client.status === 'end') {
    client.disconnect()
    return
  }
  await client.quit().catch(() => client.disconnect())
}
