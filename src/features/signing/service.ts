// The wallet-facing side of payloads: what the signing page shows, and approving or rejecting. The service never
// believes the browser: every approval is verified here, and signAndSubmit transactions are submitted from here.

import type { Logger } from 'pino'
import { decode } from 'ripple-binary-codec'
import { isValidClassicAddress } from 'xrpl'
import type { Clock } from '../../platform/clock.js'
import type { Db } from '../../platform/db/database.js'
import { AppError, badGateway, conflict, type FieldError, forbidden, tooManyRequests, unprocessable } from '../../platform/errors.js'
import type { RateLimiter } from '../../platform/rate-limit/rate-limiter.js'
import { type TransactionDefaults, type XrplNode, XrplNodeUnavailableError } from '../../platform/xrpl/xrpl-node.js'
import type { Payload, SignedResolution } from '../payloads/model.js'
import type { PayloadService } from '../payloads/service.js'
import { logoPath } from '../projects/project-branding.js'
import { projectsRepository } from '../projects/repository.js'
import { combineSignatures } from './multisign/combine.js'
import { hasQuorum, type MultisignState, quorumReachable, withoutSignature, withRejection, withSignature } from './multisign/model.js'
import { verifyMultisignSignature } from './multisign/verify-multisign-signature.js'
import { submissionClaimsRepository } from './submission-claims-repository.js'
import { verifyConnectTransaction } from './verify/connect-challenge.js'
import { SIGNED_FIELD } from './verify/signed-blob.js'
import { verifyMessageSignature } from './verify/verify-message-signature.js'
import { type VerifiedTransaction, verifySignedTransaction } from './verify/verify-signed-transaction.js'
import { verifyXamanSignIn } from './verify/verify-xaman-sign-in.js'
import { isDeveloperWalletAllowed, type SignView, type SignViewContext, toSignView, type WalletAdapterName } from './view.js'
import { xamanSignRequestsRepository } from './xaman/sign-requests-repository.js'
import { type XamanClient, type XamanSignRequestBody, XamanUnavailableError } from './xaman/xaman-client.js'

/** What a wallet sends to approve (POST /api/v1/sign/{uuid}/approve); which fields a type needs is checked here. */
export interface Approval {
  walletAdapter: WalletAdapterName
  signedTransaction?: string
  publicKey?: string
  signature?: string
}

export interface SigningServiceOptions {
  db: Db
  clock: Clock
  payloads: PayloadService
  /** XRPL_NETWORK: shown to users; mainnet turns the developer wallet off. */
  network: string
  /** Undefined without XRPL_NODE_URL: signAndSubmit, RegularKey and multisignature checks then answer 502. */
  xrplNode: XrplNode | undefined
  /** Undefined without XAMAN_API_KEY: the Xaman wallet is not offered. */
  xaman: XamanClient | undefined
  /** XRPL_EXPLORER_URL: a transaction's page with {txHash}; undefined when the network has no explorer. */
  explorerTemplate: string | undefined
  /** Paces the checks of Xaman results. */
  rateLimiter: RateLimiter
  logger: Logger
}

/** What the wallet-facing API says when the XRP Ledger cannot be asked; why is in the operator's log. */
export const LEDGER_UNAVAILABLE = 'The XRP Ledger cannot be reached from this service right now'

/** A submission holds its claim this long at most: longer than connecting and submitting can take (10 s each). */
const SUBMISSION_LEASE_MS = 60_000
/** Each Xaman request costs the operator's Xaman quota; a user needs one, a few retries at most. */
const MAX_XAMAN_REQUESTS_PER_PAYLOAD = 5
/** Xaman is asked for a payload's results at most this often, however many pages poll it. */
const XAMAN_CHECK_INTERVAL_MS = 2000

export class SigningService {
  /** Background follows of submitted transactions to validation; stop() waits for them. */
  private readonly followers = new Set<Promise<void>>()
  /** Xaman checks under way, one per payload, so that concurrent page polls share one. */
  private readonly xamanChecks = new Map<string, Promise<boolean>>()
  private stopping = false

  constructor(private readonly options: SigningServiceOptions) {}

