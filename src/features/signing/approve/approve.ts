// POST /api/v1/sign/{uuid}/approve and /reject, and the approval of a Xaman result: the checks every approval passes
// first, then the verification of its kind (message, connect, transaction).
import { forbidden, unprocessable } from '../../../platform/errors.js'
import type { Payload } from '../../payloads/model.js'
import type { SigningDeps } from '../deps.js'
import { quorumReachable, withRejection } from '../multisign/model.js'
import { isDeveloperWalletAllowed, type WalletAdapterName } from '../view.js'
import type { Approval } from './approval.js'
import { approveConnect } from './approve-connect.js'
import { approveMessage } from './approve-message.js'
import { approveTransaction } from './approve-transaction.js'

const XAMAN_FROM_BROWSER = 'xaman is not accepted here: Xaman results reach the service from Xaman itself; scan the QR code instead'

/**
 * Verifies an approval from a wallet in the browser and resolves the payload as signed. In order: 404/410/409 for a
 * payload that cannot be resolved; 403 for the developer wallet on mainnet; 422 for the `xaman` label (Xaman's
 * results come from Xaman, server to server, never through this route); 422 when the approval does not verify or
 * its signer is not allowed; the ledger's word on the master key, a RegularKey or a multisignature quorum; 409 when
 * its proof already resolved another payload; for signAndSubmit, the submission. Nothing changes until all passed.
 */
export async function approve(deps: SigningDeps, uuid: string, approval: Approval): Promise<Payload> {
  const payload = await deps.payloads.assertActionable(uuid)
  assertBrowserWallet(approval.walletAdapter, deps.network)
  return approveVerified(deps, payload, approval)
}

/**
 * POST /api/v1/sign/{uuid}/reject: `xaman` is not a label a browser may give (the user rejects in Xaman itself). A
 * multisigned request is rejected by each signer, who names their account; it is rejected as a whole once the signers
 * left can no longer reach the quorum.
 */
export async function reject(
  deps: SigningDeps,
  uuid: string,
  walletAdapter: WalletAdapterName | undefined,
  signerAccount?: string,
): Promise<Payload> {
  if (walletAdapter === 'xaman') throw unprocessable([{ field: 'walletAdapter', message: XAMAN_FROM_BROWSER }])
  if (signerAccount === undefined) {
    const rejected = await deps.payloads.rejectSingleSigner(uuid, walletAdapter)
    if (rejected) return rejected
  }
  // A multisigned request, or one that cannot be rejected: read, to act as a signer or to say why not.
  const payload = await deps.payloads.getForSigning(uuid)
  if (payload.multisign === null) {
    if (signerAccount !== undefined) {
      throw unprocessable([{ field: 'signerAccount', message: 'is only for multisigned requests, which each signer rejects for themself' }])
    }
    return deps.payloads.reject(uuid, walletAdapter)
  }
  if (signerAccount === undefined) {
    throw unprocessable([{ field: 'signerAccount', message: 'is required: each signer of a multisigned request rejects for themself' }])
  }
  const recorded = await deps.payloads.changeMultisign(uuid, (current, nowMs) =>
    withRejection(current.multisign, { account: signerAccount, walletAdapter: walletAdapter ?? null, nowMs }),
  )
  if (recorded.multisign !== null && quorumReachable(recorded.multisign)) return recorded
  return deps.payloads.reject(uuid, walletAdapter)
}

/** The verification of the approval's kind, for a payload already found actionable (by approve, or by the Xaman worker). */
export async function approveVerified(deps: SigningDeps, payload: Payload, approval: Approval): Promise<Payload> {
  switch (payload.type) {
    case 'signMessage':
      return approveMessage(deps, payload, approval)
    case 'connect':
      return approveConnect(deps, payload, approval)
    case 'sign':
    case 'signAndSubmit':
      return approveTransaction(deps, payload, approval)
  }
}

/**
 * The label a browser gives its wallet is recorded, never trusted: `xaman` comes only from the Xaman path, and the
 * developer wallet is refused on mainnet (a key held in a page is no wallet for real funds).
 */
function assertBrowserWallet(walletAdapter: WalletAdapterName, network: string): void {
  if (walletAdapter === 'developer' && !isDeveloperWalletAllowed(network)) {
    throw forbidden('The developer wallet is turned off on mainnet: approve with a real wallet')
  }
  if (walletAdapter === 'xaman') throw unprocessable([{ field: 'walletAdapter', message: XAMAN_FROM_BROWSER }])
}
