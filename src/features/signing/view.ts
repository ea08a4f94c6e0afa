// What the wallet-facing API shows the signing page: the request in full, the wallets the service enables, and the
// outcome once resolved (docs/signing.md, "The wallet-facing API").
import { decode } from 'ripple-binary-codec'
import { toIso } from '../../platform/utc.js'
import type { Payload } from '../payloads/model.js'
import { fillReturnUrl } from '../payloads/payload-request.js'
import { toMultisignView } from './multisign/view.js'
import type { Outcome, Resolution, SignView } from './schemas.js'

export const WALLET_ADAPTERS = ['gemwallet', 'crossmark', 'ledger', 'xaman', 'developer'] as const
export type WalletAdapterName = (typeof WALLET_ADAPTERS)[number]

/** The developer wallet holds a key in the page: fine for test networks, never offered or accepted on mainnet. */
export function isDeveloperWalletAllowed(network: string): boolean {
  return network !== 'mainnet'
}

export interface SignViewContext {
  project: { name: string; website?: string; logoUrl?: string }
  network: string
  xamanEnabled: boolean
  /** XRPL_EXPLORER_URL's template with {txHash}, or undefined when the network has none. */
  explorerTemplate: string | undefined
}

export function toSignView(payload: Payload, context: SignViewContext): SignView {
  const view: SignView = {
    uuid: payload.uuid,
    type: payload.type,
    status: payload.status,
    expiresAt: toIso(payload.expiresAtMs),
    network: context.network,
    project: context.project,
    wallets: { xaman: context.xamanEnabled, developer: isDeveloperWalletAllowed(context.network) },
  }
  if (payload.transaction !== null) view.transaction = payload.transaction
  if (payload.message !== null) view.message = payload.message
  if (payload.challenge !== null) view.challenge = payload.challenge
  if (payload.customInstructions !== null) view.customInstructions = payload.customInstructions
  if (payload.txBlob !== null && (payload.type === 'sign' || payload.type === 'signAndSubmit')) {
    const signed = signedFields(payload.txBlob)
    if (signed !== undefined) view.signed = signed
  }
  // The transaction the ledger holds, once known: this one, or the same transaction signed otherwise, which took its place.
  const onLedger = payload.validatedTxHash ?? payload.txHash
  if (onLedger !== null && context.explorerTemplate !== undefined) {
    view.explorerUrl = context.explorerTemplate.replaceAll('{txHash}', encodeURIComponent(onLedger))
  }
  if (payload.type === 'signAndSubmit' && payload.status === 'signed') {
    view.submission = {
      engineResult: payload.submitEngineResult,
      txHash: payload.validatedTxHash,
      validatedResult: payload.validatedResult,
      ledgerIndex: payload.validatedLedgerIndex,
    }
  }
  if (payload.submissionInDoubt) view.submissionInDoubt = true
  if (payload.signers !== null) view.signers = payload.signers
  if (payload.multisign !== null) view.multisign = toMultisignView(payload.multisign, toIso)
  return { ...view, ...outcomeOf(payload) }
}

/** The account and fee of a verified signed blob (the service checked it decodes before keeping it). */
function signedFields(txBlob: string): SignView['signed'] {
  try {
    const { Account, Fee } = decode(txBlob) as { Account?: unknown; Fee?: unknown }
    const fields: NonNullable<SignView['signed']> = {}
    if (typeof Account === 'string') fields.account = Account
    if (typeof Fee === 'string') fields.fee = Fee
    return fields
  } catch {
    return undefined
  }
}

/** The 200 answer of approve and reject: the payload they resolved, or the multisigned request they added to. */
export function toResolution(payload: Payload): Resolution {
  const resolution: Resolution = { uuid: payload.uuid, status: payload.status as Resolution['status'], ...outcomeOf(payload) }
  if (payload.multisign !== null) resolution.multisign = toMultisignView(payload.multisign, toIso)
  return resolution
}

/**
 * The outcome fields of a resolved payload. The app's return URL is offered after signing and rejecting only: after
 * expiry the user has nothing to bring back, and the app learns of it from its own polling or webhook.
 */
function outcomeOf(payload: Payload): Outcome {
  const outcome: Outcome = {}
  if (payload.signerAddress !== null) outcome.signerAddress = payload.signerAddress
  if (payload.txHash !== null) outcome.txHash = payload.txHash
  if (payload.walletAdapter !== null) outcome.walletAdapter = payload.walletAdapter
  if (payload.resolvedAtMs !== null) outcome.resolvedAt = toIso(payload.resolvedAtMs)
  if (payload.returnUrl !== null && (payload.status === 'signed' || payload.status === 'rejected')) {
    const redirectUrl = fillReturnUrl(payload.returnUrl, payload)
    if (redirectUrl !== undefined) outcome.redirectUrl = redirectUrl
  }
  return outcome
}
