// Payload operations: creation under the plan's limits, reads that never show a stale pending payload,
// and every state transition, each in one database transaction with what must happen alongside it.
import type { ServiceEvents } from '../../events.js'
import type { Clock } from '../../platform/clock.js'
import { utcDay, utcMonth } from '../../platform/clock.js'
import { newPayloadUuid } from '../../platform/crypto/ids.js'
import type { Db, Tx } from '../../platform/db/database.js'
import { AppError, conflict, gone, notFound, unprocessable } from '../../platform/errors.js'
import { PLAN_LABELS, type PlanLimits, type PlanName, usageWarningThreshold } from '../projects/plans.js'
import { pickShard, usageRepository } from '../projects/usage-repository.js'
import { MAX_SIGNER_ENTRIES, type MultisignState } from '../signing/multisign/model.js'
import type { MultisignPreparer, PreparedMultisign } from '../signing/multisign/prepare.js'
import { buildConnectChallenge, newChallengeNonce } from '../signing/verify/connect-challenge.js'
import { type CreationsObserver, PayloadCreations } from './creations.js'
import {
  eventForStatus,
  type FinalOutcome,
  type Payload,
  type PayloadEvent,
  type ResolvedStatus,
  type SignedResolution,
  signingUrl,
} from './model.js'
import { expiresInSeconds, validatePayloadRequest } from './payload-request.js'
import { payloadProofsRepository } from './proofs-repository.js'
import { payloadsRepository, type TransitionChanges } from './repository.js'
import type { CreatePayloadRequest, PayloadPage } from './schemas.js'

export const NOT_FOUND_MESSAGE = 'Payload not found'
export const PROOF_ALREADY_USED_MESSAGE =
  'This signature is already used by another request: a signature or signed transaction resolves one request only'

export interface PayloadTransition {
  payload: Payload
  event: PayloadEvent
}

export interface PayloadServiceOptions {
  db: Db
  clock: Clock
  /** 'payload.changed' in the transaction of each state change and after its commit; 'usage.warning' in a creation's. */
  events: ServiceEvents
  publicUrl: string
  network: string
  limits: Record<PlanName, PlanLimits>
  /** Reads the signer list and completes the transaction of a multisigned request (options.multisign). */
  prepareMultisign?: MultisignPreparer
  /** Recording the monthly usage warning failed after a creation's commit (the creation stands; the next one tries again). */
  onUsageWarningError?: (error: unknown) => void
  /** Told how each group of creations was written (creations.ts): in one statement or in a transaction. */
  onCreationsWritten?: CreationsObserver
}

/** Compare-and-set attempts of one change to a multisigned request: more than the signers that can race it. */
const MULTISIGN_ATTEMPTS = MAX_SIGNER_ENTRIES + 8

export interface CreatingProject {
  projectId: string
  plan: PlanName
}

export class PayloadService {
  private readonly challengeDomain: string
  private readonly creations: PayloadCreations
  /** Months whose usage warning is known to be recorded: no more checks for them in this process. */
  private readonly warnedMonths = new Set<string>()

  constructor(private readonly options: PayloadServiceOptions) {
    this.challengeDomain = new URL(options.publicUrl).host
    this.creations = new PayloadCreations(options.db, options.onCreationsWritten)
  }

