// Server-Sent Events for a payload's status: the current state first, then each change, until the payload resolves
// (and, for an application's signAndSubmit payload, until its transaction's outcome is final).
import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Logger } from 'pino'
import type { Clock } from '../../../platform/clock.js'
import { tooManyRequests } from '../../../platform/errors.js'
import type { PayloadStatus } from '../model.js'
import type { PayloadView } from '../schemas.js'
import type { LiveEvents } from './live-events.js'
import type { StreamSlot, StreamSlots } from './stream-slots.js'

/** What a stream sends, with what it needs to know of it: whether the payload is still pending, and until when. */
export interface StreamState {
  data: unknown
  status: PayloadStatus
  expiresAtMs: number
  /** Resolved, but a change is still to come (a submitted transaction's final outcome): the stream stays open. */
  awaitingOutcome?: boolean
}

/** One cap a stream counts against: at most `limit` open at once under `key` (a project, a payload). */
export interface SlotClaim {
  key: string
  limit: number
  /** The 429 message when every slot is taken. */
  overLimitMessage: string
}

export interface StreamSpec {
  uuid: string
  /** The caps the stream counts against; it opens only with a slot under each. */
  slots: readonly SlotClaim[]
  /** The current state, from the database; throws (404) when there is no such payload, before the stream opens. */
  read(): Promise<StreamState>
  /** The state to send for a published change; without it, every change is read again. */
  fromChange?(view: PayloadView): StreamState
}

export interface LiveStreamsOptions {
  events: LiveEvents
  slots: StreamSlots
  clock: Clock
  heartbeatMs: number
  logger: Logger
}

/** A stream whose slots are all taken is told to come back after about this long. */
const OVER_LIMIT_RETRY_SECONDS = 15
/** When the clock says a pending payload's time is up but the database does not yet, look again after this long. */
const EXPIRY_RECHECK_MS = 1000
/** setTimeout's longest delay; a longer wait is taken in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1

export class LiveStreams {
  private readonly open = new Set<() => void>()

  constructor(private readonly options: LiveStreamsOptions) {}

  /**
   * Opens a stream on a request that has passed authentication and rate limiting. Errors before the first byte (no such
   * payload, too many streams) are thrown as usual; afterwards the response belongs to the stream.
   */
  async serve(reply: FastifyReply, spec: StreamSpec): Promise<FastifyReply> {
    const { events, slots, clock, heartbeatMs, logger } = this.options
    if (reply.request.method === 'HEAD') {
      // Fastify answers HEAD with the GET's handler: the stream's headers after the same checks (an unknown payload is
      // 404), and no stream, which would hold the connection and a slot with nothing to send until the payload ends.
      await spec.read()
      return reply.code(200).header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-store').send()
    }
    const slot = await acquireAll(slots, spec.slots)

    let closed = false
    let lastSent: string | undefined
    // Changes wait behind this until the response has begun with the current state.
    let begin: () => void = () => {}
    let work = new Promise<void>((resolve) => {
      begin = resolve
    })
    let expiryTimer: ReturnType<typeof setTimeout> | undefined
    let heartbeat: ReturnType<typeof setInterval> | undefined

    const finish = () => {
      if (closed) return
      closed = true
      clearTimeout(expiryTimer)
      clearInterval(heartbeat)
      unsubscribe()
      slot.release()
      this.open.delete(finish)
      if (!reply.raw.writableEnded) reply.raw.end()
    }

    const scheduleExpiryCheck = (expiresAtMs: number) => {
      clearTimeout(expiryTimer)
      const untilExpiryMs = expiresAtMs - clock.now()
      const delayMs = untilExpiryMs > 0 ? Math.min(untilExpiryMs, MAX_TIMER_MS) : EXPIRY_RECHECK_MS
      expiryTimer = setTimeout(() => onChange(null), delayMs)
    }

    const send = (state: StreamState) => {
      if (closed) return
      const json = JSON.stringify(state.data)
      if (json !== lastSent) {
        lastSent = json
        reply.raw.write(`data: ${json}\n\n`)
      }
      if (state.status === 'pending') scheduleExpiryCheck(state.expiresAtMs)
      else if (state.awaitingOutcome) clearTimeout(expiryTimer)
      else finish()
    }

    // Changes are applied one at a time, in order of arrival, so that a slow read never overtakes a later change.
    const onChange = (change: PayloadView | null) => {
      work = work.then(async () => {
        if (closed) return
        try {
          send(change !== null && spec.fromChange ? spec.fromChange(change) : await spec.read())
        } catch (error) {
          // The database is away for a moment: the stream stays open, and the next change or check reads again.
          logger.warn({ err: error, uuid: spec.uuid }, 'could not read a payload for its live stream')
          if (!closed) {
            clearTimeout(expiryTimer)
            expiryTimer = setTimeout(() => onChange(null), EXPIRY_RECHECK_MS)
          }
        }
      })
    }

    // Subscribed before the first read: a change committed in between is then either in that read or delivered after it.
    const unsubscribe = events.subscribe(spec.uuid, onChange)
    let initial: StreamState
    try {
      initial = await spec.read()
    } catch (error) {
      closed = true
      unsubscribe()
      slot.release()
      throw error
    }

    reply.hijack()
    reply.raw.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      // nginx and similar proxies hold back a buffered response; an event must reach the client when it happens.
      'x-accel-buffering': 'no',
    })
    this.open.add(finish)
    reply.raw.on('close', finish)
    heartbeat = setInterval(() => {
      // A comment line: EventSource ignores it, and proxies see traffic on an otherwise quiet connection.
      reply.raw.write(': heartbeat\n\n')
      slot.renew()
    }, heartbeatMs)
    // The client may have gone while the first read was under way, before there was a listener to tell.
    if (reply.raw.destroyed || reply.raw.socket?.destroyed) finish()
    send(initial)
    begin()
    return reply
  }

  /** Ends every open stream; the server's close would otherwise wait for them. */
  closeAll(): void {
    for (const finish of [...this.open]) finish()
  }
}

/** The live streams of an app, ended when it closes. */
export function liveStreamsFor(app: FastifyInstance, options: LiveStreamsOptions): LiveStreams {
  const streams = new LiveStreams(options)
  app.addHook('preClose', async () => streams.closeAll())
  return streams
}

/** A slot under each claim, taken in order, as one slot; or a 429 for the first cap reached, the others given back. */
async function acquireAll(slots: StreamSlots, claims: readonly SlotClaim[]): Promise<StreamSlot> {
  const held: StreamSlot[] = []
  for (const claim of claims) {
    const slot = await slots.acquire(claim.key, claim.limit)
    if (slot === undefined) {
      for (const taken of held) taken.release()
      throw tooManyRequests(claim.overLimitMessage, OVER_LIMIT_RETRY_SECONDS)
    }
    held.push(slot)
  }
  return {
    renew: () => {
      for (const taken of held) taken.renew()
    },
    release: () => {
      for (const taken of held) taken.release()
    },
  }
}
