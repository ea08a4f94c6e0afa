// Follows each submitted signAndSubmit transaction to its final outcome (succeeded, failed, dropped), durably: the
// follow is a row written with the payload's move to signed, leased by one instance at a time, and its outcome is
// recorded with the payload.finalized event in one transaction.
//
// A transaction with LastLedgerSequence is dropped once the validated ledger passes it without the transaction. One
// without can be applied for as long as its account's Sequence (or its Ticket) is unused: it is dropped once another
// transaction used it, and the node holds every ledger that could hold this one, none of which does.

import type { Logger } from 'pino'
import { decode } from 'ripple-binary-codec'
import type { Clock } from '../../platform/clock.js'
import type { Db, Dialect, Tx } from '../../platform/db/database.js'
import {
  type SequenceSlot,
  sequenceSlotOf,
  type TransactionStatus,
  type XrplNode,
  XrplNodeUnavailableError,
} from '../../platform/xrpl/xrpl-node.js'
import type { FinalOutcome } from '../payloads/model.js'
import type { PayloadService } from '../payloads/service.js'
import type { PayloadTransition } from '../payloads/transitions.js'
import { type TransactionFollow, transactionFollowsRepository } from './transaction-follows-repository.js'

/** A ledger closes every 3 to 5 seconds: a look every 2 seconds sees each one. */
export const FOLLOW_INTERVAL_MS = 2_000
/**
 * While the node lacks some of the ledgers up to a transaction's LastLedgerSequence (it cannot say that the transaction
 * was dropped), or while nothing but another transaction's use of its Sequence can end a doubt: a look a minute.
 */
export const SLOW_FOLLOW_INTERVAL_MS = 60_000
/** Logged while the node cannot say that a transaction past its LastLedgerSequence was dropped. */
export const MISSING_LEDGERS_MESSAGE =
  'the XRPL node lacks some of the ledgers up to the transaction’s LastLedgerSequence: whether it was applied is not known yet (a node with more history answers)'
/**
 * Logged when a transaction without LastLedgerSequence whose Sequence (or Ticket) was used before it was ever seen
 * unused is given up: nothing bounds the ledgers that may hold it.
 */
export const UNDECIDABLE_MESSAGE =
  'stopped following a transaction without LastLedgerSequence: its Sequence was used before it was first seen unused, and no ledger the node searched holds it'
/** Logged while the node cannot say that a transaction without LastLedgerSequence, whose Sequence is used, was dropped. */
export const MISSING_LEDGERS_SINCE_UNUSED_MESSAGE =
  'the XRPL node lacks some of the ledgers since the transaction’s Sequence was last seen unused: whether it was applied is not known yet (a node with more history answers)'
/** After the node could not answer. */
const UNAVAILABLE_RETRY_MS = 5_000
/**
 * Longer than one look can take: up to five requests to the node (a transaction without LastLedgerSequence), each of
 * which may have to connect first, 10 seconds at most for each.
 */
export const FOLLOW_LEASE_MS = 2 * 60_000
/**
 * A transaction without LastLedgerSequence can wait in a node's queue indefinitely: it is looked at every
 * FOLLOW_INTERVAL_MS for this long after submission, then every SLOW_FOLLOW_INTERVAL_MS until the ledger decides.
 */
export const FAST_FOLLOW_WITHOUT_LAST_LEDGER_MS = 60 * 60_000
const BATCH_SIZE = 50

export interface TransactionFollowerOptions {
  db: Db
  dialect: Dialect
  clock: Clock
  payloads: PayloadService
  /** Undefined without XRPL_NODE_URL: follows wait for a node. */
  xrplNode: XrplNode | undefined
  logger: Logger
}

export class TransactionFollower {
  constructor(private readonly options: TransactionFollowerOptions) {}

  /** A transition hook: a signAndSubmit payload that moves to signed is followed from the same transaction on. */
  async enqueueForTransitions(tx: Tx, transitions: readonly PayloadTransition[]): Promise<void> {
    const nowMs = this.options.clock.now()
    for (const { payload, event } of transitions) {
      if (event !== 'payload.signed' || payload.type !== 'signAndSubmit' || payload.txHash === null || payload.txBlob === null) continue
      const { LastLedgerSequence } = decode(payload.txBlob) as { LastLedgerSequence?: number }
      await transactionFollowsRepository.insert(tx, {
        payloadUuid: payload.uuid,
        txHash: payload.txHash,
        lastLedgerSequence: LastLedgerSequence ?? null,
        followUntilMs: nowMs + FAST_FOLLOW_WITHOUT_LAST_LEDGER_MS,
        nowMs,
      })
    }
  }

  /** Takes one look at each due follow; returns true when the batch was full and more may be due. */
  async followDue(): Promise<boolean> {
    const { db, dialect, clock } = this.options
    const nowMs = clock.now()
    const claimed = await transactionFollowsRepository.claimDue(db, dialect, {
      nowMs,
      leaseExpiresAtMs: nowMs + FOLLOW_LEASE_MS,
      limit: BATCH_SIZE,
    })
    for (const follow of claimed) await this.look(follow)
    return claimed.length === BATCH_SIZE
  }

