// The wallets the page offers for a request: those that can answer its type, and those the service enabled.
import type { SignRequest } from '../api.js'
import { createCrossmarkAdapter } from './crossmark.js'
import { createDeveloperAdapter } from './developer.js'
import { createGemWalletAdapter } from './gemwallet.js'
import { createLedgerAdapter } from './ledger.js'
import type { WalletAdapter } from './types.js'
import { createXamanAdapter } from './xaman.js'

export function walletsFor(request: SignRequest): WalletAdapter[] {
  const adapters = [createGemWalletAdapter(), createCrossmarkAdapter(), createLedgerAdapter()]
  if (request.wallets.xaman) adapters.push(createXamanAdapter())
  // The service never enables it on mainnet; the page refuses it there too, in case of a misconfigured server.
  if (request.wallets.developer && request.network !== 'mainnet') adapters.push(createDeveloperAdapter())
  return adapters.filter((adapter) => adapter.supports(request.type) && (request.multisign === undefined || adapter.multisigns === true))
}
