// Creating a payload: the request checked against the project's plan, a multisigned transaction completed, a connect
// request's challenge, the write under the month's limit (creations.ts), and the usage warning once a creation
// crosses its threshold.

import { newPayloadUuid } from '../../platform/crypto/ids.js'
import type { Tx } from '../../platform/db/database.js'
import type { KeptResponse } from '../../platform/db/idempotency-keys-repository.js'
import { AppError, conflict, unprocessable } from '../../platform/errors.js'
import { utcMonth } from '../../platform/utc.js'
import { knownNetworkId, networkIdProblem } from '../../platform/xrpl/network-id.js'
import { PLAN_LABELS, type PlanName, usageWarningThreshold } from '../projects/plans.js'
import { usageRepository } from '../projects/usage-repository.js'
import type { PreparedMultisign } from '../signing/multisign/prepare.js'
import { buildConnectChallenge, newChallengeNonce } from '../signing/verify/connect-challenge.js'
import { PayloadCreations } from './creations.js'
import { type Payload, signingUrl } from './model.js'
import { expiresInSeconds, validatePayloadRequest } from './payload-request.js'
import { payloadsRepository } from './repository.js'
import type { CreatePayloadRequest } from './schemas.js'
import type { PayloadServiceOptions } from './service.js'

export interface CreatingProject {
  projectId: string
  plan: PlanName
}

export class PayloadCreator {
  private readonly challengeDomain: string
  private readonly creations: PayloadCreations
  /** Months whose usage warning is known to be recorded: no more checks for them in this process. */
  private readonly warnedMonths = new Set<string>()

  constructor(private readonly options: PayloadServiceOptions) {
    this.challengeDomain = new URL(options.signingOrigin).host
    this.creations = new PayloadCreations(options.db, options.dialect, options.onCreationsWritten)
  }

  /**
   * Creates a payload. `keep` gives the response an Idempotency-Key keeps for it: written with the payload, so that
   * both commit or neither.
   */
  async create(project: CreatingProject, request: CreatePayloadRequest, keep?: (payload: Payload) => KeptResponse): Promise<Payload> {
    const limits = this.options.limits[project.plan]
    const errors = validatePayloadRequest(request, project.plan, limits)
    // A requested NetworkID another network's: no wallet may change it, and no transaction signed with it applies here.
    const networkId = knownNetworkId(this.options.network)
    const problem = networkId === undefined ? undefined : networkIdProblem(networkId, this.options.network, request.transaction?.NetworkID)
    if (problem !== undefined)
      errors.push({ field: 'transaction.NetworkID', message: `${problem}: no transaction signed with it could apply here` })
    // Without a node every approval would answer 502 and the payload could only expire: the application hears it now.
    if (request.type === 'signAndSubmit' && !this.options.canSubmit) {
      errors.push({
        field: 'type',
        message:
          'signAndSubmit needs an XRPL node to submit to, and this service has none configured (XRPL_NODE_URL): create a sign payload and submit the signed transaction yourself',
      })
    }
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
      validatedTxHash: null,
      signers: request.options?.signers ?? null,
      outcome: null,
      deliveredAmount: null,
      multisign: multisign?.state ?? null,
      externalId: request.options?.externalId ?? null,
      metadata: request.options?.metadata ?? null,
      submissionInDoubt: false,
    }
    const month = utcMonth(nowMs)
    const limit = limits.monthlyPayloads
    const warnFrom = usageWarningThreshold(limits)
    const externalId = payload.externalId
    // Written with the other creations of the moment, in one statement or one transaction (creations.ts); the
    // externalId's check runs in the transaction for this payload.
    const result = await this.creations.create(payload, {
      quota: { month, limit, countFrom: warnFrom },
      // Checked before the month's count, so that a repeat is told which payload it repeats even at the limit; and
      // again if the insert found the externalId taken since.
      // Without an externalId there is nothing to check.
      checkExternalId: externalId === null ? undefined : (tx) => this.assertExternalIdFree(tx, project.projectId, externalId),
      keptResponse: keep?.(payload),
    })
    if (!result.created) {
      throw new AppError(
        403,
        `Monthly payload limit reached: the ${PLAN_LABELS[project.plan]} plan allows ${limit} payloads per month; ` +
          `the count starts again on the first day of next month (UTC)${project.plan === 'free' ? ', or upgrade to Pro' : ''}`,
      )
    }
    const used = result.monthCount
    if (used !== undefined && used >= warnFrom) await this.warnOfUsage(project.projectId, month, used, limit, nowMs)
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

  private async prepareMultisign(transaction: Record<string, unknown>): Promise<PreparedMultisign> {
    if (this.options.prepareMultisign === undefined) {
      throw unprocessable([{ field: 'options.multisign', message: 'is not available on this service' }])
    }
    return this.options.prepareMultisign(transaction)
  }

  private connectChallenge(uuid: string, issuedAtMs: number, expiresAtMs: number): string {
    return buildConnectChallenge({
      domain: this.challengeDomain,
      signingUrl: signingUrl(this.options.signingOrigin, uuid),
      uuid,
      nonce: newChallengeNonce(),
      issuedAtMs,
      expiresAtMs,
      network: this.options.network,
    })
  }
}
