// Request bodies used across tests.
export const DESTINATION = 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe'

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
