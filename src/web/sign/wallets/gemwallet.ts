// GemWallet, a browser extension, through @gemwallet/api (loaded only when needed).
// signTransaction answers { signature } holding the whole signed blob (the extension autofills Fee, Sequence and
// LastLedgerSequence); signMessage signs the hex of the message's UTF-8 bytes with ripple-keypairs, as the service verifies.
import { isTransactionType } from '../../../features/payloads/model.js'
import { WALLET_NAMES } from '../../shared/wallet-names.js'
import type { SignRequest } from '../api.js'
import type { Approval, WalletAdapter } from './types.js'
import { textToSign, transactionToSign } from './what-to-sign.js'

type SignTransactionRequest = import('@gemwallet/api').SignTransactionRequest

/** A CommonJS package: its module.exports is the default export, as in Node. */
const loadGemWallet = async () => (await import('@gemwallet/api')).default

export function createGemWalletAdapter(): WalletAdapter {
  return {
    id: 'gemwallet',
    label: WALLET_NAMES.gemwallet,
    desktopOnly: true,
    supports: () => true,

    async detect() {
      const { isInstalled } = await loadGemWallet()
      const { result } = await isInstalled()
      return result.isInstalled ? { available: true } : { available: false, reason: 'GemWallet is not installed in this browser' }
    },

    async approve(request: SignRequest): Promise<Approval> {
      const gem = await loadGemWallet()
      if (isTransactionType(request.type)) {
        const transaction = transactionToSign(request) as unknown as SignTransactionRequest['transaction']
        const { result } = await gem.signTransaction({ transaction })
        if (!result?.signature) throw new Error('the request was declined in GemWallet')
        return { kind: 'signed', body: { walletAdapter: 'gemwallet', signedTransaction: result.signature } }
      }
      const key = await gem.getPublicKey()
      if (!key.result) throw new Error('GemWallet did not share the public key')
      const signed = await gem.signMessage(textToSign(request))
      if (!signed.result?.signedMessage) throw new Error('the request was declined in GemWallet')
      return {
        kind: 'signed',
        body: { walletAdapter: 'gemwallet', publicKey: key.result.publicKey, signature: signed.result.signedMessage },
      }
    },
  }
}
