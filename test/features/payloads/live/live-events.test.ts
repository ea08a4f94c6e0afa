import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { type LiveEvents, LocalLiveEvents, RedisLiveEvents } from '../../../../src/features/payloads/live/live-events.js'
import { MemoryStreamSlots, RedisStreamSlots, type StreamSlots } from '../../../../src/features/payloads/live/stream-slots.js'
import type { PayloadView } from '../../../../src/features/payloads/schemas.js'
import { ManualClock } from '../../../../src/platform/clock.js'
import { createLogger } from '../../../../src/platform/logger.js'
import { redisSkip, TEST_REDIS_URL, uniqueRedisPrefix } from '../../../support/redis.js'
import { startTcpProxy } from '../../../support/tcp-proxy.js'

const silent = createLogger('silent')

const view = (uuid: string, status: PayloadView['status'] = 'signed'): PayloadView => ({
  uuid,
  type: 'signMessage',
  status,
  signerAddress: null,
  txHash: null,
  walletAdapter: null,
  expiresAt: '2026-01-15T12:05:00.000Z',
  createdAt: '2026-01-15T12:00:00.000Z',
  resolvedAt: '2026-01-15T12:01:00.000Z',
  externalId: null,
  metadata: null,
})

/** Collects what a listener receives; `until` waits for the count to reach n. */
function collector() {
  const received: Array<PayloadView | null> = []
  return {
    received,
    listener: (change: PayloadView | null) => received.push(change),
    async until(n: number, timeoutMs = 3000) {
      const deadline = Date.now() + timeoutMs
      while (received.length < n && Date.now() < deadline) await sleep(10)
    },
  }
}

const changesOf = (received: Array<PayloadView | null>) => received.filter((r): r is PayloadView => r !== null)

describe('LocalLiveEvents', () => {
  it('delivers a change to the subscribers of its payload only, until they unsubscribe', async () => {
    const events: LiveEvents = new LocalLiveEvents()
    const a = collector()
    const b = collector()
    const stopA = events.subscribe('uuid-a', a.listener)
    events.subscribe('uuid-b', b.listener)
    await events.publish(view('uuid-a'))
    stopA()
    await events.publish(view('uuid-a', 'rejected'))
    assert.deepEqual(a.received, [view('uuid-a')])
    assert.deepEqual(b.received, [])
  })

  it('reminds the subscribers of one payload to read it again', async () => {
    const events: LiveEvents = new LocalLiveEvents()
    const [a, b] = [collector(), collector()]
    events.subscribe('uuid-a', a.listener)
    events.subscribe('uuid-b', b.listener)
    await events.remind('uuid-a')
    assert.deepEqual([a.received, b.received], [[null], []])
  })
})

/** A Redis URL that reaches the test's Redis through a proxy the test can cut or mute. */
async function redisBehindProxy() {
  const redis = new URL(TEST_REDIS_URL)
  const proxy = await startTcpProxy(redis.hostname, Number(redis.port || 6379))
  return { proxy, url: `redis://127.0.0.1:${proxy.port}${redis.pathname}` }
}

