import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { type Clock, ManualClock, systemClock } from '../../../src/platform/clock.js'
import { createLogger } from '../../../src/platform/logger.js'
import { MemoryRateLimiter } from '../../../src/platform/rate-limit/memory-rate-limiter.js'
import { type RateLimiter, retryAfterSeconds, secondsUntil } from '../../../src/platform/rate-limit/rate-limiter.js'
import { RedisRateLimiter } from '../../../src/platform/rate-limit/redis-rate-limiter.js'
import { redisSkip, TEST_REDIS_URL, uniqueRedisPrefix } from '../../support/redis.js'
import { proxied } from '../../support/tcp-proxy.js'

const silent = createLogger('silent')

interface Subject {
  limiter: RateLimiter
  clock: Clock
  /** Lets `ms` go by: the memory limiter's clock is moved; Redis counts in real time, so the test waits. */
  pass(ms: number): Promise<void>
}

/** The same behaviour, whichever store counts (windows are whole seconds in both). */
function rateLimiterBehaviour(name: string, skip: string | false, make: () => Subject): void {
  describe(name, { skip }, () => {
    const subjects: Subject[] = []
    const subject = () => {
      const made = make()
      subjects.push(made)
      return made
    }
    after(() => Promise.all(subjects.map((s) => s.limiter.close())))

    it('allows `limit` requests in a window, counting down, then refuses until the window ends', async () => {
      const { limiter, clock } = subject()
      for (let i = 1; i <= 3; i++) {
        const decision = await limiter.consume('project-a', 3, 1000)
        assert.equal(decision.allowed, true)
        assert.equal(decision.limit, 3)
        assert.equal(decision.remaining, 3 - i)
      }
      const refused = await limiter.consume('project-a', 3, 1000)
      assert.equal(refused.allowed, false)
      assert.equal(refused.remaining, 0)
      assert.ok(refused.resetAtMs > clock.now() && refused.resetAtMs <= clock.now() + 1000, 'resetAtMs is the end of the window')
    })

    it('says when a key has used up its limit, without counting anything itself', async () => {
      const { limiter, clock, pass } = subject()
      assert.equal(await limiter.exhaustedUntil('auth-failures:a', 2, 1000), undefined)
      await limiter.consume('auth-failures:a', 2, 1000)
      assert.equal(await limiter.exhaustedUntil('auth-failures:a', 2, 1000), undefined)
      assert.equal(await limiter.exhaustedUntil('auth-failures:a', 2, 1000), undefined, 'asking counted nothing')
      await limiter.consume('auth-failures:a', 2, 1000)
      const untilMs = await limiter.exhaustedUntil('auth-failures:a', 2, 1000)
      assert.ok(untilMs !== undefined && untilMs > clock.now() && untilMs <= clock.now() + 1000, String(untilMs))
      assert.equal(await limiter.exhaustedUntil('auth-failures:b', 2, 1000), undefined)
      await pass(1100)
      assert.equal(await limiter.exhaustedUntil('auth-failures:a', 2, 1000), undefined, 'the window ended')
    })

    it('counts each key apart', async () => {
      const { limiter } = subject()
      assert.equal((await limiter.consume('poll:p1:u1', 1, 1000)).allowed, true)
      assert.equal((await limiter.consume('poll:p1:u1', 1, 1000)).allowed, false)
      assert.equal((await limiter.consume('poll:p1:u2', 1, 1000)).allowed, true)
    })

    it('starts a new window once the old one has passed, and a refused request does not extend it', async () => {
      const { limiter, pass } = subject()
      assert.equal((await limiter.consume('gate', 1, 1000)).allowed, true)
      await pass(600)
      assert.equal((await limiter.consume('gate', 1, 1000)).allowed, false)
      await pass(500)
      const again = await limiter.consume('gate', 1, 1000)
      assert.equal(again.allowed, true, 'the window began at the first request, not at the refused one')
      assert.equal(again.remaining, 0)
    })

    it('counts two limits in turn, the second only while the first allows, on the counts `consume` keeps', async () => {
      const { limiter, clock } = subject()
      const rate = { key: 'rate:p1', limit: 3, windowMs: 60_000 }
      const gate = (uuid: string) => ({ key: `poll:p1:${uuid}`, limit: 1, windowMs: 1000 })
      await limiter.consume('rate:p1', 3, 60_000)
      const [first, passed] = await limiter.consumeInTurn(rate, gate('u1'))
      assert.deepEqual([first.allowed, first.remaining], [true, 1], 'the rate counted once before by consume')
      assert.ok(first.resetAtMs > clock.now() + 59_000 && first.resetAtMs <= clock.now() + 60_000, 'the rate window began at consume')
      assert.deepEqual([passed?.allowed, passed?.remaining], [true, 0])
      assert.ok(passed !== undefined && passed.resetAtMs > clock.now() && passed.resetAtMs <= clock.now() + 1000)
      const [second, shut] = await limiter.consumeInTurn(rate, gate('u1'))
      assert.deepEqual([second.allowed, second.remaining, shut?.allowed], [true, 0, false], 'the gate is shut; the rate counted it')
      assert.equal((await limiter.consume('poll:p1:u2', 1, 1000)).allowed, true, 'a gate consume counted')
      const [refused, uncounted] = await limiter.consumeInTurn(rate, gate('u3'))
      assert.deepEqual([refused.allowed, refused.remaining, uncounted], [false, 0, undefined], 'over the rate, the gate is not asked')
      assert.equal((await limiter.consume('poll:p1:u3', 1, 1000)).allowed, true, 'so it counted nothing on the gate')
      assert.equal((await limiter.consume('rate:p1', 3, 60_000)).allowed, false, 'consume sees the counts made in turn')
    })

    it('rounds a window up to whole seconds, as Redis keeps it', async () => {
      const { limiter, clock, pass } = subject()
      const first = await limiter.consume('half-second', 1, 1500)
      assert.ok(first.resetAtMs > clock.now() + 1500 && first.resetAtMs <= clock.now() + 2000, 'the window lasts 2 s')
      await pass(1700)
      assert.equal((await limiter.consume('half-second', 1, 1500)).allowed, false, 'still inside the 2-second window')
      await pass(400)
      assert.equal((await limiter.consume('half-second', 1, 1500)).allowed, true)
    })
  })
}