  /**
   * Creates a payload. `alongside` runs inside the creation's transaction once the payload is written, so that what it
   * records (an idempotent response) commits or rolls back with the payload.
   */
  async create(
    project: CreatingProject,
    request: CreatePayloadRequest,
    alongside?: (tx: Tx, payload: Payload) => Promise<void>,
  ): Promise<Payload> {
    const limits = this.options.limits[project.plan]
    const errors = validatePayloadRequest(request, project.plan, limits)
    if (errors.length > 0) throw unprocessable(errors)

    const multisign = request.options?.multisign === true ? await this.prepareMultisign(request.transaction ?? {}) : undefined
    const nowMs = this.options.clock.now()
    const uuid = newPayloadUuid()
    const expiresAtMs = nowMs + expiresInSeconds(request, limits) * 1000
    const payload: Payload = {
      uuid,
      projectId: project.projectId,
      type: request.type,
      status: 'pending',
      transaction: multisign?.transaction ?? request.transaction ?? null,
      message: request.message ?? null,
      challenge: request.type === 'connect' ? this.connectChallenge(uuid, nowMs, expiresAtMs) : null,
      returnUrl: request.options?.returnUrl ?? null,
      customInstructions: request.options?.customInstructions ?? null,
      expiresAtMs,
      createdAtMs: nowMs,
      resolvedAtMs: null,
      signerAddress: null,
      txHash: null,
      txBlob: null,
      walletAdapter: null,
      publicKey: null,
      signature: null,
      submitEngineResult: null,
      validatedResult: null,
      validatedLedgerIndex: null,
      signers: request.options?.signers ?? null,
      outcome: null,
      deliveredAmount: null,
      multisign: multisign?.state ?? null,
      externalId: request.options?.externalId ?? null,
      metadata: request.options?.metadata ?? null,
    }
    const month = utcMonth(nowMs)
    const limit = limits.monthlyPayloads
    const externalId = payload.externalId
    // Written with the other creations of the moment, in one transaction (creations.ts); the checks and `alongside` run
    // in it for this payload.
    const result = await this.creations.create(payload, {
      quota: { month, limit },
      // Checked before the month's count, so that a repeat is told which payload it repeats even at the limit; and
      // again if the insert found the externalId taken since.
      // Without an externalId there is nothing to check, and no check lets the creation go in one statement.
      check: externalId === null ? undefined : (tx) => this.assertExternalIdFree(tx, project.projectId, externalId),
      alongside: alongside && ((tx) => alongside(tx, payload)),
    })
    if (!result.created) {
      throw new AppError(
        403,
        `Monthly payload limit reached: the ${PLAN_LABELS[project.plan]} plan allows ${limit} payloads per month; ` +
          `the count starts again on the first day of next month (UTC)${project.plan === 'free' ? ', or upgrade to Pro' : ''}`,
      )
    }
    const used = result.monthCount
    if (used !== undefined && used >= usageWarningThreshold(limits)) await this.warnOfUsage(project.projectId, month, used, limit, nowMs)
    return payload
  }

  /**
   * Records the month's usage warning once, with what it sets off (the email), in a transaction after the creation's
   * commit: the count read then includes every creation committed before, so the warning is not missed when
   * creations on several instances cross the threshold together. A creation answered 201 stays created if this fails.
   */
  private async warnOfUsage(projectId: string, month: string, used: number, limit: number, nowMs: number): Promise<void> {
    const key = `${projectId}\u0000${month}`
    if (this.warnedMonths.has(key)) return
    try {
      await this.options.db.transaction().execute(async (tx) => {
        if (!(await usageRepository.recordUsageWarning(tx, { projectId, month, limit, payloadCount: used, nowMs }))) return
        await this.options.events.emitInTransaction(tx, 'usage.warning', { projectId, month, used, limit })
      })
      if (this.warnedMonths.size >= 10_000) this.warnedMonths.clear()
      this.warnedMonths.add(key)
    } catch (error) {
      this.options.onUsageWarningError?.(error)
    }
  }

  /** 409 naming the project's payload that already has this externalId. */
  private async assertExternalIdFree(tx: Tx, projectId: string, externalId: string): Promise<void> {
    const existing = await payloadsRepository.findByExternalId(tx, projectId, externalId)
    if (existing) throw conflict(`A payload with externalId "${externalId}" already exists in this project`, { uuid: existing.uuid })
  }

  /** A project's payload, expired first if its time has passed. */
  async getForProject(projectId: string, uuid: string): Promise<Payload> {
    const payload = await payloadsRepository.findForProject(this.options.db, projectId, uuid)
    if (!payload) throw notFound(NOT_FOUND_MESSAGE)
    return this.expireIfDue(payload)
  }

  async list(projectId: string, page: PayloadPage): Promise<Payload[]> {
    const payloads = await payloadsRepository.listForProject(this.options.db, projectId, page)
    return Promise.all(payloads.map((payload) => this.expireIfDue(payload)))
  }

  /** Any payload by uuid (the signing page's capability), expired first if its time has passed. */
  async getForSigning(uuid: string): Promise<Payload> {
    const payload = await payloadsRepository.findByUuid(this.options.db, uuid)
    if (!payload) throw notFound(NOT_FOUND_MESSAGE)
    return this.expireIfDue(payload)
  }

