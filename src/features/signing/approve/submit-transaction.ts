// signAndSubmit: the verified blob goes to the XRPL node, and the engine result decides whether the payload resolves
// as signed (submitted). The final outcome is learned afterwards by the transaction follower.
import { AppError, conflict } from '../../../platform/errors.js'
import { sequenceSlotOf, type XrplNode } from '../../../platform/xrpl/xrpl-node.js'
import { type Payload, SUBMISSION_IN_DOUBT } from '../../payloads/model.js'
import { askNode, requireNode, type SigningDeps } from '../deps.js'
import { submissionClaimsRepository } from '../submission-claims-repository.js'
import { CLOSE_TIME_MARGIN_MS } from '../transaction-follower.js'
import { transactionFollowsRepository } from '../transaction-follows-repository.js'
import { transactionProofKey } from '../verify/proof-key.js'
import { SIGNED_FIELD } from '../verify/signed-blob.js'
import type { VerifiedTransaction } from '../verify/verify-signed-transaction.js'
import type { ProvenResolution } from './signer-rules.js'

/** A submission holds its claim this long at most: longer than connecting and submitting can take (10 s each). */
const SUBMISSION_LEASE_MS = 60_000

/**
 * Submits the verified blob and resolves the payload when the ledger accepted it (tesSUCCESS, terQUEUED, tec: see
 * isAcceptedEngineResult). One blob per payload is submitted at a time (a claim in the database, across instances,
 * which records the intent before the blob leaves); the same blob twice is harmless, the ledger applies it once. A
 * refusal leaves the payload pending.
 */
