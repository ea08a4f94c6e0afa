// Ledger hardware wallets over WebHID, through @ledgerhq/hw-app-xrp (loaded only when needed).
// The device signs transactions only, so connect signs a transaction that can never be applied, carrying the challenge.
import { isTransactionType } from '../../../features/payloads/model.js'
import { ApiError } from '../../shared/api-client.js'
import { h } from '../../shared/dom.js'
import { WALLET_NAMES } from '../../shared/wallet-names.js'
import { fetchAccountFill, type SignRequest } from '../api.js'
import type { Approval, WalletAdapter } from './types.js'
import { textToSign, transactionToSign } from './what-to-sign.js'

/** The first account of the XRP app, as Ledger Live uses it. */
const LEDGER_PATH = "44'/144'/0'/0/0"

const NO_WEBHID = 'This browser cannot talk to a Ledger device (WebHID is not available); use Chrome or Edge on a computer'

/** Device status words worth a plain sentence (APDU status codes of the XRP app). */
const DEVICE_MESSAGES: Record<number, string> = {
  27013: 'the request was declined on the Ledger',
  21781: 'the Ledger is locked: unlock it and try again',
  28160: 'open the XRP app on the Ledger and try again',
  27904: 'open the XRP app on the Ledger and try again',
  28161: 'open the XRP app on the Ledger and try again',
  25873: 'open the XRP app on the Ledger and try again',
}

let ledgerModules: ReturnType<typeof loadLedgerModules> | undefined

function loadLedgerModules() {
  return Promise.all([import('@ledgerhq/hw-app-xrp'), import('@ledgerhq/hw-transport-webhid'), import('ripple-binary-codec')])
}

export function createLedgerAdapter(): WalletAdapter {
  return {
    id: 'ledger',
    label: WALLET_NAMES.ledger,
    desktopOnly: true,
    supports: (type) => type !== 'signMessage',
    // The browser can talk to a Ledger; whether one is plugged in, unlocked and in its XRP app is known only once
    // approving asks for the device (WebHID lists no device before the person picks it).
    detect: async () =>
      hasWebHid() ? { available: true, note: 'Connect it and open its XRP app when asked' } : { available: false, reason: NO_WEBHID },

    showPanel(panel: HTMLElement) {
      panel.replaceChildren(
        h(
          'p',
          { className: 'hint' },
          'Connect your Ledger, unlock it and open the XRP app, then approve and check the details on the device.',
        ),
      )
      // Loaded now, so that the device picker opens while the Approve click still counts as the user's gesture.
      if (hasWebHid()) ledgerModules ??= loadLedgerModules()
    },

    async approve(request: SignRequest): Promise<Approval> {
      if (!hasWebHid()) throw new Error(NO_WEBHID)
      ledgerModules ??= loadLedgerModules()
      const [xrpModule, transportModule, codecModule] = await ledgerModules
      // A CommonJS package: its module.exports is the default export, as in Node.
      const { encode } = codecModule.default
      const Xrp = defaultClass(xrpModule.default)
      const TransportWebHID = defaultClass(transportModule.default)
      try {
        const transport = await TransportWebHID.create()
        try {
          const xrp = new Xrp(transport)
          const { publicKey, address } = await xrp.getAddress(LEDGER_PATH)
          const unsigned = { ...(await transactionFor(request, address)), SigningPubKey: publicKey.toUpperCase() }
          // The device prefixes the signing domain ("STX\0") itself: it takes the plain encoding, not encodeForSigning's.
          const signature = await xrp.signTransaction(LEDGER_PATH, encode(unsigned))
          return {
            kind: 'signed',
            body: { walletAdapter: 'ledger', signedTransaction: encode({ ...unsigned, TxnSignature: signature.toUpperCase() }) },
          }
        } finally {
          await transport.close()
        }
      } catch (error) {
        // The service's own answers (the account lookup) keep their status and details for the page to show.
        if (error instanceof ApiError) throw error
        throw new Error(deviceMessage(error))
      }
    },
  }
}

/** The transaction the device signs, complete: the device has no ledger connection to fill Fee and Sequence. */
async function transactionFor(request: SignRequest, address: string): Promise<Record<string, unknown>> {
  if (!isTransactionType(request.type)) {
    const { buildConnectTransaction } = await import('../../../features/signing/verify/connect-challenge.js')
    return buildConnectTransaction(textToSign(request), address)
  }
  const transaction = { ...transactionToSign(request) }
  transaction.Account ??= address
  if (transaction.Fee === undefined || transaction.Sequence === undefined) {
    const fill = await fetchAccountFill(request.uuid, String(transaction.Account))
    transaction.Fee ??= fill.fee
    transaction.Sequence ??= fill.sequence
    transaction.LastLedgerSequence ??= fill.lastLedgerSequence
    if (fill.networkId !== undefined) transaction.NetworkID ??= fill.networkId
  }
  return transaction
}

/**
 * The Ledger packages ship ESM syntax inside CommonJS packages: esbuild hands over the class itself as the default
 * export, while TypeScript (NodeNext, like Node) types the default as the CommonJS exports object holding it.
 */
function defaultClass<T>(imported: { default: T }): T {
  return typeof imported === 'function' ? (imported as unknown as T) : imported.default
}

function hasWebHid(): boolean {
  return typeof navigator !== 'undefined' && 'hid' in navigator && window.isSecureContext
}

function deviceMessage(error: unknown): string {
  const { statusCode, name, message } = (error ?? {}) as { statusCode?: number; name?: string; message?: string }
  if (statusCode !== undefined && DEVICE_MESSAGES[statusCode] !== undefined) return DEVICE_MESSAGES[statusCode]
  if (name === 'TransportOpenUserCancelled') return 'no Ledger device was chosen'
  return message ?? 'the Ledger device did not answer'
}