rateLimiterBehaviour('MemoryRateLimiter', false, () => {
  const clock = new ManualClock()
  return {
    limiter: new MemoryRateLimiter(clock),
    clock,
    pass: async (ms) => clock.advance(ms),
  }
})

rateLimiterBehaviour('RedisRateLimiter', redisSkip, () => ({
  limiter: new RedisRateLimiter({ redisUrl: TEST_REDIS_URL, clock: systemClock, logger: silent, keyPrefix: uniqueRedisPrefix() }),
  clock: systemClock,
  pass: (ms) => sleep(ms),
}))

describe('MemoryRateLimiter memory', () => {
  it('holds a bounded number of keys however many have passed through it: a poll gate key per payload read', async () => {
    const clock = new ManualClock()
    const limiter = new MemoryRateLimiter(clock)
    let mostHeld = 0
    // 300,000 payloads read once each, 2,000 a second, behind a 1-second poll gate.
    for (let read = 0; read < 300_000; read++) {
      if (read % 2_000 === 0) clock.advance(1_000)
      assert.equal((await limiter.consume(`poll:proj_a:payload-${read}`, 1, 1_000)).allowed, true)
      mostHeld = Math.max(mostHeld, limiter.heldKeys)
    }
    assert.ok(mostHeld <= 10_000, `at most 10,000 keys held at once (held ${mostHeld})`)
    await limiter.close()
  })

  it('keeps every key whose window is still open, however many there are', async () => {
    const clock = new ManualClock()
    const limiter = new MemoryRateLimiter(clock)
    for (let key = 0; key < 25_000; key++) await limiter.consume(`rate:proj_${key}`, 1, 60_000)
    assert.equal(limiter.heldKeys, 25_000)
    assert.equal((await limiter.consume('rate:proj_0', 1, 60_000)).allowed, false, 'the first key is still counted')
    await limiter.close()
  })
})

