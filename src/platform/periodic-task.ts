// Runs a task every interval, never two runs at once, and can be woken early (an event arrived) and stopped cleanly.
import type { Logger } from 'pino'
import { isLimitError, isUnavailableError } from './db/unavailable.js'

export interface PeriodicTask {
  /** Runs the task as soon as the current run (if any) ends. */
  wake(): void
  /** Stops scheduling and waits for a run in progress to finish. */
  stop(): Promise<void>
}

/**
 * `run` returns true when it has more work right away (a full batch), so the next run follows at once.
 */
export function startPeriodicTask(name: string, intervalMs: number, run: () => Promise<boolean>, logger: Logger): PeriodicTask {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let wakeRequested = false
  let stopped = false

  const schedule = (delayMs: number) => {
    if (stopped) return
    clearTimeout(timer)
    timer = setTimeout(tick, delayMs)
    timer.unref()
  }

  const tick = () => {
    if (running) {
      wakeRequested = true
      return
    }
    wakeRequested = false
    running = run()
      .catch((error: unknown) => {
        // A database at one of its limits (a full disk) may stay there until an operator acts: an error, as for requests.
        if (isLimitError(error)) logger.error({ err: error, task: name }, 'background task failed: the database is at one of its limits')
        else logger.warn({ err: error, task: name }, 'background task failed; it will run again')
        return false
      })
      .then((more) => {
        running = undefined
        schedule(more || wakeRequested ? 0 : intervalMs)
      })
  }

  schedule(0)
  return {
    wake() {
      if (running) wakeRequested = true
      else schedule(0)
    },
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}

/**
 * Looks at each item of a claimed batch, `together` at a time (one by default: in turn). One item's own failure is
 * logged with `describe(item)`, and the batch goes on: that item's lease lapses and a later run looks at it again, and
 * the items after it are not held up behind it. A database away or at one of its limits ends the batch: no further
 * look begins, the looks under way are waited for (the run is over only when none is left, so that runs never overlap
 * and a stop closes nothing under a look), and the run then fails with that error, logged once by the task.
 */
export async function lookAtEach<T>(
  items: readonly T[],
  look: (item: T) => Promise<void>,
  logger: Logger,
  describe: (item: T) => Record<string, unknown>,
  together = 1,
): Promise<void> {
  let next = 0
  let unavailable: { error: unknown } | undefined
  const lookInTurn = async () => {
    while (unavailable === undefined && next < items.length) {
      const item = items[next++] as T
      try {
        await look(item)
      } catch (error) {
        if (isUnavailableError(error)) unavailable ??= { error }
        else {
          logger.error(
            { ...describe(item), err: error },
            'a look at one claimed item failed; the others go on, and its lease lets a later run retry it',
          )
        }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(together, items.length)) }, lookInTurn))
  if (unavailable !== undefined) throw unavailable.error
}
