// Recovers signAndSubmit submissions whose instance died (or lost the node) between sending the blob and learning
// the answer: the submission claim records the intent before the blob leaves; once its lease lapses, one instance
// takes it over, asks the node about the hash, and resolves the payload as signed once a validated ledger holds the
// transaction, or releases the claim once it can never be applied, so that the user can sign again.
//
// While the ledger can still apply it, each look sends the blob again: the node may never have received it (the
// connection dropped on its way) or lost it since (a restart empties its queue).
//
// Only a validated ledger counts: rippled answers `tx` for a blob it refused from its cache, as for one in its open
// ledger. And only a transaction the ledger took after the request existed: an older one with the same hash (someone's
// earlier payment that matches an unpinned request) was never this service's submission.
import { decode } from 'ripple-binary-codec'
import { AppError } from '../../platform/errors.js'
import { lookAtEach } from '../../platform/periodic-task.js'
import {
  isPastLastLedger,
  type PastLastLedger,
  type SequenceSlot,
  sequenceSlotOf,
  type TransactionStatus,
  type XrplNode,
  XrplNodeUnavailableError,
} from '../../platform/xrpl/xrpl-node.js'
import type { SigningDeps } from './deps.js'
import { type LapsedClaim, type SubmissionIntent, submissionClaimsRepository } from './submission-claims-repository.js'
import {
  CLOSE_TIME_MARGIN_MS,
  FOLLOW_INTERVAL_MS,
  FOLLOW_LEASE_MS,
  MISSING_LEDGERS_MESSAGE,
  SLOW_FOLLOW_INTERVAL_MS,
} from './transaction-follower.js'
import { transactionProofKey } from './verify/proof-key.js'

/** As a follow's: a look makes as many requests to the node, and submits the blob again besides. */
const LEASE_MS = FOLLOW_LEASE_MS
/** After the node could not answer, or while none is configured. */
const UNAVAILABLE_RETRY_MS = 5_000
/**
 * A transaction without LastLedgerSequence can be applied until another transaction uses its account's Sequence (or
 * its Ticket): until then its claim is held, looked at every FOLLOW_INTERVAL_MS for this long after its submission,
 * then every SLOW_FOLLOW_INTERVAL_MS.
 */
const SLOW_LOOK_AFTER_MS = 10 * 60_000
/**
 * A claim for a transaction without LastLedgerSequence that no queue can hold (neverQueued: a signer can pin a request
 * so, with an account that never exists or a Sequence far ahead) is released this long after its request expired:
 * rippled retries a blob outside its queue only a few ledgers after each submission, and the recovery submits it again
 * only until the request expires. One a queue can hold is not: rippled's queue keeps a transaction without
 * LastLedgerSequence for as long as the fees stay high, and relays it.
 */
const UNSENT_DOUBT_MS = 60 * 60_000
/** The transactions rippled queues for one account at most (TxQ's maximumTxnPerAccount, 10 by default). */
const QUEUED_PER_ACCOUNT = 10
const BATCH_SIZE = 50
export class SubmissionRecovery {
  constructor(private readonly deps: SigningDeps) {}

  /** Takes over each lapsed submission claim and looks at it once; returns true when the batch was full. */
  async recoverLapsed(): Promise<boolean> {
    const { db, clock } = this.deps
    const nowMs = clock.now()
    const lapsed = await submissionClaimsRepository.findLapsed(db, nowMs, BATCH_SIZE)
    const takeOverAndLook = async (claim: LapsedClaim) => {
      // Each lease from its own takeover: the looks before it in the batch may have taken their time.
      const held = await submissionClaimsRepository.takeOver(db, claim, clock.now() + LEASE_MS)
      if (held) await this.look(held)
    }
    await lookAtEach(lapsed, takeOverAndLook, this.deps.logger, (claim) => ({ uuid: claim.payloadUuid, task: 'submission-recovery' }))
    return lapsed.length === BATCH_SIZE
  }

  /** Ends a doubt the ledger settled without the transaction: the request may be signed again, and open pages learn it. */
  private async release(claim: LapsedClaim): Promise<void> {
    await submissionClaimsRepository.releaseHeld(this.deps.db, claim)
    this.deps.payloads.announceSubmission(claim.payloadUuid)
  }