  get xamanEnabled(): boolean {
    return this.options.xaman !== undefined
  }

  /** GET /api/v1/sign/{uuid}: the request, and its outcome once resolved. A pending Xaman request's result is fetched first. */
  async view(uuid: string): Promise<SignView> {
    let payload = await this.options.payloads.getForSigning(uuid)
    if (payload.status === 'pending' && this.options.xaman !== undefined && (await this.checkXaman(payload))) {
      payload = await this.options.payloads.getForSigning(uuid)
    }
    const { db } = this.options
    const [project, logoHash] = await Promise.all([
      projectsRepository.findById(db, payload.projectId),
      projectsRepository.findLogoHash(db, payload.projectId),
    ])
    const shown: SignViewContext['project'] = { name: project?.displayName ?? project?.name ?? '' }
    // An unverified website is never shown: anyone can type any address into a dashboard.
    if (project?.website && project.website.verifiedAtMs !== null) shown.website = project.website.url
    if (logoHash !== undefined) shown.logoUrl = logoPath(payload.projectId, logoHash)
    return toSignView(payload, {
      project: shown,
      network: this.options.network,
      xamanEnabled: this.xamanEnabled,
      explorerTemplate: this.options.explorerTemplate,
    })
  }

  /**
   * Verifies an approval and resolves the payload as signed. In order: 404/410/409 for a payload that cannot be
   * resolved; 403 for the developer wallet on mainnet; 422 when the approval does not verify; the ledger's word on a
   * RegularKey or a multisignature quorum; for signAndSubmit, the submission. Nothing changes until all have passed.
   */
  async approve(uuid: string, approval: Approval): Promise<Payload> {
    const payload = await this.options.payloads.assertActionable(uuid)
    if (approval.walletAdapter === 'developer' && !isDeveloperWalletAllowed(this.options.network)) {
      throw forbidden('The developer wallet is turned off on mainnet: approve with a real wallet')
    }
    switch (payload.type) {
      case 'signMessage':
        return this.resolveMessage(payload, approval)
      case 'connect':
        return this.resolveConnect(payload, approval)
      case 'sign':
      case 'signAndSubmit':
        return this.resolveTransaction(payload, approval)
    }
  }

  /**
   * POST /api/v1/sign/{uuid}/reject. A multisigned request is rejected by each signer, who names their account; it
   * is rejected as a whole once the signers left can no longer reach the quorum.
   */
  async reject(uuid: string, walletAdapter: WalletAdapterName | undefined, signerAccount?: string): Promise<Payload> {
    const payload = await this.options.payloads.getForSigning(uuid)
    if (payload.multisign === null) {
      if (signerAccount !== undefined) {
        throw unprocessable([
          { field: 'signerAccount', message: 'is only for multisigned requests, which each signer rejects for themself' },
        ])
      }
      return this.options.payloads.reject(uuid, walletAdapter)
    }
    if (signerAccount === undefined) {
      throw unprocessable([{ field: 'signerAccount', message: 'is required: each signer of a multisigned request rejects for themself' }])
    }
    const recorded = await this.options.payloads.changeMultisign(uuid, (current, nowMs) =>
      withRejection(current.multisign, { account: signerAccount, walletAdapter: walletAdapter ?? null, nowMs }),
    )
    if (recorded.multisign !== null && quorumReachable(recorded.multisign)) return recorded
    return this.options.payloads.reject(uuid, walletAdapter)
  }

  /** GET /api/v1/sign/{uuid}/account/{address}: what a Ledger device needs to complete the requested transaction. */
  async transactionDefaults(uuid: string, address: string): Promise<TransactionDefaults> {
    const payload = await this.options.payloads.assertActionable(uuid)
    if (payload.type !== 'sign' && payload.type !== 'signAndSubmit') {
      throw unprocessable([{ field: 'type', message: `${payload.type} payloads carry no transaction to complete` }])
    }
    if (!isValidClassicAddress(address)) throw unprocessable([{ field: 'address', message: 'is not a classic XRP Ledger address' }])
    const node = this.requireNode('look up the account')
    const defaults = await this.askNode(() => node.transactionDefaults(address))
    if (defaults === null) {
      throw unprocessable([{ field: 'address', message: `${address} does not exist on the ledger: it has never been funded` }])
    }
    return defaults
  }

