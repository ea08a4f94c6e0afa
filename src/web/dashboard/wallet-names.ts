// The wallets' names as people know them, for the payloads and the overview's chart: the service records an adapter's
// id (walletAdapter: "xaman"), the signing page names it by its label ("Xaman"). Keep these equal to the labels of
// src/web/sign/wallets/*.ts (the dashboard's browser test compares them); the type asks for one per adapter.
import type { WalletAdapterName } from '../../features/signing/view.js'

export const WALLET_NAMES: Record<WalletAdapterName, string> = {
  gemwallet: 'GemWallet',
  crossmark: 'Crossmark',
  ledger: 'Ledger',
  xaman: 'Xaman',
  developer: 'Developer wallet',
}

/** The name of a wallet adapter's id; an id this build does not know (a newer server's) is shown as it is. */
export function walletName(adapter: string): string {
  return Object.hasOwn(WALLET_NAMES, adapter) ? WALLET_NAMES[adapter as WalletAdapterName] : adapter
}
