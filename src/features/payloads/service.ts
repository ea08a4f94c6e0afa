// Payload operations as the routes, the signing feature and the workers call them: creation (create-payload.ts),
// reads that never show a stale pending payload, and the rules of each change of state; how a change is recorded, in
// one database transaction with what must happen alongside it, is transitions.ts.
import type { ServiceEvents } from '../../events.js'
import type { Clock } from '../../platform/clock.js'
import { isUuid } from '../../platform/crypto/ids.js'
import type { Db, Dialect, Tx } from '../../platform/db/database.js'
import type { KeptResponse } from '../../platform/db/idempotency-keys-repository.js'
import { conflict, gone, notFound, unprocessable } from '../../platform/errors.js'
import type { PlanLimits, PlanName } from '../projects/plans.js'
import { MAX_SIGNER_ENTRIES, type MultisignState } from '../signing/multisign/model.js'
import type { MultisignPreparer } from '../signing/multisign/prepare.js'
import { type CreatingProject, PayloadCreator } from './create-payload.js'
import type { CreationsObserver } from './creations.js'
import { type FinalOutcome, type Payload, type SignedResolution, SUBMISSION_IN_DOUBT, signingUrl } from './model.js'
import { payloadProofsRepository } from './proofs-repository.js'
import { PayloadReads } from './reads.js'
import { type ListPosition, payloadsRepository } from './repository.js'
import type { CreatePayloadRequest, PayloadPage } from './schemas.js'
import { PayloadTransitions, PROOF_ALREADY_USED_MESSAGE } from './transitions.js'
import { payloadTransitionsRepository, type TransitionChanges } from './transitions-repository.js'

export const NOT_FOUND_MESSAGE = 'Payload not found'

export interface PayloadServiceOptions {
  db: Db
  dialect: Dialect
  clock: Clock
  /** 'payload.changed' in the transaction of each state change and after its commit; 'usage.warning' in a creation's. */
  events: ServiceEvents
  /** The signing pages' origin (SIGNING_URL): the base of signingUrl and the connect challenge's domain. */
  signingOrigin: string
  network: string
  limits: Record<PlanName, PlanLimits>
  /** Reads the signer list and completes the transaction of a multisigned request (options.multisign). */
  prepareMultisign?: MultisignPreparer
  /** Whether the service has an XRPL node to submit to (XRPL_NODE_URL): signAndSubmit is refused at creation without one. */
  canSubmit: boolean
  /** Recording the monthly usage warning failed after a creation's commit (the creation stands; the next one tries again). */
  onUsageWarningError?: (error: unknown) => void
  /** Told how each group of creations was written (creations.ts): in one statement or in a transaction. */
  onCreationsWritten?: CreationsObserver
}

/** A cancel or a rejection while a submission is in doubt (transitions-repository.ts): the ledger may have the transaction. */
const SUBMISSION_IN_DOUBT_MESSAGE =
  'A signed transaction for this request may already be on the XRP Ledger: its outcome is being checked, and the request cannot be cancelled or rejected until it is known'
/** Compare-and-set attempts of one change to a multisigned request: more than the signers that can race it. */
const MULTISIGN_ATTEMPTS = MAX_SIGNER_ENTRIES + 8

export class PayloadService {
  private readonly creator: PayloadCreator
  private readonly transitions: PayloadTransitions
  private readonly reads: PayloadReads

  constructor(private readonly options: PayloadServiceOptions) {
    this.creator = new PayloadCreator(options)
    this.reads = new PayloadReads(options.db, options.dialect)
    this.transitions = new PayloadTransitions(options)
  }

  /**
   * Creates a payload. `keep` gives the response an Idempotency-Key keeps for it: written with the payload, so that
   * both commit or neither.
   */
  create(project: CreatingProject, request: CreatePayloadRequest, keep?: (payload: Payload) => KeptResponse): Promise<Payload> {
    return this.creator.create(project, request, keep)
  }

