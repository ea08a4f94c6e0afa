// Creating a multisigned request (options.multisign): the account's SignerList comes from the ledger, and the
// transaction is completed here (Sequence, Fee) so that every signer signs the very same bytes.
import type { Logger } from 'pino'
import { isValidClassicAddress } from 'ripple-address-codec'
import { unprocessable } from '../../../platform/errors.js'
import type { XrplNode } from '../../../platform/xrpl/xrpl-node.js'
import { askNode } from '../deps.js'
import { MAX_SIGNER_ENTRIES, type MultisignState, newMultisignState } from './model.js'

export interface PreparedMultisign {
  transaction: Record<string, unknown>
  state: MultisignState
}

export type MultisignPreparer = (transaction: Record<string, unknown>) => Promise<PreparedMultisign>

/**
 * Reads the SignerList of the transaction's Account and completes what a signer's wallet would otherwise add on its
 * own: Sequence (unless a TicketSequence is requested) and Fee, the base fee times one plus the number of entries
 * (the ledger charges a multisigned transaction one base fee per signature, and any subset of the list may sign).
 * LastLedgerSequence is left as requested: collecting signatures can take longer than a ledger window.
 */
export function multisignPreparer(node: XrplNode | undefined, logger: Pick<Logger, 'warn' | 'error'>): MultisignPreparer {
  return async (transaction) => {
    if (node === undefined) {
      throw unprocessable(
        [
          {
            field: 'options.multisign',
            message: 'needs an XRPL node to read the signer list: this service has none configured (XRPL_NODE_URL)',
          },
        ],
        'Multisigned requests are not available on this service',
      )
    }
    const account = transaction.Account
    if (typeof account !== 'string' || !isValidClassicAddress(account)) {
      throw unprocessable([
        { field: 'transaction.Account', message: 'is required for a multisigned request: the account the signers sign for' },
      ])
    }
    const [list, defaults] = await askNode(
      () => Promise.all([node.signerList(account), node.transactionDefaults(account)]),
      logger,
      'nothing was created, try again',
    )
    if (list === null || defaults === null) {
      throw unprocessable([{ field: 'transaction.Account', message: `${account} does not exist on the ledger` }])
    }
    if (list.entries.length === 0) {
      throw unprocessable([
        { field: 'transaction.Account', message: `${account} has no signer list on the ledger: it cannot be multisigned` },
      ])
    }
    if (list.entries.length > MAX_SIGNER_ENTRIES) {
      throw unprocessable([
        { field: 'transaction.Account', message: `the signer list of ${account} has more than ${MAX_SIGNER_ENTRIES} entries` },
      ])
    }
    const completed: Record<string, unknown> = { ...transaction }
    if (completed.Sequence === undefined && completed.TicketSequence === undefined) completed.Sequence = defaults.sequence
    if (completed.Fee === undefined) completed.Fee = String(BigInt(defaults.fee) * BigInt(1 + list.entries.length))
    if (completed.NetworkID === undefined && defaults.networkId !== undefined) completed.NetworkID = defaults.networkId
    return { transaction: completed, state: newMultisignState(list) }
  }
}