  /** DELETE /payloads/{uuid}: the application cancels a pending payload, which becomes expired. */
  async cancel(projectId: string, uuid: string): Promise<Payload> {
    const payload = await this.getForProject(projectId, uuid)
    if (payload.status !== 'pending') throw conflict(`Payload is already ${payload.status}`)
    const moved = await this.transition(uuid, { status: 'expired', resolvedAtMs: this.options.clock.now() })
    if (moved) return moved
    const now = await payloadsRepository.findByUuid(this.options.db, uuid)
    throw conflict(`Payload is already ${now?.status ?? 'resolved'}`)
  }

  /** The wallet approved and the service verified it: pending -> signed, before expiry only. */
  async resolveSigned(uuid: string, signed: SignedResolution): Promise<Payload> {
    return this.resolveByWallet(uuid, { status: 'signed', resolvedAtMs: this.options.clock.now(), signed })
  }

  /**
   * A submission recovered after the instance that made it died (submission-recovery.ts): pending -> signed, with the
   * same events as resolveSigned, if the payload had not expired when the transaction was submitted. Undefined when
   * the payload is no longer pending, or had expired by then.
   */
  async resolveRecoveredSubmission(uuid: string, signed: SignedResolution, submittedAtMs: number): Promise<Payload | undefined> {
    return this.transition(uuid, { status: 'signed', resolvedAtMs: this.options.clock.now(), signed }, submittedAtMs)
  }

  /** The user rejected in the wallet: pending -> rejected, before expiry only. */
  async reject(uuid: string, walletAdapter: string | undefined): Promise<Payload> {
    return this.resolveByWallet(uuid, { status: 'rejected', resolvedAtMs: this.options.clock.now(), rejectedBy: walletAdapter })
  }

  /**
   * Throws the error for acting on a payload that can no longer be resolved: 404, 410 once expired,
   * 409 once resolved otherwise. Used before slow work (verification, submission) and after a lost race.
   */
  async assertActionable(uuid: string): Promise<Payload> {
    const payload = await this.getForSigning(uuid)
    if (payload.status === 'expired') throw gone('Payload has expired')
    if (payload.status !== 'pending') throw conflict(`Payload is already ${payload.status}`)
    return payload
  }

  /**
   * Changes what a pending multisigned request has collected (a signature or a signer's rejection): `change` computes
   * the next state from the current payload and throws to refuse. Compare-and-set on the payload's row, retried
   * when another signer's change got there first, so that concurrent answers on any number of instances all count.
   * A signature also notifies the webhooks that list payload.signature_added, in the same transaction.
   */
  async changeMultisign(
    uuid: string,
    change: (payload: Payload & { multisign: MultisignState }, nowMs: number) => MultisignState,
    event?: 'payload.signature_added',
  ): Promise<Payload> {
    for (let attempt = 0; attempt < MULTISIGN_ATTEMPTS; attempt++) {
      const payload = await this.assertActionable(uuid)
      const expected = payload.multisign
      if (expected === null) throw conflict('This request is not multisigned')
      const nowMs = this.options.clock.now()
      const next = change({ ...payload, multisign: expected }, nowMs)
      const changed = await this.options.db.transaction().execute(async (tx) => {
        const updated = await payloadsRepository.replaceMultisign(tx, uuid, { expected, next, notExpiredAtMs: nowMs })
        if (updated && event) await this.options.events.emitInTransaction(tx, 'payload.changed', { payload: updated, event })
        return updated
      })
      if (changed) {
        this.options.events.emitCommitted('payload.changed', { payload: changed, event: event ?? 'payload.signature_added' })
        return changed
      }
    }
    throw conflict('Too many signers answered this request at once: try again')
  }

  /** The background sweeper's step: expires up to `batchSize` overdue payloads; returns how many. */
  async expireOverdue(batchSize = 500): Promise<number> {
    const nowMs = this.options.clock.now()
    const expired = await this.options.db.transaction().execute(async (tx) => {
      const moved = await payloadsRepository.expireOverdue(tx, nowMs, batchSize)
      for (const payload of moved) await this.afterTransitionInTx(tx, payload)
      return moved
    })
    for (const payload of expired) this.emit(payload)
    return expired.length
  }