export async function submitAndResolve(
  deps: SigningDeps,
  payload: Payload,
  verified: VerifiedTransaction,
  signed: ProvenResolution,
): Promise<Payload> {
  const node = requireNode(deps, 'submit the transaction')
  const { db, clock, payloads } = deps
  const nowMs = clock.now()
  const intent = {
    payloadUuid: payload.uuid,
    txHash: verified.txHash,
    txBlob: verified.txBlob,
    signerAddress: signed.signerAddress,
    walletAdapter: signed.walletAdapter,
    proofKey: signed.proofKey,
    submittedAtMs: nowMs,
  }
  const claimed = await submissionClaimsRepository.claim(db, intent, nowMs + SUBMISSION_LEASE_MS)
  if (claimed === undefined) {
    await payloads.assertActionable(payload.uuid)
    throw conflict('Another signed transaction for this request is being submitted now; wait for its outcome', SUBMISSION_IN_DOUBT)
  }
  const { submittedBefore } = claimed
  // A claim is released only after its payload has moved on, so a claim taken now may follow a submission that
  // already resolved the payload while this approval was being verified: look again before the node sees a second blob.
  try {
    await payloads.assertActionable(payload.uuid)
  } catch (error) {
    // A claim this request's earlier submission of the same blob left behind stays for the recovery: that one may be on
    // the ledger (its payload, pending past its expiry while it is in doubt, is refused to new approvals with a 410).
    if (!submittedBefore) await submissionClaimsRepository.release(db, intent.payloadUuid, intent.txHash)
    throw error
  }
  // Until the node's answer is handled, the claim is the intent: if this process dies, the node cannot be reached or
  // the move to signed fails, it stays, and once its lease lapses the recovery asks the node about the hash
  // (submission-recovery.ts).
  let handled = false
  /** The proof of a copy signed otherwise that the ledger applied in this transaction's place (appliedElsewhere). */
  let copyProofKey: string | undefined
  try {
    const result = await askNode(() => node.submit(verified.txBlob), deps.logger)
    if (result.engineResult === 'tefALREADY' && !submittedBefore && !bindsPayer(payload)) {
      // This very blob is in the node's open ledger, and this request never submitted it: someone else did, first. For
      // a request open to any account it may be anyone's payment, taken from the network, which relays and streams
      // every proposed transaction; held for the recovery, it would resolve the request once validated. As for a
      // validated one (tefPAST_SEQ, below), only a transaction this service submits for such a request resolves it.
      await payloads.assertActionable(payload.uuid).finally(() => {
        handled = true
      })
      throw new AppError(422, IN_OPEN_LEDGER_MESSAGE, [
        { field: SIGNED_FIELD, message: `${result.engineResult}: ${IN_OPEN_LEDGER_MESSAGE}` },
      ])
    }
    if (result.kept) {
      // The node may yet apply the blob (terPRE_SEQ: a sequence gap that may close; tefALREADY: it is in the open ledger
      // already), and a second signature would then pay a second time. The claim stays, and the recovery follows
      // it to the ledger's decision once its lease lapses (submission-recovery.ts).
      throw conflict(
        `The XRPL node may still apply this transaction (${result.engineResult}: ${result.engineResultMessage}), so do not sign again. Its outcome is being checked, and the request will show it within a few minutes`,
        SUBMISSION_IN_DOUBT,
      )
    }
    if (!result.accepted && submittedBefore && result.engineResult.startsWith('tef')) {
      // The ledger refuses as a repeat (tefPAST_SEQ, tefALREADY...) a blob this request submitted before, whose claim
      // was left behind: the move to signed failed (503), or the node's answer never came (502). It may be the
      // ledger's already: the claim stays, and the recovery asks the node about it once its lease lapses
      // (submission-recovery.ts). Only a submission of this service's for this request is taken for the ledger's: a
      // blob first seen now that the ledger refuses (an old transaction that matches the request) is a 422, below.
      throw conflict(
        'This signed transaction was submitted for this request before and may already be on the XRP Ledger: its outcome is being checked, and the request will show it within a few minutes',
        SUBMISSION_IN_DOUBT,
      )
    }
    if (!result.accepted) {
      // A racing approval of the same blob may have resolved the payload meanwhile, and made this submission a
      // duplicate the ledger refuses (tefPAST_SEQ): that is a 409, not a refusal.
      await payloads.assertActionable(payload.uuid).catch((error: unknown) => {
        handled = true
        throw error
      })
      const elsewhere = result.engineResult === 'tefPAST_SEQ' ? await appliedElsewhere(deps, node, payload, verified) : NOT_APPLIED
      if (elsewhere.copyProofKey === undefined) {
        handled = true
        if (elsewhere.applied) {
          throw new AppError(422, APPLIED_ELSEWHERE_MESSAGE, [
            { field: SIGNED_FIELD, message: `${result.engineResult}: ${APPLIED_ELSEWHERE_MESSAGE}` },
          ])
        }
        throw new AppError(422, `The XRP Ledger refused the transaction with ${result.engineResult}: ${result.engineResultMessage}`, [
          {
            field: SIGNED_FIELD,
            message: `${result.engineResult}: ${asSentence(result.engineResultMessage)} ${result.engineResult === 'tefPAST_SEQ' ? PAST_SEQUENCE_ADVICE : 'Nothing was applied; the request is still pending, sign again'}`,
          },
        ])
      }
      copyProofKey = elsewhere.copyProofKey
      deps.logger.warn(
        { uuid: payload.uuid, txHash: verified.txHash },
        'the ledger applied a copy of this transaction signed otherwise, submitted by someone else: the request is signed',
      )
    }
    try {
      // Held by the claim, the payload is not expired meanwhile: an answer arriving after its expiry still resolves it.
      const resolved = await payloads.resolveSigned(
        payload.uuid,
        { ...signed, submitEngineResult: result.engineResult, ...(copyProofKey === undefined ? {} : { copyProofKey }) },
        intent.submittedAtMs,
      )
      handled = true
      // Only an accepted transaction's answer names a ledger where its Sequence was unused.
      if (result.accepted && verified.transaction.LastLedgerSequence === undefined && result.validatedLedgerIndex !== null) {
        await startFollowAfter(deps, payload.uuid, result.validatedLedgerIndex)
      }
      return resolved
    } catch (error) {
      // A payload resolved otherwise, or expired: nothing more to do with this submission.
      if (error instanceof AppError) handled = true
      if (error instanceof AppError && error.statusCode === 410) {
        // The ledger took the transaction, but the payload expired while it was being submitted.
        deps.logger.error({ uuid: payload.uuid, txHash: verified.txHash }, 'transaction submitted as its payload expired')
      }
      throw error
    }
  } finally {
    // Released, or kept for the recovery: signing pages open on the request (another tab, the phone) saw it claimed
    // meanwhile, and learn whether approving waits.
    if (handled) await submissionClaimsRepository.release(db, intent.payloadUuid, intent.txHash)
    payloads.announceSubmission(intent.payloadUuid)
  }
}

/** What the ledger says of a transaction the node refused with tefPAST_SEQ (appliedElsewhere). */
interface AppliedElsewhere {
  /** The ledger applied this very blob, or a copy signed otherwise, after the request existed. */
  applied: boolean
  /** A copy signed otherwise, which resolves the request: its proof, taken with the move to signed. */
  copyProofKey?: string
}
const NOT_APPLIED: AppliedElsewhere = { applied: false }

/**
 * A tefPAST_SEQ this request does not take: the Sequence went to another transaction (a wallet's stale Sequence), or,
 * for a request open to any account, perhaps to this very payment, submitted by the wallet itself (not asked: anyone
 * could present a transaction of the ledger's).
 */
const PAST_SEQUENCE_ADVICE =
  'The account used this Sequence already: the request is still pending, sign again with the account’s next Sequence. If your wallet submitted this very payment itself, it was made: do not sign again unless you mean to pay again'

