// How a payload's change of state is recorded: one database transaction with what must happen alongside it (the proof
// that resolved it, the 'payload.changed' event and its outbox rows, the daily rollup), then the event again after the
// commit. Moves out of pending that arrive together are written together (group commit, platform/db/commit-groups.ts):
// one transaction, on PostgreSQL one statement for the moves and one for their webhook deliveries, one daily-count
// statement per kind of move, one commit; a group that fails is written again one move at a time, so that one move's
// refusal (a proof already used) fails that move only. Which changes are allowed, and when, is the service's
// (service.ts).
import type { ServiceEvents } from '../../events.js'
import type { Clock } from '../../platform/clock.js'
import { CommitGroups } from '../../platform/db/commit-groups.js'
import { type Db, type Dialect, groupWaitLimitMs, type Tx } from '../../platform/db/database.js'
import { conflict } from '../../platform/errors.js'
import { utcDay } from '../../platform/utc.js'
import { pickShard, usageRepository } from '../projects/usage-repository.js'
import type { MultisignState } from '../signing/multisign/model.js'
import { eventForStatus, type FinalOutcome, type Payload, type PayloadEvent, type ResolvedStatus } from './model.js'
import { payloadProofsRepository } from './proofs-repository.js'
import { payloadsRepository } from './repository.js'
import { payloadTransitionsRepository, type TransitionChanges, type TransitionCondition } from './transitions-repository.js'

export const PROOF_ALREADY_USED_MESSAGE =
  'This signature is already used by another request: a signature or signed transaction resolves one request only ' +
  '(the same words signed again by the same account give the same signature, so an application must make each message unique, with an order number or a nonce)'

/** The outcome of a transaction that can never be applied. */
export const DROPPED: FinalOutcome = { outcome: 'dropped', txHash: null, transactionResult: null, ledgerIndex: null, deliveredAmount: null }

export interface PayloadTransition {
  payload: Payload
  event: PayloadEvent
}

export interface PayloadTransitionsOptions {
  db: Db
  dialect: Dialect
  clock: Clock
  /** 'payload.changed' in the transaction of each state change and after its commit. */
  events: ServiceEvents
}

interface WaitingMove {
  uuid: string
  changes: TransitionChanges
  condition: TransitionCondition | undefined
  resolve(payload: Payload | undefined): void
  reject(error: unknown): void
}

/** Groups of moves written at once on PostgreSQL (each holds a pooled connection until its commit). */
const POSTGRES_GROUPS_IN_FLIGHT = 3
/** A longer wait is split into groups of this many moves. */
const MAX_GROUP = 100

export class PayloadTransitions {
  private readonly groups: CommitGroups<WaitingMove, (Payload | undefined)[]>

  constructor(private readonly options: PayloadTransitionsOptions) {
    this.groups = new CommitGroups<WaitingMove, (Payload | undefined)[]>({
      maxInFlight: options.dialect === 'sqlite' ? 1 : POSTGRES_GROUPS_IN_FLIGHT,
      maxGroup: MAX_GROUP,
      // One move's refusal (its proof already used) fails that move only.
      write: (group) => this.moveGroup(group),
      settle: (group, moved) => this.answer(group, moved),
      fail: (move, error) => move.reject(error),
      // Not started, so not written: a move after a submission is then recovered (signing/submission-recovery.ts).
      maxWaitMs: groupWaitLimitMs(options.dialect),
    })
  }

  /**
   * Moves a pending payload out of pending, if `condition` holds. Undefined when another transition got there first
   * or the condition does not hold. A signed resolution's proof is recorded in the same transaction: a proof that
   * already resolved another payload rolls the move back with a 409. Resolves after the commit.
   */
  transition(uuid: string, changes: TransitionChanges, condition?: TransitionCondition): Promise<Payload | undefined> {
    return new Promise((resolve, reject) => this.groups.add({ uuid, changes, condition, resolve, reject }))
  }