  private async look(claim: LapsedClaim): Promise<void> {
    const { db, clock, logger } = this.deps
    const { intent } = claim
    // A claim taken before intents were recorded says too little to resolve anything: it only ever blocked.
    if (intent === null) return this.release(claim)
    const log = { uuid: intent.payloadUuid, txHash: intent.txHash }
    const node = this.deps.xrplNode
    if (node === undefined) {
      await submissionClaimsRepository.takeOver(db, claim, clock.now() + UNAVAILABLE_RETRY_MS)
      return
    }
    let transaction: { LastLedgerSequence?: number; Account: string; Sequence: number; TicketSequence?: number }
    try {
      transaction = decode(intent.txBlob) as typeof transaction
    } catch (error) {
      // It decoded when it was verified. Held, as what it says cannot be known: the next claims in the batch go on.
      logger.error({ ...log, err: error }, 'a submission in doubt has a stored blob that does not decode; it stays claimed')
      await submissionClaimsRepository.takeOver(db, claim, clock.now() + SLOW_FOLLOW_INTERVAL_MS)
      return
    }
    const { Account } = transaction
    const lastLedgerSequence = transaction.LastLedgerSequence ?? null
    const slot = sequenceSlotOf(transaction)
    const payload = await this.deps.payloads.peek(intent.payloadUuid)
    // A copy signed otherwise, the account's own doing, counts from the request's creation. The very blob only from its
    // submission: one validated before (a public blob of the ledger's, presented for a request open to any account)
    // was never this service's submission.
    const notBeforeMs = (payload?.createdAtMs ?? intent.submittedAtMs) - CLOSE_TIME_MARGIN_MS
    const blobNotBeforeMs = Math.max(notBeforeMs, intent.submittedAtMs - CLOSE_TIME_MARGIN_MS)
    let status: TransactionStatus
    try {
      if (lastLedgerSequence === null) {
        // Only another transaction's use of its Sequence (or Ticket) ends the doubt: once a settled ledger shows it
        // used, the first ledger that does holds this transaction, or never will. No answer named a ledger where it was
        // unused: that ledger is searched back from the settled one, down to the request's creation at most.
        const seen = await node.slotSeen(Account, slot)
        status =
          seen.used && seen.ledgerIndex !== null
            ? await node.transactionStatusSince(intent.txBlob, {
                account: Account,
                slot,
                usedBy: seen.ledgerIndex,
                earliestLedger: null,
                notBeforeMs,
              })
            : await node.transactionStatus(intent.txHash, null)
      } else {
        // Past LastLedgerSequence, decided from the account's Sequence (or Ticket) as the follower decides, where the
        // account is in the ledger; where it is not (deleted, perhaps after applying it), by the hash. Before it, a
        // Sequence a settled ledger shows used decides as well: the transaction that used it is this one, or this one
        // can never be applied (a wallet's stale Sequence, used by another of its transactions, need not hold the claim
        // until LastLedgerSequence).
        const byHash = await node.transactionStatus(intent.txHash, lastLedgerSequence)
        const past = { account: Account, slot, lastLedgerSequence, notBeforeMs }
        status = isPastLastLedger(byHash)
          ? await node.transactionStatusPast(intent.txBlob, past, byHash)
          : await this.decidedBySlot(node, intent.txBlob, past, byHash)
      }
    } catch (error) {
      if (!(error instanceof XrplNodeUnavailableError)) throw error
      logger.warn({ ...log, err: error }, 'could not look up a submission whose instance stopped; trying again')
      await submissionClaimsRepository.takeOver(db, claim, clock.now() + UNAVAILABLE_RETRY_MS)
      return
    }
    const nowMs = clock.now()
    if (status.state === 'validated') {
      const copyProofKey = status.signedOtherwise === undefined ? undefined : transactionProofKey(status.signedOtherwise)
      if (copyProofKey !== undefined && (await this.deps.payloads.isProofHeldByAnother(intent.payloadUuid, copyProofKey))) {
        logger.warn(
          { ...log, ledgerTxHash: status.txHash },
          'the ledger holds a copy of a submission in doubt, signed otherwise, that counts for another request: released',
        )
        return this.release(claim)
      }
      const bound = copyProofKey === undefined ? blobNotBeforeMs : notBeforeMs
      if (status.closedAtMs !== null && status.closedAtMs < bound) {
        const closedAt = new Date(status.closedAtMs).toISOString()
        logger.warn({ ...log, closedAt }, 'a submission’s transaction was validated before it was submitted: the request is still pending')
        return this.release(claim)
      }
      await this.resolve(intent, copyProofKey)
      await submissionClaimsRepository.releaseHeld(db, claim)
      return
    }
    if (status.state === 'dropped') {
      await this.release(claim)
      logger.info(log, 'released a submission the ledger never took: the request is still pending')
      return
    }
    const longExpired = payload === undefined || nowMs >= payload.expiresAtMs + UNSENT_DOUBT_MS
    if (lastLedgerSequence === null && longExpired && (await this.neverQueued(node, Account, slot))) {
      await this.release(claim)
      logger.warn(log, 'released a submission no queue can hold, an hour after its request expired: the ledger can never apply it')
      return
    }
    if (status.missingLedgers) logger.warn(log, MISSING_LEDGERS_MESSAGE)
    // A blob is submitted only while its payload is pending and not past its expiry, by the recovery as by an approval.
    else if (payload?.status === 'pending' && payload.expiresAtMs > nowMs) await this.sendAgain(node, intent)
    const slowly = status.missingLedgers || (lastLedgerSequence === null && nowMs >= intent.submittedAtMs + SLOW_LOOK_AFTER_MS)
    await submissionClaimsRepository.takeOver(db, claim, nowMs + (slowly ? SLOW_FOLLOW_INTERVAL_MS : FOLLOW_INTERVAL_MS))
  }

