// The wallets' names as people know them, one per adapter id (the type asks for each): the signing page's wallet list
// and the dashboard's payloads and chart, where the service records the id (walletAdapter: "xaman"), show these.
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