  /**
   * Writes a group's moves in one transaction: what each moved, in the group's order. The moves are written in rounds,
   * a payload at most once a round (the first round holds each payload's first move, in the group's order, and so on):
   * one statement a round on PostgreSQL, and almost always a single round. Within a round the payloads are moved in the
   * order of their uuids, so that groups written at once lock their rows in one order. Then, for what moved: the proofs
   * of signed resolutions (a proof that already resolved another payload rolls the group back with a 409, and the group
   * is written again one move at a time), the in-transaction event, and the daily counts.
   */
  private moveGroup(group: WaitingMove[]): Promise<(Payload | undefined)[]> {
    const order = group
      .map((_, i) => i)
      .sort((a, b) => (group[a]!.uuid < group[b]!.uuid ? -1 : group[a]!.uuid > group[b]!.uuid ? 1 : a - b))
    const rounds: number[][] = []
    let round = 0
    for (const [position, i] of order.entries()) {
      round = position > 0 && group[order[position - 1]!]!.uuid === group[i]!.uuid ? round + 1 : 0
      if (round === rounds.length) rounds.push([])
      rounds[round]!.push(i)
    }
    return this.options.db.transaction().execute(async (tx) => {
      const moved: (Payload | undefined)[] = new Array(group.length)
      for (const round of rounds) {
        const payloads = await payloadTransitionsRepository.transitionAll(
          tx,
          this.options.dialect,
          round.map((i) => group[i]!),
        )
        for (const [k, i] of round.entries()) moved[i] = payloads[k]
      }
      const made = order.filter((i) => moved[i] !== undefined)
      await this.recordProofs(
        tx,
        made.map((i) => group[i]!),
      )
      const transitions = made.map((i): PayloadTransition => {
        const payload = moved[i]!
        return { payload, event: eventForStatus(payload.status as ResolvedStatus) }
      })
      await this.options.events.emitInTransaction(tx, 'payload.changed', transitions)
      await this.countInTx(
        tx,
        transitions.map(({ payload }) => payload),
      )
      return moved
    })
  }

  /** After the group's commit: each caller is answered, then live streams and the dispatcher hear of each move. */
  private answer(group: WaitingMove[], moved: (Payload | undefined)[]): void {
    for (const [i, move] of group.entries()) move.resolve(moved[i])
    for (const payload of moved) if (payload) this.emit(payload)
  }

  /**
   * The proofs of the signed resolutions among `moves`, in the order of their keys, so that groups recording the same
   * proofs at once wait for each other rather than deadlock: a proof that already resolved another payload throws a 409.
   */
  private async recordProofs(tx: Tx, moves: readonly WaitingMove[]): Promise<void> {
    const proofs = moves.flatMap(({ uuid, changes }) => {
      const keys = new Set([changes.signed?.proofKey, changes.signed?.copyProofKey].filter((key) => key !== undefined))
      return [...keys].map((proofKey) => ({ proofKey, payloadUuid: uuid, nowMs: changes.resolvedAtMs }))
    })
    proofs.sort((a, b) => (a.proofKey < b.proofKey ? -1 : a.proofKey > b.proofKey ? 1 : 0))
    for (const proof of proofs) {
      // Rolls the transition back: the proof resolved another payload first (on this instance or another).
      if (!(await payloadProofsRepository.record(tx, proof))) throw conflict(PROOF_ALREADY_USED_MESSAGE)
    }
  }

  /**
   * The payload as it is now: expired first if it is pending past its expiry, unless a signed transaction of its may be
   * on the ledger (a submission in doubt): the payload stays pending until the ledger decides (signing.md, "A crash
   * between submission and answer"). One read as in doubt is not written to: the move would wait for the claim's release.
   */
  async expireIfDue(payload: Payload): Promise<Payload> {
    const nowMs = this.options.clock.now()
    if (payload.status !== 'pending' || payload.submissionInDoubt || payload.expiresAtMs > nowMs) return payload
    const moved = await this.transition(payload.uuid, { status: 'expired', resolvedAtMs: nowMs })
    return moved ?? (await payloadsRepository.findByUuid(this.options.db, payload.uuid)) ?? payload
  }

