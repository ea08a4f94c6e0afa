// Group commit: what arrives while earlier groups are being written (or in the same turn of the event loop) is written
// together, in one transaction of the caller's (payloads/creations.ts, payloads/transitions.ts). Under load a commit and
// its round trips are shared by a group; with nothing waiting, a group is one item, written at once. A group that fails
// is written again one item at a time, so that one item's refusal fails that item only; a deadlock's victim is first
// written again as it was (up to three attempts in all); when the database is away or at one of its limits
// (unavailable.ts), every item of the group fails.
// Reads by key are grouped the same way (payloads/reads.ts): a group is then one statement, in no transaction, and a
// group that fails fails as a whole (splitFailedGroups: no item of a read can fail on its own). An item that waits
// longer than maxWaitMs for its group to start (the groups before it hang on a database that stopped answering) fails
// as unavailable (503), never written, as a request waiting that long for a pooled connection does.
import { errorCode, isUnavailableError } from './unavailable.js'

export interface CommitGroupsOptions<T, Written> {
  /** Groups written at once: 1 on SQLite (one connection), a few on PostgreSQL (each holds a pooled connection). */
  maxInFlight: number
  /** A longer wait is split into groups of this size. */
  maxGroup: number
  /** Writes a group, in one transaction: all of it or, by throwing, nothing (or reads it, in one statement). */
  write(group: T[]): Promise<Written>
  /** Answers the items of a group once it is written (after its commit); must not throw. */
  settle(group: T[], written: Written): Promise<void> | void
  /** Answers an item that could not be written. */
  fail(item: T, error: unknown): void
  /** Whether a failed group is written again one item at a time, so that one item's refusal fails that item only (true). */
  splitFailedGroups?: boolean
  /** How long an item may wait for its group to start before it fails as unavailable; no limit when not given. */
  maxWaitMs?: number
}

/** A group that PostgreSQL chose as a deadlock's victim is written again, a few times. */
const DEADLOCK_RETRIES = 3

export class CommitGroups<T, Written> {
  private waiting: T[] = []
  /** When each waiting item was added (performance.now()), kept only with maxWaitMs. */
  private waitingSince: number[] = []
  private writing = 0
  private scheduled = false
  private sweeper: NodeJS.Timeout | undefined

  constructor(private readonly options: CommitGroupsOptions<T, Written>) {}

  add(item: T): void {
    this.waiting.push(item)
    if (this.options.maxWaitMs !== undefined) {
      this.waitingSince.push(performance.now())
      this.sweeper ??= setInterval(() => this.failOverdue(), this.options.maxWaitMs / 4).unref()
    }
    this.schedule()
  }

  /** Fails the items that have waited longer than maxWaitMs (the oldest are first); stops looking once none waits. */
  private failOverdue(): void {
    const maxWaitMs = this.options.maxWaitMs ?? Number.POSITIVE_INFINITY
    const now = performance.now()
    let overdue = 0
    while (overdue < this.waiting.length && now - (this.waitingSince[overdue] ?? now) > maxWaitMs) overdue++
    const failed = this.waiting.splice(0, overdue)
    this.waitingSince.splice(0, overdue)
    for (const item of failed) this.options.fail(item, notStartedWithin(maxWaitMs))
    if (this.waiting.length === 0) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
    }
  }

  private schedule(): void {
    if (this.scheduled || this.writing >= this.options.maxInFlight || this.waiting.length === 0) return
    this.scheduled = true
    // The rest of this turn's items join the group.
    setImmediate(() => {
      this.scheduled = false
      while (this.writing < this.options.maxInFlight && this.waiting.length > 0) {
        const group = this.waiting.splice(0, this.options.maxGroup)
        this.waitingSince.splice(0, group.length)
        this.writing++
        // settle must not throw; should it, its items are answered already or never will be, and the process goes on.
        void this.write(group)
          .catch(() => {})
          .finally(() => {
            this.writing--
            this.schedule()
          })
      }
    })
  }

  private async write(group: T[], attempt = 1): Promise<void> {
    let written: Written
    try {
      written = await this.options.write(group)
    } catch (error) {
      if (errorCode(error) === DEADLOCK_DETECTED && attempt < DEADLOCK_RETRIES) return this.write(group, attempt + 1)
      if (group.length > 1 && this.options.splitFailedGroups !== false && !isUnavailableError(error)) {
        for (const item of group) await this.write([item])
        return
      }
      for (const item of group) this.options.fail(item, error)
      return
    }
    await this.options.settle(group, written)
  }
}

/** What an item that waited too long fails with: a timeout, which the API answers 503 (unavailable.ts). */
function notStartedWithin(maxWaitMs: number): Error {
  return Object.assign(new Error(`The database did not take the request within ${maxWaitMs} ms`), { code: 'ETIMEDOUT' })
}

/** PostgreSQL's error for a transaction chosen as a deadlock's victim: written again, it goes through. */
const DEADLOCK_DETECTED = '40P01'
