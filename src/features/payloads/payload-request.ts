// The rules of POST /payloads that a JSON schema cannot say (docs/interface.md §4 and §8, docs/api.md).
import { isValidClassicAddress } from 'ripple-address-codec'
import type { FieldError } from '../../platform/errors.js'
import { PLAN_LABELS, type PlanLimits, type PlanName } from '../projects/plans.js'
import { couldPassAsConnectChallenge } from '../signing/verify/connect-challenge.js'
import { DEFAULT_EXPIRES_IN_SECONDS, isTransactionType, MAX_MESSAGE_BYTES, MAX_METADATA_BYTES, MAX_RETURN_URL_CHARS } from './model.js'
import { validateRequestedTransaction } from './requested-transaction.js'
import type { CreatePayloadRequest } from './schemas.js'

export function validatePayloadRequest(request: CreatePayloadRequest, plan: PlanName, limits: PlanLimits): FieldError[] {
  const errors: FieldError[] = []
  if (isTransactionType(request.type)) {
    if (request.transaction === undefined) errors.push({ field: 'transaction', message: `is required for type ${request.type}` })
    else errors.push(...validateRequestedTransaction(request.transaction))
  } else if (request.transaction !== undefined) {
    errors.push({ field: 'transaction', message: `is only accepted for types sign and signAndSubmit, not ${request.type}` })
  }

  if (request.type === 'signMessage') {
    if (request.message === undefined) errors.push({ field: 'message', message: 'is required for type signMessage' })
    else errors.push(...validateMessage(request.message))
  } else if (request.message !== undefined) {
    errors.push({ field: 'message', message: `is only accepted for type signMessage, not ${request.type}` })
  }

  if (request.options?.multisign === true) {
    if (!isTransactionType(request.type)) {
      errors.push({ field: 'options.multisign', message: `is only accepted for types sign and signAndSubmit, not ${request.type}` })
    } else if (typeof request.transaction?.Account !== 'string') {
      errors.push({ field: 'transaction.Account', message: 'is required for a multisigned request: the account the signers sign for' })
    }
  }

  const expiresIn = request.options?.expiresIn
  if (expiresIn !== undefined && expiresIn > limits.maxExpiresInSeconds) {
    errors.push({
      field: 'options.expiresIn',
      message: `must be at most ${limits.maxExpiresInSeconds} seconds on the ${PLAN_LABELS[plan]} plan`,
    })
  }
  const returnUrl = request.options?.returnUrl
  if (returnUrl !== undefined) {
    const problem = returnUrlProblem(returnUrl)
    if (problem) errors.push({ field: 'options.returnUrl', message: problem })
  }
  const metadata = request.options?.metadata
  if (metadata !== undefined) {
    const bytes = Buffer.byteLength(JSON.stringify(metadata), 'utf8')
    if (bytes > MAX_METADATA_BYTES) {
      errors.push({
        field: 'options.metadata',
        message: `must be at most ${MAX_METADATA_BYTES} bytes once serialized as JSON, got ${bytes}`,
      })
    }
  }
  if (request.options?.signers !== undefined) errors.push(...validateSigners(request.options.signers, request.transaction))
  return errors
}

/**
 * options.signers: distinct classic addresses (1 to MAX_ALLOWED_SIGNERS of them, as the schema says), and the requested
 * Account among them when the request names one.
 */
function validateSigners(signers: readonly string[], transaction: Record<string, unknown> | undefined): FieldError[] {
  const errors: FieldError[] = []
  signers.forEach((signer, index) => {
    if (!isValidClassicAddress(signer)) {
      errors.push({ field: `options.signers[${index}]`, message: 'is not a classic XRP Ledger address (r...)' })
    } else if (signers.indexOf(signer) !== index) {
      errors.push({ field: `options.signers[${index}]`, message: `${signer} is listed twice` })
    }
  })
  const account = transaction?.Account
  if (errors.length === 0 && typeof account === 'string' && !signers.includes(account)) {
    errors.push({
      field: 'options.signers',
      message: `must include the requested transaction's Account ${account}: no other account can sign it`,
    })
  }
  return errors
}

/** The payload's TTL: as asked, else the default, but never past a plan maximum an operator lowered below it. */
export function expiresInSeconds(request: CreatePayloadRequest, limits: PlanLimits): number {
  return request.options?.expiresIn ?? Math.min(DEFAULT_EXPIRES_IN_SECONDS, limits.maxExpiresInSeconds)
}

function validateMessage(message: string): FieldError[] {
  if (message.length === 0) return [{ field: 'message', message: 'must not be empty' }]
  if (message.includes('\u0000')) {
    // Every XRPL signing prefix ends in a NUL byte: a message with one could be a transaction in disguise.
    return [{ field: 'message', message: 'must not contain the NUL character (U+0000)' }]
  }
  if (couldPassAsConnectChallenge(message)) {
    // Signed, it would be a sign-in to another request's connect challenge.
    return [
      { field: 'message', message: 'must not read like a connect challenge ("... wants you to sign in with your XRP Ledger account.")' },
    ]
  }
  const bytes = Buffer.byteLength(message, 'utf8')
  if (bytes > MAX_MESSAGE_BYTES) return [{ field: 'message', message: `must be at most ${MAX_MESSAGE_BYTES} bytes of UTF-8, got ${bytes}` }]
  return []
}

/** The problem with a return URL, or undefined when it is an absolute http(s) URL. */
export function returnUrlProblem(value: string): string | undefined {
  if (value.length > MAX_RETURN_URL_CHARS) return `must be at most ${MAX_RETURN_URL_CHARS} characters`
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'must be an absolute http or https URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL'
  return undefined
}

/** The return URL with its {uuid}, {txHash} and {externalId} placeholders filled; undefined if the result is not http(s). */
export function fillReturnUrl(
  template: string,
  payload: { uuid: string; txHash: string | null; externalId: string | null },
): string | undefined {
  const filled = template
    .replaceAll('{uuid}', encodeURIComponent(payload.uuid))
    .replaceAll('{txHash}', encodeURIComponent(payload.txHash ?? ''))
    .replaceAll('{externalId}', encodeURIComponent(payload.externalId ?? ''))
  return returnUrlProblem(filled) === undefined ? new URL(filled).href : undefined
}