/** A 422 for a blob the ledger holds already, submitted elsewhere: it cannot resolve the request, and must not be paid again. */
const APPLIED_ELSEWHERE_MESSAGE =
  'The XRP Ledger already holds this very transaction, submitted elsewhere, so it cannot resolve this request: only a transaction this service submits for it can (anyone can present one the ledger holds). It was applied: do not sign again unless you mean to pay again, and ask the application about the payment already made'

/**
 * A 422 for a blob already in the node's open ledger, submitted elsewhere first, for a request open to any account: it
 * may be anyone's payment, and it will likely be applied.
 */
const IN_OPEN_LEDGER_MESSAGE =
  'The XRP Ledger already holds this very transaction in its open ledger, submitted elsewhere, so it cannot resolve this request, which any account may pay: only a transaction this service submits for it can (anyone can present one the network relays). It will likely be applied: do not sign again unless you mean to pay again, and ask the application about the payment already made'

/**
 * Whether the transaction that used the Sequence (or Ticket) of one the node refused with tefPAST_SEQ is a copy of it
 * signed otherwise: a wallet that submitted its own copy, with another of the account's keys or tfFullyCanonicalSig
 * added, or signers who gathered another set of signatures. The user approved it, and the ledger applied it: a 422
 * would invite a second signature, and a second payment. Only the account's keys make such a copy (a signature has one
 * valid form, low S), so no one else can present one. The very blob the ledger holds is not taken: a validated
 * transaction is public, and anyone could present it (its 422 says not to pay again). Asked only of a request that
 * binds its payer (its transaction names the Account, or options.signers, or a multisigned request), in a ledger that
 * closed after the request existed (less CLOSE_TIME_MARGIN_MS; the ledger must say when), and for a copy whose proof resolved no
 * other request (one ledger transaction, one request: the move to signed takes it). While the ledger cannot say yet
 * (the slot used in the open ledger only, a node without the ledgers the search reads), a 409: the claim stays, and
 * the recovery follows it to the ledger's decision (submission-recovery.ts).
 */
async function appliedElsewhere(
  deps: SigningDeps,
  node: XrplNode,
  payload: Payload,
  verified: VerifiedTransaction,
): Promise<AppliedElsewhere> {
  if (!bindsPayer(payload)) return NOT_APPLIED
  const transaction = verified.transaction as { Account: string; Sequence: number; TicketSequence?: number }
  // A copy is the account's own doing (only its keys make one), its proof taken with the move: one validated any time
  // since the request existed is this approval's, however late the approval comes.
  const notBeforeMs = payload.createdAtMs - CLOSE_TIME_MARGIN_MS
  const used = { account: transaction.Account, slot: sequenceSlotOf(transaction), notBeforeMs }
  const status = await askNode(() => node.transactionStatusUsed(verified.txBlob, used), deps.logger)
  if (status.state === 'pending') {
    throw conflict(
      'The account’s Sequence was used already, perhaps by this very transaction submitted elsewhere, so do not sign again. Its outcome is being checked, and the request will show it within a few minutes',
      SUBMISSION_IN_DOUBT,
    )
  }
  if (status.state !== 'validated' || status.closedAtMs === null || status.closedAtMs < notBeforeMs) return NOT_APPLIED
  const copy = status.signedOtherwise
  if (copy === undefined) return { applied: true }
  const copyProofKey = transactionProofKey(copy)
  if (await deps.payloads.isProofHeldByAnother(payload.uuid, copyProofKey)) return NOT_APPLIED
  return { applied: true, copyProofKey }
}

/** Whether only the request's own payer can resolve it: its transaction names the Account, or its signers are listed. */
function bindsPayer(payload: Payload): boolean {
  return typeof payload.transaction?.Account === 'string' || payload.signers !== null || payload.multisign !== null
}

/**
 * The follow of a transaction without LastLedgerSequence starts its search after the ledger its submission's answer
 * named (transaction-follower.ts): without it, a first look that comes after another transaction used the Sequence
 * could bound nothing. A hint only: should it not be written, the follow's first look sets its own.
 */
async function startFollowAfter(deps: SigningDeps, payloadUuid: string, validatedLedgerIndex: number): Promise<void> {
  try {
    await transactionFollowsRepository.raiseEarliestLedger(deps.db, payloadUuid, validatedLedgerIndex + 1)
  } catch (error) {
    deps.logger.warn({ uuid: payloadUuid, err: error }, 'could not record the ledger a submission was answered at')
  }
}

/** The node's message as one sentence: rippled's end in a full stop already, others may not. */
function asSentence(text: string): string {
  const trimmed = text.trim()
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`
}
