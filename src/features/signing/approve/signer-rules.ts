// The rules every approval ends with, whatever its kind: the signer allowed (options.signers), its master key not
// disabled on the ledger, and the proof used by no other payload; then the move to signed, which records the proof.
import { unprocessable } from '../../../platform/errors.js'
import { knownNetworkId, networkIdProblem } from '../../../platform/xrpl/network-id.js'
import type { Payload, SignedResolution } from '../../payloads/model.js'
import { askNode, requireNode, type SigningDeps } from '../deps.js'
import { SIGNED_FIELD } from '../verify/signed-blob.js'
import type { VerifiedTransaction } from '../verify/verify-signed-transaction.js'

/** A resolution the signing operations make: always with the proof that resolves no other payload. */
export type ProvenResolution = SignedResolution & { proofKey: string }

/**
 * Resolves a payload proved by a signature over a text, a connect transaction or a Xaman SignIn: always made with the
 * account's master key, so that key must still be enabled. `keyField` names the key in a refusal.
 */
export async function resolveProven(
  deps: SigningDeps,
  payload: Payload,
  signed: ProvenResolution,
  keyField = 'publicKey',
): Promise<Payload> {
  assertAllowedSigner(payload, signed.signerAddress)
  await assertMasterKeyEnabled(deps, signed.signerAddress, keyField)
  await deps.payloads.assertProofUnused(signed.proofKey)
  return deps.payloads.resolveSigned(payload.uuid, signed)
}

/** options.signers: only the listed accounts may resolve the payload. */
export function assertAllowedSigner(payload: Payload, signerAddress: string): void {
  if (payload.signers === null || payload.signers.includes(signerAddress)) return
  throw unprocessable(
    [{ field: 'signerAddress', message: `${signerAddress} may not sign this request; sign with ${payload.signers.join(' or ')}` }],
    `This request may only be signed by ${payload.signers.join(', ')}`,
  )
}

/**
 * A signed transaction's NetworkID against this network's id (the node's word, else the id XRPL_NETWORK names): one
 * signed for another network can never apply here. Submitted, the node refuses it with a tel code, which leaves a
 * transaction's fate in doubt (another node might take it), so that a signer could keep a request pending long after
 * it expired, and a `sign` request would resolve with a transaction that no ledger of this network takes. Unknown
 * network, nothing checked. A request's own NetworkID is held to the same rule at creation (create-payload.ts).
 */
async function assertForThisNetwork(deps: SigningDeps, transaction: Record<string, unknown>): Promise<void> {
  const node = deps.xrplNode
  const networkId = (node === undefined ? undefined : await askNode(() => node.networkId(), deps.logger)) ?? knownNetworkId(deps.network)
  if (networkId === undefined) return
  const problem = networkIdProblem(networkId, deps.network, transaction.NetworkID)
  if (problem !== undefined) {
    throw unprocessable(
      [{ field: `${SIGNED_FIELD}.NetworkID`, message: `${problem}: this transaction could never apply here` }],
      'The signed transaction is for another network',
    )
  }
}

/**
 * With an XRPL node configured: a master key the account has disabled (lsfDisableMaster) speaks for nobody. Without
 * a node this is not checked (docs/signing.md).
 */
export async function assertMasterKeyEnabled(
  deps: Pick<SigningDeps, 'xrplNode' | 'logger'>,
  account: string,
  field: string,
): Promise<void> {
  const node = deps.xrplNode
  if (node === undefined) return
  if (await askNode(() => node.isMasterKeyDisabled(account), deps.logger)) {
    throw unprocessable(
      [{ field, message: `is the master key of ${account}, which the account has disabled (lsfDisableMaster): it no longer signs for it` }],
      'The signing key does not speak for the account',
    )
  }
}

/**
 * The ledger's word where the blob alone cannot say whether the signature speaks for the Account: a RegularKey, a
 * multisignature quorum, and (with a node configured) whether a master key that signed is still enabled.
 */
export async function checkAuthority(deps: SigningDeps, verified: VerifiedTransaction): Promise<void> {
  await assertForThisNetwork(deps, verified.transaction)
  const account = verified.signerAddress
  if (verified.requiresRegularKeyCheck) {
    const node = requireNode(deps, "check that the signing key is the account's RegularKey")
    if (!(await askNode(() => node.isRegularKey(account, verified.signingPubKey), deps.logger))) {
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
  } else if (!verified.multisigned) {
    await assertMasterKeyEnabled(deps, account, `${SIGNED_FIELD}.SigningPubKey`)
  }
  if (verified.multisigned) {
    const node = requireNode(deps, "check the signers against the account's signer list")
    if (!(await askNode(() => node.hasSignerQuorum(account, verified.signerAccounts), deps.logger))) {
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
    // Each signer signed with its master key (verifySignedTransaction): it must still be enabled.
    for (const [index, signer] of verified.signerAccounts.entries()) {
      await assertMasterKeyEnabled(deps, signer, `${SIGNED_FIELD}.Signers[${index}].SigningPubKey`)
    }
  }
}
