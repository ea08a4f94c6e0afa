// The wallet-facing side of payloads, one operation per file: reading a request (read-request.ts), approving and
// rejecting (approve/), what a Ledger device needs (transaction-defaults.ts), and Xaman (xaman/). This class only
// holds what they share. The service never believes the browser: every approval is verified, and signAndSubmit
// transactions are submitted by the service.
import type { Dialect } from '../../platform/db/database.js'
import type { TransactionDefaults } from '../../platform/xrpl/xrpl-node.js'
import type { Payload } from '../payloads/model.js'
import type { Approval } from './approve/approval.js'
import { approve, reject } from './approve/approve.js'
import type { SigningDeps } from './deps.js'
import { readSignRequest } from './read-request.js'
import type { SignView } from './schemas.js'
import { SubmissionRecovery } from './submission-recovery.js'
import { transactionDefaults } from './transaction-defaults.js'
import type { WalletAdapterName } from './view.js'
import { XamanOutcomes } from './xaman/outcome-worker.js'
import { startXamanSignRequest } from './xaman/start-sign-request.js'

export type { Approval } from './approve/approval.js'

export interface SigningServiceOptions extends SigningDeps {
  dialect: Dialect
}

export class SigningService {
  /** Learns the outcome of Xaman sign requests; the xaman-outcomes worker runs it (main.ts). */
  readonly xamanOutcomes: XamanOutcomes

  /** Resolves submissions whose instance stopped before the node's answer; the transaction-follower worker runs it. */
  readonly submissions: SubmissionRecovery

  constructor(private readonly deps: SigningServiceOptions) {
    this.xamanOutcomes = new XamanOutcomes(deps)
    this.submissions = new SubmissionRecovery(deps)
  }

  get xamanEnabled(): boolean {
    return this.deps.xaman !== undefined
  }

  /** GET /api/v1/sign/{uuid}: the request, and its outcome once resolved. */
  view(uuid: string): Promise<SignView> {
    return readSignRequest(this.deps, uuid)
  }

  /** POST /api/v1/sign/{uuid}/approve. */
  approve(uuid: string, approval: Approval): Promise<Payload> {
    return approve(this.deps, uuid, approval)
  }

  /** POST /api/v1/sign/{uuid}/reject (`signerAccount`: a signer of a multisigned request). */
  reject(uuid: string, walletAdapter: WalletAdapterName | undefined, signerAccount?: string): Promise<Payload> {
    return reject(this.deps, uuid, walletAdapter, signerAccount)
  }

  /** GET /api/v1/sign/{uuid}/account/{address}. */
  transactionDefaults(uuid: string, address: string): Promise<TransactionDefaults> {
    return transactionDefaults(this.deps, uuid, address)
  }

  /** POST /api/v1/sign/{uuid}/xaman. */
  startXaman(uuid: string): Promise<{ qrUrl: string; deepLink: string }> {
    return startXamanSignRequest(this.deps, uuid)
  }
}