  /** The background sweeper's step: expires up to `batchSize` overdue payloads; returns how many. */
  async expireOverdue(batchSize: number): Promise<number> {
    const nowMs = this.options.clock.now()
    const expired = await this.options.db.transaction().execute(async (tx) => {
      const moved = await payloadTransitionsRepository.expireOverdue(tx, this.options.dialect, nowMs, batchSize)
      await this.options.events.emitInTransaction(
        tx,
        'payload.changed',
        moved.map((payload) => ({ payload, event: 'payload.expired' as const })),
      )
      await this.countInTx(tx, moved)
      return moved
    })
    for (const payload of expired) this.emit(payload)
    return expired.length
  }

  /**
   * One compare-and-set of what a pending multisigned request has collected: `next` replaces `expected` unless another
   * change got there first or the request expired at `nowMs` (undefined then). `event`, when given, is emitted in the
   * transaction; after the commit, 'payload.changed' is emitted either way.
   */
  async replaceMultisign(
    uuid: string,
    change: { expected: MultisignState; next: MultisignState; nowMs: number },
    event?: 'payload.signature_added',
  ): Promise<Payload | undefined> {
    const { expected, next, nowMs } = change
    const changed = await this.options.db.transaction().execute(async (tx) => {
      const updated = await payloadTransitionsRepository.replaceMultisign(tx, uuid, { expected, next, notExpiredAtMs: nowMs })
      if (updated && event) await this.options.events.emitInTransaction(tx, 'payload.changed', [{ payload: updated, event }])
      return updated
    })
    if (changed) this.options.events.emitCommitted('payload.changed', { payload: changed, event: event ?? 'payload.signature_added' })
    return changed
  }

  /**
   * Records a signAndSubmit transaction's final outcome with its payload.finalized event, in `tx` (which also
   * settles the follow). Returns the payload, or undefined when an outcome was already recorded.
   */
  async recordOutcome(tx: Tx, uuid: string, final: FinalOutcome): Promise<Payload | undefined> {
    const { copyProofKey } = final
    // Once: a payload with an outcome takes no copy's proof either.
    if (copyProofKey !== undefined && (await payloadsRepository.findByUuid(tx, uuid))?.outcome !== null) return undefined
    const held =
      copyProofKey === undefined ||
      (await payloadProofsRepository.holdFor(tx, { proofKey: copyProofKey, payloadUuid: uuid, nowMs: this.options.clock.now() }))
    const recorded = held ? final : DROPPED
    const payload = await payloadTransitionsRepository.recordOutcome(tx, uuid, recorded)
    if (payload) await this.options.events.emitInTransaction(tx, 'payload.changed', [{ payload, event: 'payload.finalized' }])
    return payload
  }

  /** After the commit of recordOutcome: live streams and the webhook dispatcher hear of it. */
  announceOutcome(payload: Payload): void {
    this.options.events.emitCommitted('payload.changed', { payload, event: 'payload.finalized' })
  }

  /**
   * The daily counts of `moved`, one statement per project, day, status and wallet, in one order of those keys so that
   * transactions counting at once lock their counter rows in the same order. Last, so that the shared counter rows are
   * held for the commit's round trip only (usage-repository.ts).
   */
  private async countInTx(tx: Tx, moved: readonly Payload[]): Promise<void> {
    const counts = new Map<string, { key: { projectId: string; day: string; status: string; walletAdapter: string }; count: number }>()
    for (const payload of moved) {
      const key = {
        projectId: payload.projectId,
        day: utcDay(payload.createdAtMs),
        status: payload.status,
        walletAdapter: payload.walletAdapter ?? '',
      }
      const name = [key.projectId, key.day, key.status, key.walletAdapter].join('\u0000')
      const entry = counts.get(name) ?? { key, count: 0 }
      entry.count++
      counts.set(name, entry)
    }
    const shard = pickShard(this.options.dialect)
    for (const name of [...counts.keys()].sort()) {
      const { key, count } = counts.get(name)!
      await usageRepository.moveFromPending(tx, key, count, shard)
    }
  }

  private emit(payload: Payload): void {
    this.options.events.emitCommitted('payload.changed', { payload, event: eventForStatus(payload.status as ResolvedStatus) })
  }
}
