// Request bodies used across tests.
export const DESTINATION = 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe'

/**
 * The XRPL node of a service that creates signAndSubmit payloads (refused without a node) but never submits one in
 * the test: nothing listens there, and nothing asks it.
 */
export const NODE_NEVER_ASKED = { XRPL_NODE_URL: 'ws://127.0.0.1:9' }

export const paymentTransaction = (amount: string | Record<string, string> = '1000000') => ({
  TransactionType: 'Payment',
  Destination: DESTINATION,
  Amount: amount,
})

export const payloadBodies = {
  connect: { type: 'connect' },
  sign: { type: 'sign', transaction: paymentTransaction() },
  signAndSubmit: { type: 'signAndSubmit', transaction: paymentTransaction() },
  signMessage: { type: 'signMessage', message: 'Log in to Example Shop' },
} as const
