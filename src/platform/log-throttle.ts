// One line a minute for a condition that anyone can repeat at will (every approval while the XRPL node is away or not
// configured), so that a visitor's loop of requests cannot fill the operator's log; the next line says how many it
// left out.
import type { Logger } from 'pino'

/** How long a condition's line stands for its repeats. */
export const THROTTLE_WINDOW_MS = 60_000

interface Window {
  startedMs: number
  leftOut: number
}

/** Per logger, per condition: when its last line was written, and how many repeats have been left out since. */
const windows = new WeakMap<object, Map<string, Window>>()

/**
 * Logs `message` at `level` unless the same condition (`key`) was logged through this logger within the last minute;
 * the first line after a quiet minute carries `leftOut`, the count of lines left out since the last. Keys are a few
 * fixed conditions, never a value from a request, so their memory is bounded. What a repeat within the minute would
 * have said otherwise (another error's message) is not written, and the count of the last burst only with the
 * condition's next line. Returns whether it logged.
 */
export function logThrottled(
  logger: Pick<Logger, 'warn' | 'error'>,
  level: 'warn' | 'error',
  key: string,
  fields: Record<string, unknown>,
  message: string,
  nowMs = Date.now(),
): boolean {
  let byKey = windows.get(logger)
  if (byKey === undefined) {
    byKey = new Map()
    windows.set(logger, byKey)
  }
  const window = byKey.get(key)
  if (window !== undefined && nowMs - window.startedMs < THROTTLE_WINDOW_MS) {
    window.leftOut++
    return false
  }
  const leftOut = window?.leftOut ?? 0
  byKey.set(key, { startedMs: nowMs, leftOut: 0 })
  logger[level](leftOut > 0 ? { ...fields, leftOut } : fields, message)
  return true
}