  /** POST /api/v1/sign/{uuid}/xaman: creates the Xaman sign request; its result is fetched by view(). */
  async startXaman(uuid: string): Promise<{ qrUrl: string; deepLink: string }> {
    const xaman = this.options.xaman
    if (xaman === undefined) throw new AppError(404, 'Xaman is not configured on this service')
    const payload = await this.options.payloads.assertActionable(uuid)
    if (payload.type === 'signMessage') {
      throw unprocessable(
        [{ field: 'walletAdapter', message: 'Xaman signs transactions and sign-ins, not free-form messages: choose another wallet' }],
        'Xaman cannot answer this request',
      )
    }
    if ((await xamanSignRequestsRepository.countForPayload(this.options.db, uuid)) >= MAX_XAMAN_REQUESTS_PER_PAYLOAD) {
      const secondsLeft = Math.max(1, Math.ceil((payload.expiresAtMs - this.options.clock.now()) / 1000))
      throw tooManyRequests(
        `This request already has ${MAX_XAMAN_REQUESTS_PER_PAYLOAD} Xaman sign requests: scan one of those, or choose another wallet`,
        secondsLeft,
      )
    }
    const project = await projectsRepository.findById(this.options.db, payload.projectId)
    const signingUrl = this.options.payloads.signingUrl(uuid)
    const body: XamanSignRequestBody = {
      // A connect is a Xaman SignIn: the user's signature reveals the account and authorizes nothing.
      txjson: payload.type === 'connect' ? { TransactionType: 'SignIn' } : (payload.transaction as Record<string, unknown>),
      // The service submits signAndSubmit itself, after verifying; Xaman only signs. Afterwards the user comes back to
      // the signing page, which shows the outcome and follows the app's return URL.
      options: { submit: false, return_url: { app: signingUrl, web: signingUrl } },
      custom_meta: { instruction: payload.customInstructions ?? `${project?.name ?? 'An app'} asks you to approve this request.` },
    }
    let created: Awaited<ReturnType<XamanClient['createSignRequest']>>
    try {
      created = await xaman.createSignRequest(body)
    } catch (error) {
      if (error instanceof XamanUnavailableError) throw badGateway(`${error.message}; try again, or choose another wallet`)
      throw error
    }
    await xamanSignRequestsRepository.insert(this.options.db, {
      xamanUuid: created.uuid,
      payloadUuid: uuid,
      createdAtMs: this.options.clock.now(),
    })
    return { qrUrl: created.qrUrl, deepLink: created.deepLink }
  }

  /** Ends the follows of submitted transactions; call after closing the XRPL node client, which ends their waits. */
  async stop(): Promise<void> {
    this.stopping = true
    await Promise.all([...this.followers, ...this.xamanChecks.values()])
  }

  private async resolveMessage(payload: Payload, approval: Approval): Promise<Payload> {
    const { publicKey, signature } = requireFields(approval, ['publicKey', 'signature'], payload.type)
    const verified = verifyMessageSignature(payload.message as string, publicKey, signature)
    return this.options.payloads.resolveSigned(payload.uuid, { walletAdapter: approval.walletAdapter, ...verified })
  }

  /** A signature over the challenge text, or (wallets that sign only transactions: Ledger) the connect transaction. */
  private async resolveConnect(payload: Payload, approval: Approval): Promise<Payload> {
    const challenge = payload.challenge as string
    if (approval.signedTransaction !== undefined) {
      const { signedTransaction } = requireFields(approval, ['signedTransaction'], payload.type)
      const verified = verifyConnectTransaction(challenge, signedTransaction)
      const { TxnSignature } = decode(verified.txBlob) as { TxnSignature: string }
      return this.options.payloads.resolveSigned(payload.uuid, {
        walletAdapter: approval.walletAdapter,
        signerAddress: verified.signerAddress,
        publicKey: verified.publicKey,
        signature: TxnSignature.toUpperCase(),
        txBlob: verified.txBlob,
      })
    }
    const { publicKey, signature } = requireFields(approval, ['publicKey', 'signature'], payload.type)
    const verified = verifyMessageSignature(challenge, publicKey, signature)
    return this.options.payloads.resolveSigned(payload.uuid, { walletAdapter: approval.walletAdapter, ...verified })
  }

