// Read groups: on PostgreSQL, the reads of payloads by uuid that arrive in the same turn of the event loop (or while
// the groups before them are being read) are read together, in one statement. The requests that an instance reads in
// one turn each read their payload as they are handled; one at a time, each was a statement of its own: a round trip,
// a connection of the pool, and PostgreSQL's work to run a statement, for one row. A group shares them. Its statement
// starts after each of its requests arrived, so it sees every change committed before them, as a read of its own
// would. A group fails as a whole (a read cannot fail for one uuid alone), and a read that waits for its group longer
// than a request would wait for a pooled connection fails as unavailable (503). SQLite reads on the service's one
// connection, with no round trip to share: there each read is its own.
// Measured: docs/performance.md, "eighth session".
import { CommitGroups } from '../../platform/db/commit-groups.js'
import { type Db, type Dialect, groupWaitLimitMs } from '../../platform/db/database.js'
import type { Payload } from './model.js'
import { payloadsRepository } from './repository.js'

interface WaitingRead {
  uuid: string
  resolve(payload: Payload | undefined): void
  reject(error: unknown): void
}

/** Groups read at once on PostgreSQL (each holds a pooled connection for its statement). */
const POSTGRES_GROUPS_IN_FLIGHT = 3
/** A longer wait is split into groups of this many reads. */
const MAX_GROUP = 100

export class PayloadReads {
  private readonly groups: CommitGroups<WaitingRead, Map<string, Payload>> | undefined

  constructor(
    private readonly db: Db,
    dialect: Dialect,
  ) {
    this.groups =
      dialect === 'postgres'
        ? new CommitGroups<WaitingRead, Map<string, Payload>>({
            maxInFlight: POSTGRES_GROUPS_IN_FLIGHT,
            maxGroup: MAX_GROUP,
            // One statement, outside any transaction: a group is read, not written.
            write: (group) => this.readGroup(group),
            settle: (group, read) => {
              // Each reader gets a payload of its own, should two have read the same one.
              const given = new Set<string>()
              for (const { uuid, resolve } of group) {
                resolve(given.has(uuid) ? structuredClone(read.get(uuid)) : read.get(uuid))
                given.add(uuid)
              }
            },
            fail: (waiting, error) => waiting.reject(error),
            splitFailedGroups: false,
            maxWaitMs: groupWaitLimitMs(dialect),
          })
        : undefined
  }

  /** The payload of this uuid as it is now (committed), or undefined. */
  read(uuid: string): Promise<Payload | undefined> {
    const groups = this.groups
    if (!groups) return payloadsRepository.findByUuid(this.db, uuid)
    return new Promise((resolve, reject) => groups.add({ uuid, resolve, reject }))
  }

  private async readGroup(group: WaitingRead[]): Promise<Map<string, Payload>> {
    const payloads = await payloadsRepository.findManyByUuid(this.db, [...new Set(group.map((waiting) => waiting.uuid))])
    return new Map(payloads.map((payload) => [payload.uuid, payload]))
  }
}
