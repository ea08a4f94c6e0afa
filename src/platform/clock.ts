// Time is injected so that expiry, rate limits and retry schedules are tested without sleeping.
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock that moves only when told; for tests. */
export class ManualClock implements Clock {
  constructor(private currentMs: number = Date.UTC(2026, 0, 15, 12, 0, 0)) {}
  now(): number {
    return this.currentMs
  }
  advance(ms: number): void {
    this.currentMs += ms
  }
  set(ms: number): void {
    this.currentMs = ms
  }
}
