// The developer wallet: a key held in this page, from a family seed or freshly generated, for development and tests.
// The service offers it only off mainnet (wallets.developer); the key never leaves the page.
import { isTransactionType } from '../../../features/payloads/model.js'
import { button, h } from '../../shared/dom.js'
import { WALLET_NAMES } from '../../shared/wallet-names.js'
import type { SignRequest } from '../api.js'
import type { Approval, WalletAdapter } from './types.js'
import { textToSign, transactionToSign, utf8ToHex } from './what-to-sign.js'

/** Filled in when the request leaves them out; a real ledger may refuse them, which is acceptable for tests. */
const DEVELOPER_FEE_DROPS = '12'
const DEVELOPER_SEQUENCE = 1

/** CommonJS packages: their module.exports is the default export, as in Node. */
const loadKeypairs = async () => (await import('ripple-keypairs')).default
const loadCodec = async () => (await import('ripple-binary-codec')).default

interface Keys {
  address: string
  publicKey: string
  privateKey: string
}

export function createDeveloperAdapter(): WalletAdapter {
  let seedInput: HTMLInputElement | undefined
  let addressLine: HTMLElement | undefined

  return {
    id: 'developer',
    label: WALLET_NAMES.developer,
    supports: () => true,
    multisigns: true,
    detect: async () => ({ available: true }),

    showPanel(panel: HTMLElement) {
      const input = h('input', {
        testId: 'dev-seed',
        attrs: { id: 'dev-seed', type: 'text', autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false', placeholder: 's…' },
      })
      seedInput = input
      const address = h('p', { className: 'address', testId: 'dev-address', attrs: { 'aria-live': 'polite' } }, 'No key yet')
      addressLine = address
      const showAddress = async () => {
        const seed = input.value.trim()
        if (seed === '') return address.replaceChildren('No key yet')
        const line = await deriveKeys(seed).then(
          (keys) => `Address: ${keys.address}`,
          () => 'This is not a valid family seed',
        )
        // The seed changed while its keys were derived (typed on, or cleared once its signature was recorded).
        if (input.value.trim() === seed) address.replaceChildren(line)
      }
      input.addEventListener('input', showAddress)
      const generate = button('Generate a testnet key', { className: 'secondary', testId: 'dev-generate' }, async () => {
        const { generateSeed } = await loadKeypairs()
        input.value = generateSeed()
        await showAddress()
      })
      panel.replaceChildren(
        h(
          'p',
          { className: 'warning' },
          'For development and tests on test networks only. The key lives in this page and is forgotten when you leave it. ',
          `When the request leaves them out, Fee is set to ${DEVELOPER_FEE_DROPS} drops and Sequence to ${DEVELOPER_SEQUENCE}, `,
          'so a real ledger may refuse the transaction. A generated key holds no funds.',
        ),
        h('label', { attrs: { for: 'dev-seed' } }, 'Family seed'),
        h('div', { className: 'row' }, input, generate),
        address,
      )
    },

    answerRecorded() {
      // The page stays for the other signers, maybe on this very computer: the key of the one who signed goes.
      if (seedInput === undefined || seedInput.value === '') return
      seedInput.value = ''
      // Short, in the address line's face: the page's status already says the answer is recorded.
      addressLine?.replaceChildren('No key yet: the next signer enters theirs')
    },

    async approve(request: SignRequest): Promise<Approval> {
      const seed = seedInput?.value.trim() ?? ''
      if (seed === '') throw new Error('enter a family seed or generate a testnet key first')
      let keys: Keys
      try {
        keys = await deriveKeys(seed)
      } catch {
        throw new Error('this is not a valid family seed')
      }
      const { sign } = await loadKeypairs()
      if (!isTransactionType(request.type)) {
        const signature = sign(utf8ToHex(textToSign(request)), keys.privateKey)
        return { kind: 'signed', body: { walletAdapter: 'developer', publicKey: keys.publicKey, signature } }
      }
      const { encode, encodeForMultisigning, encodeForSigning } = await loadCodec()
      if (request.multisign !== undefined) {
        // One signer of a multisigned request: the transaction exactly as requested, signed for this signer's account.
        const transaction: Record<string, unknown> = { ...transactionToSign(request), SigningPubKey: '' }
        const TxnSignature = sign(encodeForMultisigning(transaction, keys.address), keys.privateKey)
        const Signers = [{ Signer: { Account: keys.address, SigningPubKey: keys.publicKey, TxnSignature } }]
        return { kind: 'signed', body: { walletAdapter: 'developer', signedTransaction: encode({ ...transaction, Signers }) } }
      }
      const transaction: Record<string, unknown> = {
        ...transactionToSign(request),
        Account: request.transaction?.Account ?? keys.address,
        Fee: request.transaction?.Fee ?? DEVELOPER_FEE_DROPS,
        Sequence: request.transaction?.Sequence ?? DEVELOPER_SEQUENCE,
        SigningPubKey: keys.publicKey,
      }
      // What xrpl's Wallet.sign does for a single signature, without pulling the whole xrpl client into the page.
      const TxnSignature = sign(encodeForSigning(transaction), keys.privateKey)
      return { kind: 'signed', body: { walletAdapter: 'developer', signedTransaction: encode({ ...transaction, TxnSignature }) } }
    },
  }
}

async function deriveKeys(seed: string): Promise<Keys> {
  const { deriveAddress, deriveKeypair } = await loadKeypairs()
  const { publicKey, privateKey } = deriveKeypair(seed)
  return { address: deriveAddress(publicKey), publicKey, privateKey }
}
