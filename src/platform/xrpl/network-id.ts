// A transaction's NetworkID against the network's id: networks up to 1024 predate the field and refuse it, those above
// require it, equal to their id. A transaction that breaks this can never apply on the network.

/** Networks with ids up to 1024 predate NetworkID and refuse it; those above require it. */
export const MAX_NETWORK_ID_WITHOUT_FIELD = 1024

/** The ids of the networks XRPL_NETWORK names, for what is decided without a node to ask. */
const NETWORK_IDS: Readonly<Record<string, number>> = { mainnet: 0, testnet: 1, devnet: 2 }

export function knownNetworkId(network: string): number | undefined {
  return NETWORK_IDS[network]
}

/** What is wrong with a transaction's NetworkID (`value`, undefined when absent) on network `networkId`, named `network`. */
export function networkIdProblem(networkId: number, network: string, value: unknown): string | undefined {
  if (networkId <= MAX_NETWORK_ID_WITHOUT_FIELD) {
    return value === undefined
      ? undefined
      : `must be absent on ${network} (network ${networkId}), which refuses transactions that carry one`
  }
  return value === networkId ? undefined : `must be ${networkId}, the id of ${network}`
}
