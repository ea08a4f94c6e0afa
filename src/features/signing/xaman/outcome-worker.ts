// Learns the outcome of Xaman sign requests in the background, like the expiry sweeper, so that reading a request
// never writes: every 2 seconds each unsettled request is claimed under a lease (one instance at a time), its state is
// read from Xaman server to server, and a signed result goes through exactly the verification (and submission) of
// an approval, with walletAdapter "xaman".
import type { Dialect } from '../../../platform/db/database.js'
import { AppError, unprocessable } from '../../../platform/errors.js'
import { lookAtEach, type PeriodicTask, startPeriodicTask } from '../../../platform/periodic-task.js'
import type { Payload } from '../../payloads/model.js'
import { approveVerified } from '../approve/approve.js'
import { approveConnectWithXamanSignIn } from '../approve/approve-connect.js'
import type { SigningDeps } from '../deps.js'
import { type ClaimedXamanRequest, xamanSignRequestsRepository } from './sign-requests-repository.js'
import type { XamanClient, XamanSignRequestState } from './xaman-client.js'

/** Xaman is asked about each request at most this often. */
export const XAMAN_CHECK_INTERVAL_MS = 2000
/** Longer than a look can take: Xaman's answer (10 s at most), then a verification and a submission (10 s each). */
const LEASE_MS = 60_000
/**
 * Requests claimed at once, and looked at together: a batch takes as long as its slowest look, within its lease, where
 * 50 looks in turn could take minutes when Xaman is slow. Fewer than the PostgreSQL pool's 10 connections, so that the
 * looks never hold every connection the instance's requests need. Claimed longest-waiting first, so that every open
 * request has its turn however many newer ones there are.
 */
const BATCH_SIZE = 8

export interface XamanOutcomesDeps extends SigningDeps {
  dialect: Dialect
}

export class XamanOutcomes {
  constructor(private readonly deps: XamanOutcomesDeps) {}

  /** Takes one look at each due Xaman request; returns true when the batch was full and more may be due. */
  async checkDue(): Promise<boolean> {
    const { db, dialect, clock, xaman } = this.deps
    if (xaman === undefined) return false
    const nowMs = clock.now()
    const claimed = await xamanSignRequestsRepository.claimDue(db, dialect, {
      nowMs,
      leaseExpiresAtMs: nowMs + LEASE_MS,
      nextCheckAtMs: nowMs + XAMAN_CHECK_INTERVAL_MS,
      limit: BATCH_SIZE,
    })
    await lookAtEach(
      claimed,
      (request) => this.look(xaman, request),
      this.deps.logger,
      (request) => ({ uuid: request.payloadUuid, xamanUuid: request.xamanUuid, task: 'xaman-outcomes' }),
      BATCH_SIZE,
    )
    return claimed.length === BATCH_SIZE
  }

  private async look(xaman: XamanClient, request: ClaimedXamanRequest): Promise<void> {
    const { db, clock, logger, payloads } = this.deps
    const log = { uuid: request.payloadUuid, xamanUuid: request.xamanUuid }
    const payload = await payloads.getForSigning(request.payloadUuid)
    if (payload.status !== 'pending') {
      // Signed another way, rejected or expired: this request has nothing left to decide.
      await xamanSignRequestsRepository.markSettled(db, request.xamanUuid, clock.now())
      return
    }
    let state: XamanSignRequestState
    try {
      state = await xaman.getSignRequest(request.xamanUuid)
    } catch (error) {
      logger.warn({ ...log, err: error }, 'could not read a Xaman sign request')
      await xamanSignRequestsRepository.release(db, request)
      return
    }
    const userRejected = state.resolved && !state.signed && !state.cancelled && !state.expired
    if (!state.signed && !userRejected && !state.cancelled && !state.expired) {
      await xamanSignRequestsRepository.release(db, request)
      return
    }
    try {
      if (state.signed) await this.applySigned(payload, request.xamanUuid, state.hex, state.account)
      else if (userRejected) await this.applyRejected(payload)
    } catch (error) {
      // The ledger or the node could not be asked: the next look tries again. Anything else is final for this request.
      if (error instanceof AppError && error.statusCode === 502) {
        await xamanSignRequestsRepository.release(db, request)
        return
      }
      if (!(error instanceof AppError)) throw error
      logger.warn({ ...log, error: error.message, details: error.details }, 'Xaman result not applied')
    }
    await xamanSignRequestsRepository.markSettled(db, request.xamanUuid, clock.now())
  }

  /**
   * A user's rejection in Xaman. A multisigned request (a Xaman request started before they were refused) is rejected by
   * each signer for themself, naming their account: one rejection in Xaman names none, and is not the request's.
   */
  private async applyRejected(payload: Payload): Promise<void> {
    if (payload.multisign !== null) {
      throw unprocessable([
        { field: 'xaman.response', message: "is a rejection of a multisigned request, which names no signer's account" },
      ])
    }
    await this.deps.payloads.reject(payload.uuid, 'xaman')
  }

  private async applySigned(payload: Payload, xamanUuid: string, hex: string | null, account: string | null): Promise<void> {
    if (hex === null) throw unprocessable([{ field: 'xaman.response.hex', message: 'is missing from a signed Xaman request' }])
    if (payload.type === 'connect') await approveConnectWithXamanSignIn(this.deps, payload, { xamanUuid, hex, account })
    else await approveVerified(this.deps, payload, { walletAdapter: 'xaman', signedTransaction: hex })
  }
}

/** The Xaman worker: only when Xaman is configured. */
export function startXamanOutcomeWorker(outcomes: XamanOutcomes, logger: SigningDeps['logger']): PeriodicTask {
  return startPeriodicTask('xaman-outcomes', XAMAN_CHECK_INTERVAL_MS / 2, () => outcomes.checkDue(), logger)
}
