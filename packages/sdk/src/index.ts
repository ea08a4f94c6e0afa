// @countersign/sdk: a typed client for the Countersign API, with no runtime dependencies.
export { Countersign, type CountersignOptions, type CreateOptions, type WaitOptions } from './client.js'
export {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  CountersignError,
  type FieldError,
  GoneError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  ValidationError,
  WebhookVerificationError,
  type WebhookVerificationFailure,
} from './errors.js'
export type * from './types.js'
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  verifyWebhookSignature,
  WEBHOOK_TOLERANCE_SECONDS,
  type WebhookHeaders,
} from './webhook-signature.js'
