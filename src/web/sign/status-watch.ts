// Learns of status changes without a reload: the live event stream when the browser and server offer it, else polling;
// and, once the request is answered, the rest of its outcome.
import { fetchSignRequest, parseSignRequest, type SignRequest } from './api.js'

export interface Watcher {
  stop(): void
}

/**
 * Calls `onUpdate` with each state of the request it learns, and when it asked for it (performance.now(): a poll's
 * start, an event's arrival), so that the page can tell an answer older than what it learnt itself.
 */
export function watchSignRequest(
  uuid: string,
  onUpdate: (request: SignRequest, askedAtMs: number) => void,
  pollIntervalMs: number,
): Watcher {
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let source: EventSource | undefined

  const poll = async () => {
    try {
      const askedAtMs = performance.now()
      const { request } = await fetchSignRequest(uuid)
      if (!stopped) onUpdate(request, askedAtMs)
    } catch {
      // A dropped connection or a rate limit: the next poll tries again; the page keeps its last known state.
    }
    if (!stopped) timer = setTimeout(poll, pollIntervalMs)
  }

  if (typeof EventSource === 'function') {
    source = new EventSource(`/api/v1/sign/${encodeURIComponent(uuid)}/events`)
    source.onmessage = (event: MessageEvent<string>) => {
      try {
        onUpdate(parseSignRequest(JSON.parse(event.data)), performance.now())
      } catch {
        // An event the page cannot read changes nothing; the next one, or the fallback, will.
      }
    }
    // EventSource would retry on its own; polling is the simpler, known-good path once the stream has failed once.
    source.onerror = () => {
      source?.close()
      source = undefined
      if (!stopped && timer === undefined) timer = setTimeout(poll, 0)
    }
  } else {
    timer = setTimeout(poll, pollIntervalMs)
  }

  return {
    stop() {
      stopped = true
      source?.close()
      clearTimeout(timer)
    },
  }
}

/**
 * After the request left pending: fetches it again for what only the outcome holds (the account and fee the wallet
 * set, the explorer link) and, for signAndSubmit, until the ledger has validated the transaction, every
 * `pollIntervalMs` for at most `waitMs`. A failed fetch is tried again at the next round.
 */
export async function followOutcome(
  uuid: string,
  onOutcome: (request: SignRequest) => void,
  pollIntervalMs: number,
  waitMs: number,
): Promise<void> {
  const startedMs = Date.now()
  for (;;) {
    try {
      const { request } = await fetchSignRequest(uuid)
      if (request.status === 'pending') return
      onOutcome(request)
      if (request.type !== 'signAndSubmit' || request.status !== 'signed' || request.submission?.validatedResult != null) return
    } catch {
      // The next round tries again.
    }
    if (Date.now() - startedMs > waitMs) return
    await new Promise((resolve) => setTimeout(resolve, pollIntervalMs))
  }
}
