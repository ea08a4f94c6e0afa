// What the signing operations share: the service's parts they use, and the one way to ask the XRPL node.
import type { Logger } from 'pino'
import type { Clock } from '../../platform/clock.js'
import type { Db } from '../../platform/db/database.js'
import { badGateway } from '../../platform/errors.js'
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
  logger: Logger
}

/** The node, or the 502 that says none is configured (the request stays pending). */
export function requireNode(deps: Pick<SigningDeps, 'xrplNode'>, purpose: string): XrplNode {
  if (deps.xrplNode !== undefined) return deps.xrplNode
  throw badGateway(`No XRPL node is configured on this service (XRPL_NODE_URL), so it cannot ${purpose}; the request is still pending`)
}

/** Asks the node; an unreachable node is a 502 (the request stays pending). */
export async function askNode<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request()
  } catch (error) {
    if (error instanceof XrplNodeUnavailableError) throw badGateway(`${error.message}; the request is still pending, try again`)
    throw error
  }
}
