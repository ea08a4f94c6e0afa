// @countersign/sdk: a typed client for the Countersign API, with no runtime dependencies.
export { Countersign, type CountersignOptions, type WaitOptions } from './client.js'
export { CountersignError, type FieldError } from './errors.js'
export type * from './types.js'
export { verifyWebhookSignature } from './webhook-signature.js'