describe('seconds until a window resets', () => {
  it('rounds up to whole seconds, and is 0 once the reset has passed (X-RateLimit-Reset)', () => {
    assert.equal(secondsUntil(10_000, 0), 10)
    assert.equal(secondsUntil(10_001, 0), 11)
    assert.equal(secondsUntil(1, 0), 1)
    assert.equal(secondsUntil(5_000, 5_000), 0)
    assert.equal(secondsUntil(5_000, 9_000), 0)
  })

  it('tells a refused request to wait at least 1 s (Retry-After), even when the window has just ended', () => {
    const refused = { allowed: false, limit: 1, remaining: 0, resetAtMs: 5_000 }
    assert.equal(retryAfterSeconds(refused, 2_500), 3)
    assert.equal(retryAfterSeconds(refused, 5_000), 1)
    assert.equal(retryAfterSeconds(refused, 7_000), 1)
  })
})

describe('RedisRateLimiter across instances', { skip: redisSkip }, () => {
  it('shares one count between every instance on the same Redis', async () => {
    const keyPrefix = uniqueRedisPrefix()
    const instances = [1, 2, 3].map(() => new RedisRateLimiter({ redisUrl: TEST_REDIS_URL, clock: systemClock, logger: silent, keyPrefix }))
    try {
      const decisions = []
      for (let i = 0; i < 7; i++) decisions.push(await (instances[i % 3] as RedisRateLimiter).consume('rate:proj', 5, 60_000))
      assert.deepEqual(
        decisions.map((d) => d.allowed),
        [true, true, true, true, true, false, false],
      )
      assert.deepEqual(
        decisions.map((d) => d.remaining),
        [4, 3, 2, 1, 0, 0, 0],
      )
    } finally {
      await Promise.all(instances.map((i) => i.close()))
    }
  })
})

describe('RedisRateLimiter without a key prefix', { skip: redisSkip }, () => {
  it('keeps each key where rate-limiter-flexible reads it, so that counts in turn, consume and exhaustedUntil see one count', async () => {
    const limiter = new RedisRateLimiter({ redisUrl: TEST_REDIS_URL, clock: systemClock, logger: silent, keyPrefix: '' })
    const rate = `${uniqueRedisPrefix()}:rate`
    try {
      await limiter.consume(rate, 3, 60_000)
      const [counted] = await limiter.consumeInTurn(
        { key: rate, limit: 3, windowMs: 60_000 },
        { key: `${rate}:gate`, limit: 1, windowMs: 1000 },
      )
      assert.equal(counted.remaining, 1)
      assert.equal(await limiter.exhaustedUntil(rate, 3, 60_000), undefined)
      assert.equal((await limiter.consume(rate, 3, 60_000)).remaining, 0)
      assert.notEqual(await limiter.exhaustedUntil(rate, 3, 60_000), undefined)
    } finally {
      await limiter.close()
    }
  })
})

