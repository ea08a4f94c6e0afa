// Redis for tests: at TEST_REDIS_URL (default redis://127.0.0.1:6379). Suites that need it skip when no server
// answers, unless REQUIRE_REDIS=1, which makes its absence a failure.
import { randomBytes } from 'node:crypto'
import { describe } from 'node:test'
import { Redis } from 'ioredis'

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

async function redisReachable(): Promise<boolean> {
  const client = new Redis(TEST_REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null })
  client.on('error', () => {})
  try {
    await client.connect()
    return (await client.ping()) === 'PONG'
  } catch {
    return false
  } finally {
    client.disconnect()
  }
}

export const redisAvailable = await redisReachable()
if (!redisAvailable && process.env.REQUIRE_REDIS === '1') {
  throw new Error(`REQUIRE_REDIS=1 but Redis is not reachable at ${TEST_REDIS_URL}`)
}

/** The skip reason for a suite that needs Redis, or false when Redis answers. */
export const redisSkip: string | false = redisAvailable ? false : 'Redis is not reachable (set REQUIRE_REDIS=1 to fail instead)'

/** Declares a suite that runs against the test Redis, skipped (not failed) when it is absent and not required. */
export function describeWithRedis(name: string, suite: () => void): void {
  describe(`${name} [redis]`, { skip: redisSkip }, suite)
}

/** A key prefix of its own, so that test runs sharing one Redis never see each other's counts. */
export function uniqueRedisPrefix(): string {
  return `countersign-test:${randomBytes(6).toString('hex')}`
}
