// The one interface every wallet adapter of the signing page implements.
import type { PayloadType } from '../../../features/payloads/model.js'
import type { WalletAdapterName } from '../../../features/signing/view.js'
import type { ApproveBody, SignRequest } from '../api.js'

export interface Availability {
  available: boolean
  /** Why not, in words shown as they are, e.g. "GemWallet is not installed in this browser". */
  reason?: string
  /**
   * What the picker says of an available wallet instead of "Ready", when ready is more than the page can know: a
   * Ledger is found only when approving, so the page cannot tell whether one is plugged in.
   */
  note?: string
}

/** What approving with a wallet produced. */
export type Approval =
  /** A signature: the page sends this body to POST /approve, and the service verifies it. */
  | { kind: 'signed'; body: ApproveBody }
  /** The service fetches the result from the wallet's own servers (Xaman); the page waits for the status to change. */
  | { kind: 'awaitingService'; waitingFor: string }

export interface WalletAdapter {
  id: WalletAdapterName
  label: string
  /** A desktop browser extension or WebHID: on a phone the page tucks it away under "Other wallets". */
  desktopOnly?: boolean
  supports(type: PayloadType): boolean
  /** Signs for multisigning (one Signers entry, empty SigningPubKey): what a multisigned request needs. */
  multisigns?: boolean
  detect(): Promise<Availability>
  /** Draws the adapter's own controls (seed field, QR code) into panel when the user picks it. */
  showPanel?(panel: HTMLElement, request: SignRequest): void
  /** Asks the wallet to sign; throws an Error whose message is shown to the user when it cannot or the user declines. */
  approve(request: SignRequest): Promise<Approval>
  /**
   * The service took this wallet's answer to a multisigned request, which stays open for the other signers: the
   * adapter forgets what belongs to the signer who answered (the developer wallet's key), so the next one starts clean.
   */
  answerRecorded?(): void
}