describe('RedisRateLimiter counting the requests that arrive together', { skip: redisSkip }, () => {
  /** The scripts Redis runs whose keys start with `keyPrefix`, seen by MONITOR from their start to `stop`. */
  const watchScripts = async (keyPrefix: string) => {
    const client = new Redis(TEST_REDIS_URL)
    const monitor = await client.monitor()
    let scripts = 0
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (/^eval/i.test(args[0] ?? '') && args.some((arg) => arg.startsWith(keyPrefix))) scripts += 1
    })
    return {
      stop: async () => {
        // MONITOR's lines can arrive after the commands' own answers: a round trip and a pause let them in.
        await client.ping()
        await sleep(50)
        monitor.disconnect()
        client.disconnect()
        return scripts
      },
    }
  }

  it('counts thirty requests of one turn in one script, and still allows exactly the limit, each with its own remaining', async () => {
    const keyPrefix = uniqueRedisPrefix()
    const limiter = new RedisRateLimiter({ redisUrl: TEST_REDIS_URL, clock: systemClock, logger: silent, keyPrefix })
    try {
      await limiter.consume('warm-up', 1, 1000)
      const watch = await watchScripts(keyPrefix)
      const decisions = await Promise.all(Array.from({ length: 30 }, () => limiter.consume('rate:proj', 20, 60_000)))
      assert.equal(await watch.stop(), 1, 'one script for the thirty')
      assert.deepEqual(
        decisions.map((d) => d.allowed),
        [...Array(20).fill(true), ...Array(10).fill(false)],
        'allowed in the order they came',
      )
      assert.deepEqual(
        decisions.map((d) => d.remaining),
        [...Array.from({ length: 20 }, (_, i) => 19 - i), ...Array(10).fill(0)],
      )
      assert.equal((await limiter.consume('rate:proj', 20, 60_000)).allowed, false, 'nothing was counted twice or lost')
    } finally {
      await limiter.close()
    }
  })

  it('a Redis that stops answering, its connection open, holds no request much longer than a command’s timeout', async () => {
    const proxy = await proxied(TEST_REDIS_URL, 6379)
    const limiter = new RedisRateLimiter({ redisUrl: proxy.url, clock: systemClock, logger: silent, keyPrefix: uniqueRedisPrefix() })
    try {
      await limiter.consume('warm-up', 1, 1000)
      proxy.mute(true)
      // More than the scripts on their way can take, arriving over a second: each waits for the ones before it.
      const waits: number[] = []
      const all: Array<Promise<unknown>> = []
      for (let turn = 0; turn < 20; turn++) {
        const sentAt = performance.now()
        for (let i = 0; i < 100; i++) {
          all.push(limiter.consume(`rate:p${i % 7}`, 1_000_000, 60_000).then(() => waits.push(performance.now() - sentAt)))
        }
        await sleep(50)
      }
      await Promise.all(all)
      assert.equal(waits.length, 2000, 'every request answered')
      const longest = Math.max(...waits)
      // A command's timeout is 500 ms; one script at a time behind a stalled Redis held requests for seconds.
      assert.ok(longest < 1500, `the longest wait was ${Math.round(longest)} ms`)
    } finally {
      await limiter.close()
      await proxy.close()
    }
  })

  it('a key Redis refuses (of another type, written by someone else) sends that request alone to the fallback', async () => {
    const keyPrefix = uniqueRedisPrefix()
    const limiter = new RedisRateLimiter({ redisUrl: TEST_REDIS_URL, clock: systemClock, logger: silent, keyPrefix })
    const other = new Redis(TEST_REDIS_URL)
    try {
      await other.hset(`${keyPrefix}:rate:taken`, 'field', 'value')
      await limiter.consume('warm-up', 1, 1000)
      const [taken, own] = await Promise.all([limiter.consume('rate:taken', 5, 60_000), limiter.consume('rate:own', 5, 60_000)])
      assert.deepEqual([taken.allowed, taken.remaining], [true, 4], 'counted by the instance')
      assert.equal(await other.get(`${keyPrefix}:rate:own`), '1', 'the other request of the script was counted in Redis, once')
      assert.equal(own.remaining, 4)
    } finally {
      other.disconnect()
      await limiter.close()
    }
  })

  it('counts the second limit of requests counted together only where the first allowed it', async () => {
    const limiter = new RedisRateLimiter({ redisUrl: TEST_REDIS_URL, clock: systemClock, logger: silent, keyPrefix: uniqueRedisPrefix() })
    try {
      const rate = { key: 'rate:proj', limit: 3, windowMs: 60_000 }
      const gate = (i: number) => ({ key: `poll:proj:${i % 2}`, limit: 1, windowMs: 60_000 })
      const decisions = await Promise.all(Array.from({ length: 5 }, (_, i) => limiter.consumeInTurn(rate, gate(i))))
      assert.deepEqual(
        decisions.map(([first, then]) => [first.allowed, then?.allowed]),
        [
          [true, true],
          [true, true],
          [true, false],
          [false, undefined],
          [false, undefined],
        ],
      )
      // The refused requests' gates were not counted: gate 1 holds the one count of request 1, and this is its second.
      assert.equal((await limiter.consume('poll:proj:1', 3, 60_000)).remaining, 1)
    } finally {
      await limiter.close()
    }
  })
})

