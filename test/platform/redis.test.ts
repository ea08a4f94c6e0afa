import assert from 'node:assert/strict'
import { once } from 'node:events'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import { it } from 'node:test'
import type { Redis } from 'ioredis'
import { CLOSE_WAIT_MS, closeRedis, connectedWithin, lazyRedis } from '../../src/platform/redis.js'
import { describeWithRedis, TEST_REDIS_URL, uniqueRedisPrefix } from '../support/redis.js'

/** How many writes the client's current connection hands to the operating system from now on. */
function countWrites(client: Redis): () => number {
  const socket = client.stream as Socket & { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void }
  let writes = 0
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method]
    socket[method] = function (this: Socket, ...args: unknown[]) {
      writes++
      return original.apply(this, args)
    }
  }
  return () => writes
}

/** Adds `by` to the key in one of the three ways ioredis writes a command: a command, a script, a pipeline. */
async function increment(client: Redis, key: string, by: number, way: number): Promise<number> {
  if (way === 0) return client.incrby(key, by)
  if (way === 1) return (await client.eval("return redis.call('incrby', KEYS[1], ARGV[1])", 1, key, by)) as number
  const [[error, value]] = (await client.pipeline().incrby(key, by).exec()) as [[Error | null, number]]
  if (error) throw error
  return value
}

/**
 * Twenty increments of one key (commands, scripts and pipelines in turn), each sent from a callback of its own in one
 * turn, as the requests read in a turn send theirs.
 */
function incrementsFromOneTurn(client: Redis, key: string): Promise<number[]> {
  return Promise.all(
    Array.from(
      { length: 20 },
      (_, i) => new Promise<number>((resolve, reject) => setImmediate(() => increment(client, key, i + 1, i % 3).then(resolve, reject))),
    ),
  )
}

/** What the INCRBYs answer in order: the running sums 1, 3, 6, ... */
const RUNNING_SUMS = Array.from({ length: 20 }, (_, i) => ((i + 1) * (i + 2)) / 2)

describeWithRedis('Redis connections', () => {
  it('send the commands of one turn of the event loop in one write, each answered as its own, on every connection', async () => {
    const client = lazyRedis(TEST_REDIS_URL)
    const key = `${uniqueRedisPrefix()}:count`
    try {
      await connectedWithin(client, 2000)
      const writes = countWrites(client)
      assert.deepEqual(await incrementsFromOneTurn(client, key), RUNNING_SUMS)
      assert.equal(writes(), 1, 'twenty commands, one write')

      // A reconnection is a new socket: it holds its writes to the turn's end too.
      const first = client.stream
      const ready = new Promise((resolve) => client.once('ready', resolve))
      client.disconnect(true)
      await ready
      assert.notEqual(client.stream, first)
      const writesAfter = countWrites(client)
      await client.del(key)
      assert.deepEqual(await incrementsFromOneTurn(client, key), RUNNING_SUMS)
      assert.equal(writesAfter(), 2, 'the DEL, then the twenty in one write')
    } finally {
      await client.del(key).catch(() => {})
      await closeRedis(client)
    }
  })
})

it('closing does not wait without end for a Redis that took the connection and stopped answering', { timeout: 10_000 }, async () => {
  // A server that accepts connections and never answers: the client's commands and its QUIT wait forever.
  const sockets: Socket[] = []
  const stalled = createServer((socket) => sockets.push(socket))
  await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve))
  const client = lazyRedis(`redis://127.0.0.1:${(stalled.address() as AddressInfo).port}`, { maxRetriesPerRequest: null })
  try {
    await connectedWithin(client, 500)
    void client.publish('events', 'payload.changed').catch(() => {})
    const started = performance.now()
    await closeRedis(client)
    const tookMs = performance.now() - started
    assert.ok(tookMs >= CLOSE_WAIT_MS - 50 && tookMs < CLOSE_WAIT_MS + 1000, `closed in ${tookMs.toFixed(0)} ms`)
    if (client.status !== 'end') await once(client, 'end')
  } finally {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => stalled.close(resolve))
  }
})
