// The fan-out of payload changes to live streams: in this process alone, or through Redis pub/sub so that a stream
// on any instance sees a change made on any other.
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { closeRedis, lazyRedis } from '../../../platform/redis.js'
import type { PayloadView } from '../schemas.js'

/**
 * Called with each published change of the payload, or with null when changes may have been missed (the Redis
 * subscription was lost and is back): the listener reads the current state itself.
 */
export type LiveListener = (change: PayloadView | null) => void

export interface LiveEvents {
  /** Listens for changes of one payload; returns the function that stops listening. */
  subscribe(uuid: string, listener: LiveListener): () => void
  /** Sends a committed change to every subscriber of its payload, on every instance. */
  publish(view: PayloadView): Promise<void>
  /**
   * Tells every subscriber of the payload, on every instance, to read it again: for a committed change that no
   * published view shows (a submission in doubt, or no longer: the signing page's view shows it). A read, unlike a
   * view sent from a moment before it, cannot arrive after a later change and show an older state.
   */
  remind(uuid: string): Promise<void>
  close(): Promise<void>
}

/** Every instance's subscriber listens on this one channel and keeps the messages of payloads it has streams for. */
export const LIVE_EVENTS_CHANNEL = 'countersign:payload-changes'

/** The payloads whose change could not be published that an instance remembers, to remind the others of them later. */
const MAX_UNSENT = 10_000

/** On the channel beside the views: the uuid whose subscribers read the payload again (an instance before it ignores it). */
interface Reminder {
  remind: string
}

class Subscribers {
  private readonly byUuid = new Map<string, Set<LiveListener>>()

  add(uuid: string, listener: LiveListener): () => void {
    let listeners = this.byUuid.get(uuid)
    if (!listeners) {
      listeners = new Set()
      this.byUuid.set(uuid, listeners)
    }
    listeners.add(listener)
    return () => {
      listeners.delete(listener)
      if (listeners.size === 0 && this.byUuid.get(uuid) === listeners) this.byUuid.delete(uuid)
    }
  }

  deliver(uuid: string, change: PayloadView | null): void {
    for (const listener of this.byUuid.get(uuid) ?? []) listener(change)
  }

  deliverToAll(change: null): void {
    for (const uuid of this.byUuid.keys()) this.deliver(uuid, change)
  }
}

/** One process: the embedded default. */
export class LocalLiveEvents implements LiveEvents {
  private readonly subscribers = new Subscribers()

  subscribe(uuid: string, listener: LiveListener): () => void {
    return this.subscribers.add(uuid, listener)
  }

  publish(view: PayloadView): Promise<void> {
    this.subscribers.deliver(view.uuid, view)
    return Promise.resolve()
  }

  remind(uuid: string): Promise<void> {
    this.subscribers.deliver(uuid, null)
    return Promise.resolve()
  }

  close(): Promise<void> {
    return Promise.resolve()
  }
}

/**
 * Many instances: a change is published to Redis and comes back to every instance's subscriber connection, this one
 * included, which delivers it locally. Redis pub/sub keeps nothing for a subscriber that is away, so each time the
 * subscription is (re-)established every local listener is told to read the current state: a stream opened before the
 * first subscription, or one whose change went by during a lost connection, catches up then.
 */
export class RedisLiveEvents implements LiveEvents {
  private readonly subscribers = new Subscribers()
  private readonly publisher: Redis
  private readonly subscriber: Redis
  /** Payloads whose change or reminder could not be published: the other instances are reminded of them once it can. */
  private readonly unsent = new Set<string>()
  constructor(redisUrl: string, logger: Logger) {
    this.publisher = lazyRedis(redisUrl, { maxRetriesPerRequest: 1 })
    // Subscribed by hand on each 'ready', so that listeners learn when a lost subscription is back.
    this.subscriber = lazyRedis(redisUrl, { autoResubscribe: false })
    for (const connection of [this.publisher, this.subscriber]) {
      connection.on('error', (error) => logger.warn({ err: error }, 'Redis connection for live events failed; retrying'))
    }
    // Back after a failed publish: only this instance may have lost Redis, and the others' subscriptions, never lost,
    // would tell their streams nothing; those streams had shown the state before the change until the payload's expiry
    // (a signAndSubmit payload's stream awaiting its outcome, for good).
    this.publisher.on('ready', () => {
      const unsent = [...this.unsent]
      this.unsent.clear()
      for (const uuid of unsent) this.remind(uuid).catch(() => {})
    })
    this.subscriber.on('ready', () => {
      this.subscriber.subscribe(LIVE_EVENTS_CHANNEL).then(
        () => this.subscribers.deliverToAll(null),
        (error: unknown) => logger.warn({ err: error }, 'could not subscribe to live events; retrying on the next connection'),
      )
    })
    this.subscriber.on('message', (_channel: string, message: string) => {
      let event: PayloadView | Reminder
      try {
        event = JSON.parse(message) as PayloadView | Reminder
      } catch {
        logger.warn('ignored a live event that is not JSON')
        return
      }
      if ('remind' in event) this.subscribers.deliver(event.remind, null)
      else this.subscribers.deliver(event.uuid, event)
    })
  }

  subscribe(uuid: string, listener: LiveListener): () => void {
    // The subscriber connects when the first stream opens; its subscription then tells every listener to read.
    if (this.subscriber.status === 'wait') this.subscriber.connect().catch(() => {})
    return this.subscribers.add(uuid, listener)
  }

  async publish(view: PayloadView): Promise<void> {
    await this.sent(view.uuid, JSON.stringify(view))
  }

  async remind(uuid: string): Promise<void> {
    const reminder: Reminder = { remind: uuid }
    await this.sent(uuid, JSON.stringify(reminder))
  }

  /**
   * Publishes, or, when Redis cannot take it, tells this instance's subscribers of the payload to read it again: its
   * own message would never come back to them, and until the subscription was lost and back (Redis away for an hour:
   * an hour) they had shown the state before the change. A read, not the view: a view held back until the publish
   * failed could arrive after a later change and show an older state. Other instances read when their subscription
   * is back.
   */
  private async sent(uuid: string, message: string): Promise<void> {
    try {
      await this.publisher.publish(LIVE_EVENTS_CHANNEL, message)
    } catch (error) {
      this.subscribers.deliver(uuid, null)
      if (this.unsent.size < MAX_UNSENT) this.unsent.add(uuid)
      throw error
    }
  }

  async close(): Promise<void> {
    await Promise.all([closeRedis(this.publisher), closeRedis(this.subscriber)])
  }
}

export function createLiveEvents(redisUrl: string | undefined, logger: Logger): LiveEvents {
  return redisUrl === undefined ? new LocalLiveEvents() : new RedisLiveEvents(redisUrl, logger)
}