  /** Throws the 409 of a proof that already resolved a payload; the final say is the unique key at resolution. */
  async assertProofUnused(proofKey: string): Promise<void> {
    if ((await payloadProofsRepository.findPayloadUuid(this.options.db, proofKey)) !== undefined) throw conflict(PROOF_ALREADY_USED_MESSAGE)
  }

  /**
   * Records a signAndSubmit transaction's final outcome with its payload.finalized event, in `tx` (which also
   * settles the follow). Returns the payload, or undefined when an outcome was already recorded.
   */
  async recordOutcome(tx: Tx, uuid: string, final: FinalOutcome): Promise<Payload | undefined> {
    const payload = await payloadsRepository.recordOutcome(tx, uuid, final)
    if (payload) await this.options.events.emitInTransaction(tx, 'payload.changed', { payload, event: 'payload.finalized' })
    return payload
  }

  /** After the commit of recordOutcome: live streams and the webhook dispatcher hear of it. */
  announceOutcome(payload: Payload): void {
    this.options.events.emitCommitted('payload.changed', { payload, event: 'payload.finalized' })
  }

  signingUrl(uuid: string): string {
    return signingUrl(this.options.publicUrl, uuid)
  }

  private async resolveByWallet(uuid: string, changes: TransitionChanges): Promise<Payload> {
    const moved = await this.transition(uuid, changes, this.options.clock.now())
    if (moved) return moved
    await this.assertActionable(uuid)
    throw conflict('Payload was resolved by another request')
  }

  private async expireIfDue(payload: Payload): Promise<Payload> {
    const nowMs = this.options.clock.now()
    if (payload.status !== 'pending' || payload.expiresAtMs > nowMs) return payload
    const moved = await this.transition(payload.uuid, { status: 'expired', resolvedAtMs: nowMs })
    return moved ?? (await payloadsRepository.findByUuid(this.options.db, payload.uuid)) ?? payload
  }

  private async transition(uuid: string, changes: TransitionChanges, notExpiredAtMs?: number): Promise<Payload | undefined> {
    const moved = await this.options.db.transaction().execute(async (tx) => {
      const payload = await payloadsRepository.transition(tx, uuid, changes, notExpiredAtMs)
      if (!payload) return undefined
      const proofKey = changes.signed?.proofKey
      if (
        proofKey !== undefined &&
        !(await payloadProofsRepository.record(tx, { proofKey, payloadUuid: uuid, nowMs: changes.resolvedAtMs }))
      ) {
        // Rolls the transition back: the proof resolved another payload first (on this instance or another).
        throw conflict(PROOF_ALREADY_USED_MESSAGE)
      }
      await this.afterTransitionInTx(tx, payload)
      return payload
    })
    if (moved) this.emit(moved)
    return moved
  }

  private async afterTransitionInTx(tx: Tx, payload: Payload): Promise<void> {
    const transition = { payload, event: eventForStatus(payload.status as ResolvedStatus) }
    await this.options.events.emitInTransaction(tx, 'payload.changed', transition)
    // Last, so that the shared counter rows are held for the commit's round trip only (usage-repository.ts).
    const key = {
      projectId: payload.projectId,
      day: utcDay(payload.createdAtMs),
      status: payload.status,
      walletAdapter: payload.walletAdapter ?? '',
    }
    await usageRepository.moveFromPending(tx, key, pickShard(tx))
  }

  private emit(payload: Payload): void {
    this.options.events.emitCommitted('payload.changed', { payload, event: eventForStatus(payload.status as ResolvedStatus) })
  }

  private async prepareMultisign(transaction: Record<string, unknown>): Promise<PreparedMultisign> {
    if (this.options.prepareMultisign === undefined) {
      throw unprocessable([{ field: 'options.multisign', message: 'is not available on this service' }])
    }
    return this.options.prepareMultisign(transaction)
  }

  private connectChallenge(uuid: string, issuedAtMs: number, expiresAtMs: number): string {
    return buildConnectChallenge({
      domain: this.challengeDomain,
      signingUrl: this.signingUrl(uuid),
      uuid,
      nonce: newChallengeNonce(),
      issuedAtMs,
      expiresAtMs,
      network: this.options.network,
    })
  }
}