  private async resolveTransaction(payload: Payload, approval: Approval): Promise<Payload> {
    const { signedTransaction } = requireFields(approval, ['signedTransaction'], payload.type)
    if (payload.multisign !== null) return this.approveMultisigned(payload, approval.walletAdapter, signedTransaction)
    const verified = verifySignedTransaction(payload.transaction as Record<string, unknown>, signedTransaction)
    await this.checkAuthority(verified)
    const signed: SignedResolution = {
      walletAdapter: approval.walletAdapter,
      signerAddress: verified.signerAddress,
      txHash: verified.txHash,
      txBlob: verified.txBlob,
    }
    if (payload.type === 'sign') return this.options.payloads.resolveSigned(payload.uuid, signed)
    return this.submitAndResolve(payload, verified, signed)
  }

  /**
   * One signer's signature of a multisigned request: verified, recorded (payload.signature_added), and, when it
   * completes the quorum, combined with the others into the transaction that resolves the request (and, for
   * signAndSubmit, is submitted). A request left at its quorum but pending (a crash, a refused submission) is completed
   * by the next approval.
   */
  private async approveMultisigned(payload: Payload, walletAdapter: string, signedTransaction: string): Promise<Payload> {
    if (payload.multisign !== null && hasQuorum(payload.multisign)) return this.completeMultisigned(payload, walletAdapter)
    const signature = verifyMultisignSignature(payload.transaction as Record<string, unknown>, signedTransaction)
    const recorded = await this.options.payloads.changeMultisign(
      payload.uuid,
      (current, nowMs) => withSignature(current.multisign, { ...signature, walletAdapter, nowMs }),
      'payload.signature_added',
    )
    if (recorded.multisign === null || !hasQuorum(recorded.multisign)) return recorded
    try {
      return await this.completeMultisigned(recorded, walletAdapter)
    } catch (error) {
      // The ledger refused the combined transaction: the signature that completed it is taken back, so that the
      // request shows what it still needs and this signer can sign again.
      if (error instanceof AppError && error.statusCode === 422) {
        await this.options.payloads
          .changeMultisign(payload.uuid, (current) => withoutSignature(current.multisign, signature.account))
          .catch((undo: unknown) => this.options.logger.warn({ err: undo, uuid: payload.uuid }, 'could not take back a multisignature'))
      }
      throw error
    }
  }

  private async completeMultisigned(payload: Payload, walletAdapter: string): Promise<Payload> {
    const txBlob = combineSignatures(payload.multisign as MultisignState)
    // The combined transaction is checked as any multisigned one: each signature against its signer.
    const verified = verifySignedTransaction(payload.transaction as Record<string, unknown>, txBlob)
    const signed: SignedResolution = {
      walletAdapter,
      signerAddress: verified.signerAddress,
      txHash: verified.txHash,
      txBlob: verified.txBlob,
    }
    if (payload.type === 'sign') return this.options.payloads.resolveSigned(payload.uuid, signed)
    return this.submitAndResolve(payload, verified, signed)
  }

  /** The ledger's word where the blob alone cannot say whether the signature speaks for the Account. */
  private async checkAuthority(verified: VerifiedTransaction): Promise<void> {
    const account = verified.signerAddress
    if (verified.requiresRegularKeyCheck) {
      const node = this.requireNode("check that the signing key is the account's RegularKey")
      if (!(await this.askNode(() => node.isRegularKey(account, verified.signingPubKey)))) {
        throw unprocessable(
          [
            {
              field: `${SIGNED_FIELD}.SigningPubKey`,
              message: `is neither the master key nor the RegularKey of ${account} in the validated ledger`,
            },
          ],
          'The signed transaction does not verify',
        )
      }
    }
    if (verified.multisigned) {
      const node = this.requireNode("check the signers against the account's signer list")
      if (!(await this.askNode(() => node.hasSignerQuorum(account, verified.signerAccounts)))) {
        throw unprocessable(
          [
            {
              field: `${SIGNED_FIELD}.Signers`,
              message: `${verified.signerAccounts.join(', ')} are not on the signer list of ${account} or do not reach its quorum`,
            },
          ],
          'The signed transaction does not verify',
        )
      }
    }
  }