  private async look(follow: TransactionFollow): Promise<void> {
    const { db, clock, logger } = this.options
    const log = { uuid: follow.payloadUuid, txHash: follow.txHash }
    const node = this.options.xrplNode
    if (node === undefined) {
      await transactionFollowsRepository.postpone(db, follow, clock.now() + UNAVAILABLE_RETRY_MS)
      return
    }
    let status: TransactionStatus
    let earliestLedger = follow.earliestLedger
    let undecidable = false
    try {
      if (follow.lastLedgerSequence !== null) status = await node.transactionStatus(follow.txHash, follow.lastLedgerSequence)
      else ({ status, earliestLedger, undecidable } = await this.lookWithoutLastLedger(node, follow))
    } catch (error) {
      if (!(error instanceof XrplNodeUnavailableError)) throw error
      logger.warn({ ...log, err: error }, 'could not look up a submitted transaction; trying again')
      await transactionFollowsRepository.postpone(db, follow, clock.now() + UNAVAILABLE_RETRY_MS)
      return
    }
    const nowMs = clock.now()
    if (status.state === 'pending' && undecidable && nowMs >= follow.followUntilMs) {
      await transactionFollowsRepository.finish(db, follow, nowMs)
      logger.warn(log, UNDECIDABLE_MESSAGE)
      return
    }
    if (status.state === 'pending') {
      if (status.missingLedgers) {
        logger.warn(log, follow.lastLedgerSequence === null ? MISSING_LEDGERS_SINCE_UNUSED_MESSAGE : MISSING_LEDGERS_MESSAGE)
      }
      const slowly = status.missingLedgers || (follow.lastLedgerSequence === null && nowMs >= follow.followUntilMs)
      await transactionFollowsRepository.postpone(
        db,
        follow,
        nowMs + (slowly ? SLOW_FOLLOW_INTERVAL_MS : FOLLOW_INTERVAL_MS),
        earliestLedger,
      )
      return
    }
    await this.record(follow, finalOutcomeOf(status), nowMs)
  }

  /**
   * A look at a transaction without LastLedgerSequence. Its Sequence (or Ticket) is read first, in a settled ledger
   * (slotSeen). Still unused there: no ledger up to that one holds the transaction, so the first that can is the next
   * one (kept on the follow), and the lookup can only find it validated since. Used: the transaction is either in a
   * ledger from the first that can hold it to that one, or never will be; it is dropped only where the node holds all
   * of those ledgers and none holds it. Seen used before it was ever seen unused (a follow begun by a recovered
   * submission, whose answer named no ledger, looked at late): any ledger may hold it, and a miss proves nothing. It is then looked up by its hash until followUntilMs, and given up.
   */
  private async lookWithoutLastLedger(
    node: XrplNode,
    follow: TransactionFollow,
  ): Promise<{ status: TransactionStatus; earliestLedger: number | null; undecidable: boolean }> {
    const { earliestLedger } = follow
    const slot = await this.slotOf(follow)
    const seen = slot && (await node.slotSeen(slot.account, slot.slot))
    if (!seen?.used) {
      // Never lowered: a node behind the one seen before (a load-balanced address) says nothing new.
      const unusedUpTo = seen?.ledgerIndex ?? null
      const earliest = unusedUpTo === null ? earliestLedger : Math.max(earliestLedger ?? 1, unusedUpTo + 1)
      return { status: await node.transactionStatus(follow.txHash, null), earliestLedger: earliest, undecidable: false }
    }
    if (earliestLedger === null || seen.ledgerIndex === null) {
      return { status: await node.transactionStatus(follow.txHash, null), earliestLedger, undecidable: true }
    }
    const status = await node.transactionStatusSince(follow.txHash, earliestLedger, seen.ledgerIndex)
    return { status, earliestLedger, undecidable: false }
  }

  /** The account and Sequence (or Ticket) of the followed transaction, from its payload's blob. */
  private async slotOf(follow: TransactionFollow): Promise<{ account: string; slot: SequenceSlot } | undefined> {
    const txBlob = (await this.options.payloads.peek(follow.payloadUuid))?.txBlob
    if (!txBlob) return undefined
    try {
      const transaction = decode(txBlob) as { Account: string; Sequence: number; TicketSequence?: number }
      return { account: transaction.Account, slot: sequenceSlotOf(transaction) }
    } catch (error) {
      // The blob decoded when it was verified; should it no longer, the transaction is still looked up by its hash.
      this.options.logger.error({ uuid: follow.payloadUuid, err: error }, 'a followed transaction’s blob does not decode')
      return undefined
    }
  }

  /** The outcome, its webhook deliveries and the end of the follow commit together, while the lease still holds. */
  private async record(follow: TransactionFollow, final: FinalOutcome, nowMs: number): Promise<void> {
    const { db, payloads, logger } = this.options
    const recorded = await db.transaction().execute(async (tx) => {
      if (!(await transactionFollowsRepository.finish(tx, follow, nowMs))) return undefined
      return payloads.recordOutcome(tx, follow.payloadUuid, final)
    })
    if (recorded === undefined) return
    logger.info({ uuid: follow.payloadUuid, txHash: follow.txHash, outcome: final.outcome }, 'submitted transaction is final')
    payloads.announceOutcome(recorded)
  }
}

function finalOutcomeOf(status: Exclude<TransactionStatus, { state: 'pending' }>): FinalOutcome {
  if (status.state === 'dropped') return { outcome: 'dropped', transactionResult: null, ledgerIndex: null, deliveredAmount: null }
  return {
    outcome: status.transactionResult === 'tesSUCCESS' ? 'succeeded' : 'failed',
    transactionResult: status.transactionResult,
    ledgerIndex: status.ledgerIndex,
    deliveredAmount: status.deliveredAmount,
  }
}