  /**
   * A project's payload, expired first if its time has passed. Read by its uuid alone, the project compared here: as a
   * prepared statement on PostgreSQL, `uuid = $1 and project_id = $2` got a plan that read the project's index (every
   * payload of the project) on a table not yet analyzed, and kept it until autovacuum's first ANALYZE: 0.5 to 3.8 ms a
   * read on a fresh database as the table grew, against 0.1 ms by the primary key (docs/performance.md, "Hot queries").
   */
  async getForProject(projectId: string, uuid: string): Promise<Payload> {
    const payload = await this.reads.read(uuid)
    if (payload?.projectId !== projectId) throw notFound(NOT_FOUND_MESSAGE)
    return this.transitions.expireIfDue(payload)
  }

  async list(projectId: string, page: PayloadPage): Promise<Payload[]> {
    const payloads = await payloadsRepository.listForProject(this.options.db, projectId, {
      ...page,
      after: await this.cursorOf(projectId, page),
    })
    return Promise.all(payloads.map((payload) => this.transitions.expireIfDue(payload)))
  }

  /** Where a cursor page starts: after the payload `after` names, which must be one of the project's (422 otherwise). */
  private async cursorOf(projectId: string, page: PayloadPage): Promise<ListPosition | undefined> {
    if (page.after === undefined) return undefined
    if (page.offset !== 0) throw unprocessable([{ field: 'offset', message: 'must be 0 or left out when after is given' }])
    const position = isUuid(page.after) ? await payloadsRepository.listPosition(this.options.db, projectId, page.after) : undefined
    if (!position) throw unprocessable([{ field: 'after', message: "must be the uuid of one of this project's payloads" }])
    return position
  }

  /** The payload as it is now, without expiring it (a payload whose time has passed stays as it is); undefined when there is none. */
  peek(uuid: string): Promise<Payload | undefined> {
    return this.reads.read(uuid)
  }

  /** Any payload by uuid (the signing page's capability), expired first if its time has passed. */
  async getForSigning(uuid: string): Promise<Payload> {
    const payload = await this.reads.read(uuid)
    if (!payload) throw notFound(NOT_FOUND_MESSAGE)
    return this.transitions.expireIfDue(payload)
  }

  /** DELETE /payloads/{uuid}: the application cancels a pending payload, which becomes expired. */
  async cancel(projectId: string, uuid: string): Promise<Payload> {
    const payload = await this.getForProject(projectId, uuid)
    if (payload.status !== 'pending') throw conflict(`Payload is already ${payload.status}`)
    const moved = await this.transitions.transition(uuid, { status: 'expired', resolvedAtMs: this.options.clock.now() })
    if (moved) return moved
    // Still pending: a submission of its is in doubt (the move waits for the claim's release, transitions-repository.ts).
    const now = await payloadsRepository.findByUuid(this.options.db, uuid)
    if (now?.status === 'pending') throw conflict(SUBMISSION_IN_DOUBT_MESSAGE, SUBMISSION_IN_DOUBT)
    throw conflict(`Payload is already ${now?.status ?? 'resolved'}`)
  }

  /**
   * The wallet approved and the service verified it: pending -> signed, before expiry; a signAndSubmit transaction's,
   * given `submittedAtMs`, if the payload had not expired when it was submitted (the node's answer may arrive after the
   * expiry: the ledger has the transaction).
   */
  async resolveSigned(uuid: string, signed: SignedResolution, submittedAtMs?: number): Promise<Payload> {
    const nowMs = this.options.clock.now()
    return this.resolveByWallet(uuid, { status: 'signed', resolvedAtMs: nowMs, signed }, submittedAtMs ?? nowMs)
  }

  /**
   * A submission recovered after the instance that made it died (submission-recovery.ts): pending -> signed, with the
   * same events as resolveSigned, if the payload had not expired when the transaction was submitted. Undefined when
   * the payload is no longer pending, or had expired by then.
   */
  async resolveRecoveredSubmission(uuid: string, signed: SignedResolution, submittedAtMs: number): Promise<Payload | undefined> {
    return this.transitions.transition(
      uuid,
      { status: 'signed', resolvedAtMs: this.options.clock.now(), signed },
      { notExpiredAtMs: submittedAtMs },
    )
  }