describe('RedisLiveEvents', { skip: redisSkip }, () => {
  const opened: LiveEvents[] = []
  const open = (redisUrl = TEST_REDIS_URL) => {
    const events = new RedisLiveEvents(redisUrl, silent)
    opened.push(events)
    return events
  }
  after(() => Promise.all(opened.map((e) => e.close())))

  it('delivers a change published on one instance to a subscriber on another, and tells subscribers when it subscribed', async () => {
    const [one, two] = [open(), open()]
    const watcher = collector()
    two.subscribe('uuid-x', watcher.listener)
    const other = collector()
    two.subscribe('uuid-y', other.listener)
    // The first null is the subscription coming up: the stream reads its payload then.
    await watcher.until(1)
    assert.deepEqual(watcher.received, [null])

    await one.publish(view('uuid-x'))
    await watcher.until(2)
    assert.deepEqual(changesOf(watcher.received), [view('uuid-x')])
    assert.deepEqual(changesOf(other.received), [])

    // A reminder from one instance: the subscribers of that payload on another read it again (null), the rest hear nothing.
    const otherBefore = other.received.length
    await one.remind('uuid-x')
    await watcher.until(3)
    assert.deepEqual(watcher.received.slice(2), [null])
    assert.equal(other.received.length, otherBefore)
  })

  it('tells its own subscribers to read a change it could not publish, without waiting for Redis to be back', async () => {
    const { proxy, url } = await redisBehindProxy()
    try {
      const events = open(url)
      const [changed, reminded, untouched] = [collector(), collector(), collector()]
      events.subscribe('uuid-changed', changed.listener)
      events.subscribe('uuid-reminded', reminded.listener)
      events.subscribe('uuid-untouched', untouched.listener)
      await changed.until(1)
      assert.deepEqual(changed.received, [null])

      // Redis goes away: the change is committed on this instance, and its message cannot go out.
      proxy.cut()
      await assert.rejects(events.publish(view('uuid-changed')))
      await assert.rejects(events.remind('uuid-reminded'))
      // The streams here read the payload again (null, never the view, which a later change may have overtaken), while
      // Redis is still away; the streams of other payloads hear nothing.
      assert.deepEqual(changed.received, [null, null])
      assert.deepEqual(reminded.received, [null, null])
      assert.deepEqual(untouched.received, [null])
    } finally {
      await proxy.close()
    }
  })

  it('tells the other instances to read a change it could not publish once its own Redis connection is back', async () => {
    // Only this instance loses Redis (its network path, say): the others' subscriptions stay up, and nothing else would
    // make their streams read again before the payload's expiry.
    const { proxy, url } = await redisBehindProxy()
    try {
      const cutOff = open(url)
      const other = open()
      const [changed, reminded, untouched] = [collector(), collector(), collector()]
      other.subscribe('uuid-unsent-change', changed.listener)
      other.subscribe('uuid-unsent-reminder', reminded.listener)
      other.subscribe('uuid-sent-nothing', untouched.listener)
      await changed.until(1)
      await cutOff.remind('uuid-warm-up')

      proxy.cut()
      // Once the instance knows the connection is gone (a command in flight at the cut is sent again on reconnection).
      await sleep(100)
      await assert.rejects(cutOff.publish(view('uuid-unsent-change')))
      await assert.rejects(cutOff.remind('uuid-unsent-reminder'))
      await sleep(300)
      assert.deepEqual([changed.received, reminded.received], [[null], [null]], 'nothing reached the other instance')

      proxy.restore()
      await changed.until(2, 5000)
      await reminded.until(2, 5000)
      assert.deepEqual([changed.received, reminded.received, untouched.received], [[null, null], [null, null], [null]])
    } finally {
      await proxy.close()
    }
  })
})

function streamSlotsBehaviour(name: string, skip: string | false, make: (clock: ManualClock) => StreamSlots): void {
  describe(name, { skip }, () => {
    const made: StreamSlots[] = []
    after(() => Promise.all(made.map((s) => s.close())))
    const open = (clock = new ManualClock()) => {
      const slots = make(clock)
      made.push(slots)
      return slots
    }

    it('gives out `limit` slots per key and one more once a slot is released', async () => {
      const slots = open()
      const key = `project:${uniqueRedisPrefix()}`
      const first = await slots.acquire(key, 2)
      const second = await slots.acquire(key, 2)
      assert.ok(first && second)
      assert.equal(await slots.acquire(key, 2), undefined)
      assert.ok(await slots.acquire(`${key}-other`, 2), 'another key has its own slots')
      first.release()
      first.release()
      await sleep(20)
      assert.ok(await slots.acquire(key, 2), 'a released slot is free again')
      assert.equal(await slots.acquire(key, 2), undefined, 'releasing twice frees one slot only')
    })
  })
}

