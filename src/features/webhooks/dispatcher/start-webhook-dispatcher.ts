// The webhook dispatcher as a background worker of each instance: when it runs, and how it stops.
import { wakeOnEvents } from '../../../events.js'
import { type PeriodicTask, startPeriodicTask } from '../../../platform/periodic-task.js'
import { type DispatcherContext, WebhookDispatcher, type WebhookDispatcherOptions } from './webhook-dispatcher.js'

const POLL_INTERVAL_MS = 1_000

/**
 * How long a woken dispatcher waits for more events before it claims. Under load events commit every millisecond or
 * so; one claim for the few that arrive together costs little more than one for a single delivery, and each claim is
 * a write. The wait adds at most this much to a delivery's time.
 */
const CLAIM_COALESCE_MS = 3

/**
 * The dispatcher as a background worker: it runs when an event commits (so a delivery leaves at once, not at the next
 * tick), when a send frees a slot, and every second for retries that came due and work queued by other instances.
 */
export function startWebhookDispatcher(
  ctx: DispatcherContext,
  options: WebhookDispatcherOptions & { pollIntervalMs?: number } = {},
): PeriodicTask {
  let coalescing: NodeJS.Timeout | undefined
  const wake = () => {
    if (coalescing) return
    coalescing = setTimeout(() => {
      coalescing = undefined
      task.wake()
    }, CLAIM_COALESCE_MS)
  }
  const dispatcher = new WebhookDispatcher(ctx, {
    ...options,
    onSendFinished: () => {
      options.onSendFinished?.()
      if (dispatcher.waitingForSlots) task.wake()
    },
  })
  const task = startPeriodicTask(
    'webhook-dispatcher',
    options.pollIntervalMs ?? POLL_INTERVAL_MS,
    () => dispatcher.dispatchDue(),
    ctx.logger,
  )
  const stopWaking = wakeOnEvents(ctx.events, 'webhook-dispatcher', wake)
  return {
    wake,
    async stop() {
      stopWaking()
      clearTimeout(coalescing)
      await task.stop()
      // Sends in flight end within their timeout; recording them now spares their receivers a repeat after the lease.
      await dispatcher.stop()
    },
  }
}
