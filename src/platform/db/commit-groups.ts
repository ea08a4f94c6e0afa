// Group commit: what arrives while earlier groups are being written (or in the same turn of the event loop) is written
// together, in one transaction of the caller's (payloads/creations.ts, payloads/transitions.ts). Under load a commit and
// its round trips are shared by a group; with nothing waiting, a group is one item, written at once. A group that fails
// is written again one item at a time, so that one item's refusal fails that item only; a deadlock's victim is first
// written again as it was (up to three attempts in all); when the database is away, every item of the group fails.
// Reads by key are grouped the same way (payloads/reads.ts): a group is then one statement, in no transaction.
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
}

/** A group that PostgreSQL chose as a deadlock's victim is written again, a few times. */
const DEADLOCK_RETRIES = 3

export class CommitGroups<T, Written> {
  private waiting: T[] = []
  private writing = 0
  private scheduled = false

  constructor(private readonly options: CommitGroupsOptions<T, Written>) {}

  add(item: T): void {
    this.waiting.push(item)
    this.schedule()
  }

  private schedule(): void {
    if (this.scheduled || this.writing >= this.options.maxInFlight || this.waiting.length === 0) return
    this.scheduled = true
    // The rest of this turn's items join the group.
    setImmediate(() => {
      this.scheduled = false
      while (this.writing < this.options.maxInFlight && this.waiting.length > 0) {
        const group = this.waiting.splice(0, this.options.maxGroup)
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
      if (group.length > 1 && !isUnavailableError(error)) {
        for (const item of group) await this.write([item])
        return
      }
      for (const item of group) this.options.fail(item, error)
      return
    }
    await this.options.settle(group, written)
  }
}

/** PostgreSQL's error for a transaction chosen as a deadlock's victim: written again, it goes through. */
const DEADLOCK_DETECTED = '40P01'