streamSlotsBehaviour('MemoryStreamSlots', false, () => new MemoryStreamSlots())
streamSlotsBehaviour(
  'RedisStreamSlots',
  redisSkip,
  (clock) => new RedisStreamSlots(TEST_REDIS_URL, { clock, leaseMs: 60_000, logger: silent, keyPrefix: uniqueRedisPrefix() }),
)

describe('RedisStreamSlots across instances', { skip: redisSkip }, () => {
  it('counts the streams of every instance together, and frees the slots of an instance that stopped renewing', async () => {
    const clock = new ManualClock()
    const keyPrefix = uniqueRedisPrefix()
    const [one, two] = [1, 2].map(() => new RedisStreamSlots(TEST_REDIS_URL, { clock, leaseMs: 60_000, logger: silent, keyPrefix }))
    try {
      await sleep(100)
      const held = await one?.acquire('project:p', 2)
      const renewed = await two?.acquire('project:p', 2)
      assert.ok(held && renewed)
      assert.equal(await two?.acquire('project:p', 2), undefined)

      clock.advance(40_000)
      renewed.renew()
      await sleep(20)
      clock.advance(30_000)
      // The first instance's lease lapsed (it never renewed, as if it had died); the renewed one holds.
      assert.ok(await two?.acquire('project:p', 2))
      assert.equal(await one?.acquire('project:p', 2), undefined)
    } finally {
      await Promise.all([one?.close(), two?.close()])
    }
  })
})

describe('RedisStreamSlots after Redis restarts', { skip: redisSkip }, () => {
  it('counts the streams still open again at their next heartbeat, so that the cap holds', async () => {
    const keyPrefix = uniqueRedisPrefix()
    const slots = new RedisStreamSlots(TEST_REDIS_URL, { clock: new ManualClock(), leaseMs: 60_000, logger: silent, keyPrefix })
    const admin = new Redis(TEST_REDIS_URL)
    try {
      const open = await Promise.all(Array.from({ length: 3 }, () => slots.acquire('project:p', 3)))
      assert.equal(open.filter((slot) => slot !== undefined).length, 3)
      // A Redis restarted without its data has forgotten every slot; the streams are still open.
      await admin.del(`${keyPrefix}:project:p`)
      for (const slot of open) slot?.renew()
      await sleep(50)
      assert.equal(await slots.acquire('project:p', 3), undefined)
      assert.equal(await admin.zcard(`${keyPrefix}:project:p`), 3)
    } finally {
      await admin.del(`${keyPrefix}:project:p`)
      admin.disconnect()
      await slots.close()
    }
  })
})

describe('RedisStreamSlots while Redis is away', { skip: redisSkip }, () => {
  for (const away of ['cut', 'silent'] as const) {
    it(`counts streams against the cap on this instance when Redis is ${away === 'cut' ? 'unreachable' : 'connected but silent'}, without waiting for it`, {
      timeout: 10_000,
    }, async () => {
      const { proxy, url } = await redisBehindProxy()
      const slots = new RedisStreamSlots(url, {
        clock: new ManualClock(),
        leaseMs: 60_000,
        logger: silent,
        keyPrefix: uniqueRedisPrefix(),
      })
      try {
        const counted = await slots.acquire('sign:p', 3)
        assert.ok(counted)
        if (away === 'cut') proxy.cut()
        else proxy.mute(true)
        await sleep(100)

        // One client asks for ten slots of a cap of three at once: each answer comes within the command timeout, and
        // three are given, counted here (the slot held in Redis before is not known here).
        const startedMs = Date.now()
        const answers = await Promise.all(Array.from({ length: 10 }, () => slots.acquire('sign:p', 3)))
        assert.ok(Date.now() - startedMs < 2000, `answered in ${Date.now() - startedMs} ms`)
        const given = answers.filter((slot) => slot !== undefined)
        assert.equal(given.length, 3)
        given[0]?.release()
        assert.ok(await slots.acquire('sign:p', 3))
        assert.equal(await slots.acquire('sign:p', 3), undefined)
      } finally {
        proxy.mute(false)
        await Promise.all([slots.close(), proxy.close()])
      }
    })
  }
})
