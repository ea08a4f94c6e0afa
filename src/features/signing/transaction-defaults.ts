// GET /api/v1/sign/{uuid}/account/{address}: what a Ledger device needs to complete the requested transaction.
import { isValidClassicAddress } from 'ripple-address-codec'
import { unprocessable } from '../../platform/errors.js'
import type { TransactionDefaults } from '../../platform/xrpl/xrpl-node.js'
import { askNode, requireNode, type SigningDeps } from './deps.js'

export async function transactionDefaults(deps: SigningDeps, uuid: string, address: string): Promise<TransactionDefaults> {
  const payload = await deps.payloads.assertActionable(uuid)
  if (payload.type !== 'sign' && payload.type !== 'signAndSubmit') {
    throw unprocessable([{ field: 'type', message: `${payload.type} payloads carry no transaction to complete` }])
  }
  if (!isValidClassicAddress(address)) throw unprocessable([{ field: 'address', message: 'is not a classic XRP Ledger address' }])
  const node = requireNode(deps, 'look up the account')
  const defaults = await askNode(() => node.transactionDefaults(address), deps.logger)
  if (defaults === null) {
    throw unprocessable([{ field: 'address', message: `${address} does not exist on the ledger: it has never been funded` }])
  }
  return defaults
}
