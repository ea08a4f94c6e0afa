// What wallets do, done with xrpl's Wallet: signing a requested transaction, a text, or the connect transaction.
import { sign } from 'ripple-keypairs'
import type { Wallet } from 'xrpl'

/** The fields a wallet fills in before signing a requested transaction. */
export const WALLET_FIELDS = { Fee: '12', Sequence: 7, LastLedgerSequence: 1020 }

/** Signs the requested transaction as a wallet would: its own Account unless requested, plus Fee, Sequence, LastLedgerSequence. */
export function signRequested(wallet: Wallet, requested: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return wallet.sign({ Account: wallet.classicAddress, ...WALLET_FIELDS, ...requested, ...extra } as Parameters<Wallet['sign']>[0])
}

/** A signature over the UTF-8 bytes of text, hex, as ripple-keypairs and the wallets make it. */
export function signText(wallet: Wallet, text: string): string {
  return sign(Buffer.from(text, 'utf8').toString('hex').toUpperCase(), wallet.privateKey)
}