  /**
   * What the slot says of a transaction with LastLedgerSequence not yet past: when a settled ledger shows it used, the
   * ledger that used it decides (validated, or dropped); else, or while that ledger cannot be read, `byHash` stands.
   */
  private async decidedBySlot(node: XrplNode, txBlob: string, past: PastLastLedger, byHash: TransactionStatus): Promise<TransactionStatus> {
    if (byHash.state !== 'pending') return byHash
    const { account, slot, notBeforeMs } = past
    try {
      const seen = await node.slotSeen(account, slot)
      if (!seen.used || seen.ledgerIndex === null) return byHash
      const status = await node.transactionStatusSince(txBlob, {
        account,
        slot,
        usedBy: seen.ledgerIndex,
        earliestLedger: null,
        notBeforeMs,
      })
      return status.state === 'pending' ? byHash : status
    } catch (error) {
      // A node without the settled ledger (just restarted, or behind): the lookup by hash stands, and the blob is sent again.
      if (!(error instanceof XrplNodeUnavailableError)) throw error
      return byHash
    }
  }

  /**
   * Whether no node's queue can hold a transaction of this slot, so that only rippled's local retries (a few ledgers
   * after each submission) could still apply it: its account does not exist (rippled queues nothing for one), its
   * Sequence is further ahead of the account's than a queue takes (TxQ: QUEUED_PER_ACCOUNT), or its Ticket is not
   * created yet. Such a blob pins its request: nothing on the ledger would ever end the doubt. False while the node
   * cannot say (the next look asks again).
   */
  private async neverQueued(node: XrplNode, account: string, slot: SequenceSlot): Promise<boolean> {
    try {
      const sequence = await node.accountSequence(account)
      if (sequence === null) return true
      return 'sequence' in slot ? slot.sequence >= sequence + QUEUED_PER_ACCOUNT : slot.ticketSequence >= sequence
    } catch (error) {
      if (!(error instanceof XrplNodeUnavailableError)) throw error
      return false
    }
  }

  /**
   * Submits the blob again, while no validated ledger holds it and one still can, and while its payload is pending and
   * not past its expiry (a blob is submitted only then, by the recovery as by an approval): a node that never received
   * it, or lost it, would otherwise let a transaction with LastLedgerSequence lapse (the user signs again), and leave
   * one without it in doubt until its account happens to use its Sequence. The ledger applies a blob once, so the
   * repeat is harmless. Its answer decides nothing (a repeat of a blob already applied is refused as one, tefPAST_SEQ
   * or tefALREADY): the next look at the ledger does.
   */
  private async sendAgain(node: XrplNode, intent: SubmissionIntent): Promise<void> {
    const log = { uuid: intent.payloadUuid, txHash: intent.txHash }
    try {
      const { engineResult } = await node.submit(intent.txBlob)
      this.deps.logger.debug({ ...log, engineResult }, 'sent a submission in doubt to the XRPL node again')
    } catch (error) {
      if (!(error instanceof XrplNodeUnavailableError)) throw error
      this.deps.logger.warn({ ...log, err: error }, 'could not send a submission in doubt again; the next look will')
    }
  }

  /**
   * As the submission would have, had its answer arrived: the move to signed, its events, and the follow; with the
   * proof of a copy signed otherwise that the ledger applied in the transaction's place, taken with the move.
   */
  private async resolve(intent: SubmissionIntent, copyProofKey: string | undefined): Promise<void> {
    const { payloads, logger } = this.deps
    const log = { uuid: intent.payloadUuid, txHash: intent.txHash }
    const signed = {
      walletAdapter: intent.walletAdapter,
      signerAddress: intent.signerAddress,
      txHash: intent.txHash,
      txBlob: intent.txBlob,
      proofKey: intent.proofKey,
      ...(copyProofKey === undefined ? {} : { copyProofKey }),
    }
    try {
      const resolved = await payloads.resolveRecoveredSubmission(intent.payloadUuid, signed, intent.submittedAtMs)
      if (resolved) {
        logger.info(log, 'recovered a submitted transaction: the request is signed')
        return
      }
      const payload = await payloads.getForSigning(intent.payloadUuid)
      if (payload.status === 'signed' && payload.txHash === intent.txHash) return
      // As when a submission's answer arrives too late (submit-transaction.ts): the ledger has a transaction the
      // payload does not record.
      logger.error({ ...log, status: payload.status }, 'transaction submitted as its payload expired or was resolved otherwise')
    } catch (error) {
      if (!(error instanceof AppError && error.statusCode === 409)) throw error
      logger.error({ ...log, err: error }, 'recovered a submitted transaction whose proof resolved another payload')
    }
  }
}
