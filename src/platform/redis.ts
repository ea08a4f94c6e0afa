// Redis connections that open on first use: a process that never needs Redis (a CLI command) never connects, and
// so never waits on a connection at exit.
import type { Socket } from 'node:net'
import type { Redis, RedisOptions } from 'ioredis'
import { loadOnDemand } from './load-on-demand.js'

/** A client that connects on its first command, or on connectedWithin(); its connection writes once a turn. */
export function lazyRedis(redisUrl: string, options: RedisOptions = {}): Redis {
  const ioredis = loadOnDemand<typeof import('ioredis')>('ioredis')
  const client = new ioredis.Redis(redisUrl, { ...options, lazyConnect: true })
  // Each connection (a reconnection makes a new one), once connected: ioredis's handshake has gone out by then, unheld,
  // and the commands queued while it connected go out after it.
  client.on('connect', () => writeOncePerTurn(client.stream as Socket))
  return client
}

/**
 * Holds what is written to the socket in one turn of the event loop and writes it at the turn's end, in one system
 * call. The requests read in one turn each send their rate limit's command as they are handled, each in a callback of
 * its own, and ioredis writes each command at once: ten requests were ten writes, and Redis read them one by one.
 * Held to the end of the turn, they are one write, and one read for Redis; each command is still its own (ioredis
 * matches each reply to it, and its timeout runs from when ioredis was given it, the hold included). Measured with
 * Redis on the same two cores: 16 against 10 µs of the client's processor time a command, and 14 against 9 µs of
 * Redis's (docs/performance.md, "eighth session"). ioredis's own enableAutoPipelining cost more than it saved, and made
 * a command wait for the one before to be answered (the same page).
 */
function writeOncePerTurn(socket: Socket): void {
  let held = false
  const release = () => {
    held = false
    socket.uncork()
  }
  const write = socket.write
  socket.write = function (this: Socket, ...args: Parameters<Socket['write']>): boolean {
    if (!held) {
      held = true
      socket.cork()
      // After the I/O callbacks of this turn: a write made while the turn reads its sockets waits for none of them.
      setImmediate(release)
    }
    return write.apply(this, args)
  } as Socket['write']
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

/** How long closing waits for the commands under way before it drops the connection. */
export const CLOSE_WAIT_MS = 2000

/**
 * Closes after the commands under way, or drops the connection after CLOSE_WAIT_MS: a Redis that took the connection
 * and stopped answering had held a stopping instance for as long as it stayed so. A client that never connected is
 * just dropped.
 */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status === 'wait' || client.status === 'end') {
    client.disconnect()
    return
  }
  let timer: NodeJS.Timeout | undefined
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, CLOSE_WAIT_MS)
  })
  await Promise.race([client.quit().then(() => {}), waited]).catch(() => {})
  clearTimeout(timer)
  // After a QUIT answered, the connection is closing already, and this does nothing more.
  client.disconnect()
}