  /**
   * Submits the verified blob and resolves the payload when the ledger accepted it (tes, ter, tec: see
   * isAcceptedEngineResult). One blob per payload is submitted at a time (a claim in the database, across instances);
   * the same blob twice is harmless, the ledger applies it once. A refusal leaves the payload pending.
   */
  private async submitAndResolve(payload: Payload, verified: VerifiedTransaction, signed: SignedResolution): Promise<Payload> {
    const node = this.requireNode('submit the transaction')
    const { db, clock, payloads } = this.options
    const claim = { payloadUuid: payload.uuid, txHash: verified.txHash }
    const nowMs = clock.now()
    if (!(await submissionClaimsRepository.claim(db, { ...claim, nowMs, leaseExpiresAtMs: nowMs + SUBMISSION_LEASE_MS }))) {
      await payloads.assertActionable(payload.uuid)
      throw conflict('Another signed transaction for this request is being submitted now; wait for its outcome')
    }
    try {
      const result = await this.askNode(() => node.submit(verified.txBlob))
      if (!result.accepted) {
        // A racing approval of the same blob may have resolved the payload meanwhile, and made this submission a
        // duplicate the ledger refuses (tefPAST_SEQ): that is a 409, not a refusal.
        await payloads.assertActionable(payload.uuid)
        throw new AppError(422, `The XRP Ledger refused the transaction with ${result.engineResult}: ${result.engineResultMessage}`, [
          {
            field: SIGNED_FIELD,
            message: `${result.engineResult}: ${result.engineResultMessage}. Nothing was applied; the request is still pending, sign again`,
          },
        ])
      }
      let resolved: Payload
      try {
        resolved = await payloads.resolveSigned(payload.uuid, { ...signed, submitEngineResult: result.engineResult })
      } catch (error) {
        if (error instanceof AppError && error.statusCode === 410) {
          // The ledger took the transaction, but the payload expired while it was being submitted.
          this.options.logger.error({ uuid: payload.uuid, txHash: verified.txHash }, 'transaction submitted as its payload expired')
        }
        throw error
      }
      this.followToValidation(payload.uuid, verified)
      return resolved
    } finally {
      await submissionClaimsRepository.release(db, claim.payloadUuid, claim.txHash)
    }
  }

  /** Records the final TransactionResult and ledger index once the transaction is in a validated ledger. */
  private followToValidation(uuid: string, verified: VerifiedTransaction): void {
    const node = this.options.xrplNode
    if (node === undefined || this.stopping) return
    const lastLedgerSequence = verified.transaction.LastLedgerSequence
    const follower = (async () => {
      try {
        const result = await node.waitForValidation(verified.txHash, {
          lastLedgerSequence: typeof lastLedgerSequence === 'number' ? lastLedgerSequence : undefined,
        })
        if (result !== null) await this.options.payloads.recordValidation(uuid, result)
        else this.options.logger.info({ uuid, txHash: verified.txHash }, 'submitted transaction not seen in a validated ledger')
      } catch (error) {
        this.options.logger.warn({ err: error, uuid, txHash: verified.txHash }, 'could not follow the transaction to validation')
      }
    })()
    this.followers.add(follower)
    void follower.finally(() => this.followers.delete(follower))
  }

  /**
   * Applies the outcome of the payload's Xaman requests, at most every XAMAN_CHECK_INTERVAL_MS, one check at a time.
   * Resolves whether a Xaman request was settled (the payload may have changed).
   */
  private async checkXaman(payload: Payload): Promise<boolean> {
    const running = this.xamanChecks.get(payload.uuid)
    if (running !== undefined) return running
    if (this.stopping) return false
    const gate = await this.options.rateLimiter.consume(`xaman-check:${payload.uuid}`, 1, XAMAN_CHECK_INTERVAL_MS)
    if (!gate.allowed) return false
    const check = this.applyXamanOutcomes(payload).finally(() => this.xamanChecks.delete(payload.uuid))
    this.xamanChecks.set(payload.uuid, check)
    return check
  }

