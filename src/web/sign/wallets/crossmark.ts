// Crossmark, a browser extension, through @crossmarkio/sdk (loaded only when needed).
// signAndWait answers the signed blob (txBlob); signInAndWait(hex) signs the given hex as ripple-keypairs does and
// answers the address, public key and signature, so the page hands it the hex of the text's UTF-8 bytes.
import { isTransactionType } from '../../../features/payloads/model.js'
import { WALLET_NAMES } from '../../shared/wallet-names.js'
import type { SignRequest } from '../api.js'
import type { Approval, WalletAdapter } from './types.js'
import { textToSign, transactionToSign, utf8ToHex } from './what-to-sign.js'

/** The SDK polls for the extension's window object every 500 ms; two seconds covers a slow extension start. */
const DETECT_TIMEOUT_MS = 2000

async function loadSdk() {
  // The package is CommonJS: its module.exports is the default import, and the SDK instance is its own default.
  const { default: exports } = await import('@crossmarkio/sdk')
  return exports.default
}

export function createCrossmarkAdapter(): WalletAdapter {
  return {
    id: 'crossmark',
    label: WALLET_NAMES.crossmark,
    desktopOnly: true,
    supports: () => true,

    async detect() {
      const sdk = await loadSdk()
      const found = await sdk.async.detect(DETECT_TIMEOUT_MS)
      return found ? { available: true } : { available: false, reason: 'Crossmark is not installed in this browser' }
    },

    async approve(request: SignRequest): Promise<Approval> {
      const sdk = await loadSdk()
      if (isTransactionType(request.type)) {
        const transaction = transactionToSign(request) as Parameters<typeof sdk.async.signAndWait>[0]
        const { data } = (await sdk.async.signAndWait(transaction)).response
        if (data.meta.isRejected || !data.txBlob) throw new Error('the request was declined in Crossmark')
        return { kind: 'signed', body: { walletAdapter: 'crossmark', signedTransaction: data.txBlob } }
      }
      const { data } = (await sdk.async.signInAndWait(utf8ToHex(textToSign(request)))).response
      if (data.meta.isRejected || !data.signature) throw new Error('the request was declined in Crossmark')
      return { kind: 'signed', body: { walletAdapter: 'crossmark', publicKey: data.publicKey, signature: data.signature } }
    },
  }
}