  /** The user rejected in the wallet: pending -> rejected, before expiry only. */
  async reject(uuid: string, walletAdapter: string | undefined): Promise<Payload> {
    return this.resolveByWallet(uuid, { status: 'rejected', resolvedAtMs: this.options.clock.now(), rejectedBy: walletAdapter })
  }

  /**
   * The user rejected a request with one signer: pending -> rejected, before expiry only, in one conditional move with no
   * read before it (the common rejection). Undefined when the payload is multisigned (each of its signers rejects for
   * themself) or cannot be rejected: the caller reads it to find out which.
   */
  async rejectSingleSigner(uuid: string, walletAdapter: string | undefined): Promise<Payload | undefined> {
    const nowMs = this.options.clock.now()
    return this.transitions.transition(
      uuid,
      { status: 'rejected', resolvedAtMs: nowMs, rejectedBy: walletAdapter },
      { notExpiredAtMs: nowMs, notMultisigned: true },
    )
  }

  /**
   * Throws the error for acting on a payload that can no longer be resolved: 404, 410 once expired,
   * 409 once resolved otherwise. Used before slow work (verification, submission) and after a lost race.
   */
  async assertActionable(uuid: string): Promise<Payload> {
    const payload = await this.getForSigning(uuid)
    // Past its expiry and still pending only while a submission of its is in doubt: expired for any new action.
    if (payload.status === 'expired' || (payload.status === 'pending' && payload.expiresAtMs <= this.options.clock.now())) {
      throw gone('Payload has expired')
    }
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
      const changed = await this.transitions.replaceMultisign(uuid, { expected, next, nowMs }, event)
      if (changed) return changed
    }
    throw conflict('Too many signers answered this request at once: try again')
  }

  /** The background sweeper's step: expires up to `batchSize` overdue payloads; returns how many. */
  expireOverdue(batchSize = 500): Promise<number> {
    return this.transitions.expireOverdue(batchSize)
  }

  /** Whether a payload other than `uuid` holds the proof (it resolved that payload, or counts for its outcome). */
  isProofHeldByAnother(uuid: string, proofKey: string): Promise<boolean> {
    return payloadProofsRepository.heldByAnother(this.options.db, proofKey, uuid)
  }

  /** Throws the 409 of a proof that already resolved a payload; the final say is the unique key at resolution. */
  async assertProofUnused(proofKey: string): Promise<void> {
    if ((await payloadProofsRepository.findPayloadUuid(this.options.db, proofKey)) !== undefined) throw conflict(PROOF_ALREADY_USED_MESSAGE)
  }

  /**
   * Records a signAndSubmit transaction's final outcome with its payload.finalized event, in `tx` (which also
   * settles the follow). Returns the payload, or undefined when an outcome was already recorded.
   */
  recordOutcome(tx: Tx, uuid: string, final: FinalOutcome): Promise<Payload | undefined> {
    return this.transitions.recordOutcome(tx, uuid, final)
  }

  /** After the commit of recordOutcome: live streams and the webhook dispatcher hear of it. */
  announceOutcome(payload: Payload): void {
    this.transitions.announceOutcome(payload)
  }

  /**
   * After a submission's claim was kept (in doubt) or released, committed: live streams read the payload again (a
   * signing page open on it learns that approving waits, or no longer does).
   */
  announceSubmission(uuid: string): void {
    this.options.events.emitCommitted('payload.submission', uuid)
  }

  signingUrl(uuid: string): string {
    return signingUrl(this.options.signingOrigin, uuid)
  }

  private async resolveByWallet(uuid: string, changes: TransitionChanges, notExpiredAtMs = this.options.clock.now()): Promise<Payload> {
    const moved = await this.transitions.transition(uuid, changes, { notExpiredAtMs })
    if (moved) return moved
    await this.assertActionable(uuid)
    if (await payloadTransitionsRepository.submissionInDoubt(this.options.db, uuid))
      throw conflict(SUBMISSION_IN_DOUBT_MESSAGE, SUBMISSION_IN_DOUBT)
    throw conflict('Payload was resolved by another request')
  }
}