  private async applyXamanOutcomes(payload: Payload): Promise<boolean> {
    const { db, clock, logger } = this.options
    const xaman = this.options.xaman as XamanClient
    let settled = false
    for (const xamanUuid of await xamanSignRequestsRepository.listUnsettled(db, payload.uuid)) {
      let state: Awaited<ReturnType<XamanClient['getSignRequest']>>
      try {
        state = await xaman.getSignRequest(xamanUuid)
      } catch (error) {
        logger.warn({ err: error, uuid: payload.uuid, xamanUuid }, 'could not read a Xaman sign request')
        continue
      }
      const userRejected = state.resolved && !state.signed && !state.cancelled && !state.expired
      if (!state.signed && !userRejected && !state.cancelled && !state.expired) continue
      let resolvedPayload = false
      try {
        if (state.signed) await this.resolveFromXaman(payload, state.hex, state.account)
        else if (userRejected) await this.options.payloads.reject(payload.uuid, 'xaman')
        resolvedPayload = state.signed || userRejected
      } catch (error) {
        // The ledger or node could not be asked: the next check tries again. Anything else is final for this request.
        if (error instanceof AppError && error.statusCode === 502) continue
        if (!(error instanceof AppError)) throw error
        logger.warn({ uuid: payload.uuid, xamanUuid, error: error.message, details: error.details }, 'Xaman result not applied')
      }
      await xamanSignRequestsRepository.markSettled(db, xamanUuid, clock.now())
      settled = true
      // The payload is no longer pending: its other Xaman requests have nothing left to decide.
      if (resolvedPayload) break
    }
    return settled
  }

  private async resolveFromXaman(payload: Payload, hex: string | null, account: string | null): Promise<void> {
    if (hex === null) throw unprocessable([{ field: 'xaman.response.hex', message: 'is missing from a signed Xaman request' }])
    if (payload.type === 'connect') {
      const verified = verifyXamanSignIn(hex, account)
      await this.options.payloads.resolveSigned(payload.uuid, { walletAdapter: 'xaman', ...verified })
      return
    }
    await this.approve(payload.uuid, { walletAdapter: 'xaman', signedTransaction: hex })
  }

  private requireNode(purpose: string): XrplNode {
    if (this.options.xrplNode !== undefined) return this.options.xrplNode
    // The end user (who reads this on the signing page) cannot change the service's settings: the log names it.
    this.options.logger.error({ purpose }, `no XRPL node is configured (XRPL_NODE_URL), so the service cannot ${purpose}`)
    throw badGateway(`${LEDGER_UNAVAILABLE}, so it cannot ${purpose}; the request is still pending, try again later`)
  }

  private async askNode<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request()
    } catch (error) {
      if (error instanceof XrplNodeUnavailableError) {
        this.options.logger.warn({ err: error }, 'the XRPL node could not be reached')
        throw badGateway(`${LEDGER_UNAVAILABLE}; the request is still pending, try again`)
      }
      throw error
    }
  }
}

/** The approval fields a payload type needs, present; the fields of the other kind of approval, absent. */
function requireFields<K extends 'signedTransaction' | 'publicKey' | 'signature'>(
  approval: Approval,
  needed: K[],
  type: string,
): Record<K, string> {
  const errors: FieldError[] = []
  for (const name of needed) {
    if (approval[name] === undefined) errors.push({ field: name, message: `is required to approve a ${type} request` })
  }
  for (const name of ['signedTransaction', 'publicKey', 'signature'] as const) {
    if (!(needed as string[]).includes(name) && approval[name] !== undefined) {
      errors.push({ field: name, message: `is not part of this approval: send ${needed.join(' and ')}` })
    }
  }
  if (errors.length > 0) throw unprocessable(errors)
  return Object.fromEntries(needed.map((name) => [name, approval[name]])) as Record<K, string>
}
