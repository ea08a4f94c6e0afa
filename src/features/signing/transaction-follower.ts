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
import { lookAtEach } from '../../platform/periodic-task.js'
import {
  isPastLastLedger,
  type SequenceSlot,
  sequenceSlotOf,
  type TransactionStatus,
  type XrplNode,
  XrplNodeUnavailableError,
} from '../../platform/xrpl/xrpl-node.js'
import type { FinalOutcome } from '../payloads/model.js'
import type { PayloadService } from '../payloads/service.js'
import { DROPPED, type PayloadTransition } from '../payloads/transitions.js'
import { type TransactionFollow, transactionFollowsRepository } from './transaction-follows-repository.js'
import { transactionProofKey } from './verify/proof-key.js'

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
/** Logged while the node cannot say that a transaction without LastLedgerSequence, whose Sequence is used, was dropped. */
export const MISSING_LEDGERS_SINCE_UNUSED_MESSAGE =
  'the XRPL node lacks some of the ledgers since the transaction’s Sequence was last seen unused: whether it was applied is not known yet (a node with more history answers)'
/** After the node could not answer. */
const UNAVAILABLE_RETRY_MS = 5_000
/**
 * A validated ledger that closed this long before a request was created cannot hold its submission: the ledger rounds
 * its close time by up to 60 s, and this service's clock may differ from the network's by up to 4 minutes more. A
 * wider margin would let an older transaction through; a narrower one, a service clock further off, taking the ledger's
 * transaction for an older one, would ask the user to sign again (and pay twice).
 */
export const CLOSE_TIME_MARGIN_MS = 5 * 60_000
/**
 * Longer than one look takes. Most make two or three requests to the node; the one that finds where a used Sequence
 * went (transactionStatusSince) makes about two for each doubling of the ledgers it searches (some 20 for a day's
 * ledgers). Each may have to connect first, 10 seconds at most for each; a node that slow is the exception.
 */
export const FOLLOW_LEASE_MS = 5 * 60_000
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
    await lookAtEach(
      claimed,
      (follow) => this.look(follow),
      this.options.logger,
      (follow) => ({ uuid: follow.payloadUuid, task: 'transaction-follower' }),
    )
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
    try {
      if (follow.lastLedgerSequence !== null) status = await this.lookWithLastLedger(node, follow, follow.lastLedgerSequence)
      else ({ status, earliestLedger } = await this.lookWithoutLastLedger(node, follow))
    } catch (error) {
      if (!(error instanceof XrplNodeUnavailableError)) throw error
      logger.warn({ ...log, err: error }, 'could not look up a submitted transaction; trying again')
      await transactionFollowsRepository.postpone(db, follow, clock.now() + UNAVAILABLE_RETRY_MS)
      return
    }
    const nowMs = clock.now()
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
   * A look at a transaction with LastLedgerSequence: by its hash until a settled ledger has passed LastLedgerSequence,
   * then from its account's Sequence (or Ticket), when the account is in the ledger (transactionStatusPast): a miss
   * in the node's database proves nothing while rippled has not written a ledger it lists (the newest, or an older
   * one it fetched to fill a gap), and the slot still unused decides even on a node without the history.
   */
  private async lookWithLastLedger(node: XrplNode, follow: TransactionFollow, lastLedgerSequence: number): Promise<TransactionStatus> {
    const byHash = await node.transactionStatus(follow.txHash, lastLedgerSequence)
    // The payload is read only once the lookup by hash has nothing more to say.
    const transaction = isPastLastLedger(byHash) ? await this.transactionOf(follow) : undefined
    if (transaction === undefined) return byHash
    const { txBlob, account, slot, requestedAtMs } = transaction
    const past = { account, slot, lastLedgerSequence, notBeforeMs: requestedAtMs - CLOSE_TIME_MARGIN_MS }
    return node.transactionStatusPast(txBlob, past, byHash)
  }

  /**
   * A look at a transaction without LastLedgerSequence. Its Sequence (or Ticket) is read first, in a settled ledger
   * (slotSeen). Still unused there: no ledger up to that one holds the transaction, so the first that can is the next
   * one (kept on the follow), and the lookup can only find it validated since. Used: the transaction is in the first
   * ledger that shows the slot used, or never will be (transactionStatusSince): searched from the first ledger that
   * can hold it, or, when no look saw the slot unused (a follow begun by a recovered submission, whose answer named no
   * ledger), back from the settled ledger to one where the slot was unused, or that closed before the request existed.
   */
  private async lookWithoutLastLedger(
    node: XrplNode,
    follow: TransactionFollow,
  ): Promise<{ status: TransactionStatus; earliestLedger: number | null }> {
    const { earliestLedger } = follow
    const transaction = await this.transactionOf(follow)
    const seen = transaction && (await node.slotSeen(transaction.account, transaction.slot))
    if (transaction === undefined || !seen?.used || seen.ledgerIndex === null) {
      // Never lowered: a node behind the one seen before (a load-balanced address) says nothing new.
      const unusedUpTo = seen?.ledgerIndex ?? null
      const earliest = unusedUpTo === null ? earliestLedger : Math.max(earliestLedger ?? 1, unusedUpTo + 1)
      return { status: await node.transactionStatus(follow.txHash, null), earliestLedger: earliest }
    }
    const status = await node.transactionStatusSince(transaction.txBlob, {
      account: transaction.account,
      slot: transaction.slot,
      usedBy: seen.ledgerIndex,
      earliestLedger,
      notBeforeMs: transaction.requestedAtMs - CLOSE_TIME_MARGIN_MS,
    })
    return { status, earliestLedger }
  }

  /** The followed transaction's blob, its account and Sequence (or Ticket), and when its payload was created. */
  private async transactionOf(
    follow: TransactionFollow,
  ): Promise<{ txBlob: string; account: string; slot: SequenceSlot; requestedAtMs: number } | undefined> {
    const payload = await this.options.payloads.peek(follow.payloadUuid)
    if (!payload?.txBlob) return undefined
    try {
      const transaction = decode(payload.txBlob) as { Account: string; Sequence: number; TicketSequence?: number }
      return { txBlob: payload.txBlob, account: transaction.Account, slot: sequenceSlotOf(transaction), requestedAtMs: payload.createdAtMs }
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
    const log = { uuid: follow.payloadUuid, txHash: follow.txHash, outcome: recorded.outcome }
    if (final.copyProofKey !== undefined && recorded.outcome === 'dropped') {
      logger.warn(
        { ...log, ledgerTxHash: final.txHash },
        'the ledger holds a copy of this transaction, signed otherwise, that counts for another request: this one can never be applied',
      )
    } else if (final.copyProofKey !== undefined) {
      logger.warn({ ...log, ledgerTxHash: final.txHash }, 'the ledger holds this transaction signed otherwise, submitted by someone else')
    }
    logger.info(log, 'submitted transaction is final')
    payloads.announceOutcome(recorded)
  }
}

function finalOutcomeOf(status: Exclude<TransactionStatus, { state: 'pending' }>): FinalOutcome {
  if (status.state === 'dropped') return DROPPED
  return {
    outcome: status.transactionResult === 'tesSUCCESS' ? 'succeeded' : 'failed',
    txHash: status.txHash,
    ...(status.signedOtherwise === undefined ? {} : { copyProofKey: transactionProofKey(status.signedOtherwise) }),
    transactionResult: status.transactionResult,
    ledgerIndex: status.ledgerIndex,
    deliveredAmount: status.deliveredAmount,
  }
}
