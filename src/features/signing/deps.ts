// What the signing operations share: the service's parts they use, and the one way to ask the XRPL node.
import type { Logger } from 'pino'
import type { Clock } from '../../platform/clock.js'
import type { Db } from '../../platform/db/database.js'
import { badGateway } from '../../platform/errors.js'
import { logThrottled } from '../../platform/log-throttle.js'
import { type XrplNode, XrplNodeUnavailableError } from '../../platform/xrpl/xrpl-node.js'
import type { PayloadService } from '../payloads/service.js'
import type { XamanClient } from './xaman/xaman-client.js'

export interface SigningDeps {
  db: Db
  clock: Clock
  payloads: PayloadService
  /** XRPL_NETWORK: shown to users; mainnet turns the developer wallet off. */
  network: string
  /** Undefined without XRPL_NODE_URL: signAndSubmit, RegularKey and multisignature checks then answer 502. */
  xrplNode: XrplNode | undefined
  /** Undefined without XAMAN_API_KEY: the Xaman wallet is not offered. */
  xaman: XamanClient | undefined
  /** XRPL_EXPLORER_URL: a transaction's page with {txHash}; undefined when the network has no explorer. */
  explorerTemplate: string | undefined
  logger: Logger
}

/** What the wallet-facing API says when the XRP Ledger cannot be asked; why is in the operator's log. */
export const LEDGER_UNAVAILABLE = 'The XRP Ledger cannot be reached from this service right now'

/**
 * The node, or a 502 (the request stays pending). The end user reads its message on the signing page and cannot
 * change the service's settings: the message says what happened, the operator's log names the missing setting.
 */
export function requireNode(deps: Pick<SigningDeps, 'xrplNode' | 'logger'>, purpose: string): XrplNode {
  if (deps.xrplNode !== undefined) return deps.xrplNode
  // Anyone holding a request's uuid can repeat this: one line a minute for each purpose (log-throttle.ts).
  logThrottled(
    deps.logger,
    'error',
    `no-xrpl-node: ${purpose}`,
    { purpose },
    `no XRPL node is configured (XRPL_NODE_URL), so the service cannot ${purpose}`,
  )
  throw badGateway(`${LEDGER_UNAVAILABLE}, so it cannot ${purpose}; the request is still pending, try again later`)
}

/**
 * Asks the node; an unreachable node is a 502 whose message ends with `afterwards` (by default: the request stays
 * pending), its failure logged one line a minute however many requests meet it.
 */
export async function askNode<T>(
  request: () => Promise<T>,
  logger: Pick<Logger, 'warn' | 'error'>,
  afterwards = 'the request is still pending, try again',
): Promise<T> {
  try {
    return await request()
  } catch (error) {
    if (error instanceof XrplNodeUnavailableError) {
      logThrottled(logger, 'warn', 'xrpl-node-unreachable', { err: error }, 'the XRPL node could not be reached')
      throw badGateway(`${LEDGER_UNAVAILABLE}; ${afterwards}`)
    }
    throw error
  }
}