describe('RedisRateLimiter while Redis is unreachable', () => {
  it('keeps answering with a per-instance count, and warns', async () => {
    const lines: string[] = []
    const logger = createLogger('warn', { write: (line: string) => lines.push(line) })
    // Nothing listens on port 1: every connection attempt is refused.
    const limiter = new RedisRateLimiter({ redisUrl: 'redis://127.0.0.1:1', clock: systemClock, logger })
    try {
      const decisions = []
      for (let i = 0; i < 3; i++) decisions.push(await limiter.consume('rate:proj', 2, 60_000))
      assert.deepEqual(
        decisions.map((d) => d.allowed),
        [true, true, false],
      )
      const rate = { key: 'rate:proj', limit: 2, windowMs: 60_000 }
      const [refused, uncounted] = await limiter.consumeInTurn(rate, { key: 'poll:proj:u1', limit: 1, windowMs: 1000 })
      assert.deepEqual([refused.allowed, uncounted], [false, undefined], 'counted in turn on the same per-instance counts')
      const other = { key: 'rate:other', limit: 2, windowMs: 60_000 }
      const [allowed, gate] = await limiter.consumeInTurn(other, { key: 'poll:other:u1', limit: 1, windowMs: 1000 })
      assert.deepEqual([allowed.allowed, gate?.allowed], [true, true])
      const [, shut] = await limiter.consumeInTurn(other, { key: 'poll:other:u1', limit: 1, windowMs: 1000 })
      assert.equal(shut?.allowed, false)
      assert.ok(
        lines.some((line) => JSON.parse(line).msg === 'Redis is unreachable: rate limits are counted per instance until it is back'),
        'a warning says the limits fell back to this instance',
      )
    } finally {
      await limiter.close()
    }
  })
})

describe('RedisRateLimiter when Redis goes away and comes back', { skip: redisSkip }, () => {
  it('counts in turn on this instance while it is away, and in Redis again once it is back', async () => {
    const proxy = await proxied(TEST_REDIS_URL, 6379)
    const keyPrefix = uniqueRedisPrefix()
    const limiter = new RedisRateLimiter({ redisUrl: proxy.url, clock: systemClock, logger: silent, keyPrefix })
    const direct = new RedisRateLimiter({ redisUrl: TEST_REDIS_URL, clock: systemClock, logger: silent, keyPrefix })
    const rate = { key: 'rate:proj', limit: 100, windowMs: 60_000 }
    const gate = { key: 'poll:proj:u1', limit: 1, windowMs: 60_000 }
    try {
      const [inRedis] = await limiter.consumeInTurn(rate, gate)
      assert.equal(inRedis.remaining, 99)
      for (let i = 0; i < 39; i++) await direct.consume('rate:proj', 100, 60_000)
      assert.equal((await direct.consume('rate:proj', 100, 60_000)).remaining, 59, 'counted in Redis, where every instance sees it')
      proxy.cut()
      const [away, awayGate] = await limiter.consumeInTurn(rate, gate)
      assert.deepEqual([away.allowed, away.remaining, awayGate?.allowed], [true, 99, true], 'counted afresh by this instance')
      proxy.restore()
      // The instance's own count can fall at most to 69 in these 30 tries; Redis's is at 58 or 57 after the next one.
      let back: Awaited<ReturnType<RateLimiter['consumeInTurn']>> | undefined
      for (let attempt = 0; attempt < 30 && !(back && back[0].remaining < 60); attempt++) {
        await sleep(100)
        back = await limiter.consumeInTurn(rate, { key: `poll:proj:u${attempt + 2}`, limit: 1, windowMs: 60_000 })
      }
      // 57 when the call made as the connection dropped reached Redis after all: it timed out here (and was counted by
      // this instance), and ioredis sent it once the connection was back. An outage may count a request twice, never none.
      assert.ok(back !== undefined && [57, 58].includes(back[0].remaining), `back on the count Redis kept: ${back?.[0].remaining}`)
      assert.equal(back?.[1]?.allowed, true)
    } finally {
      await Promise.all([limiter.close(), direct.close()])
      await proxy.close()
    }
  })
})
