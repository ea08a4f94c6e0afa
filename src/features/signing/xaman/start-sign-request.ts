// POST /api/v1/sign/{uuid}/xaman: creates the Xaman sign request; its outcome is learned by the Xaman worker.
import type { Dialect } from '../../../platform/db/database.js'
import { AppError, badGateway, tooManyRequests, unprocessable } from '../../../platform/errors.js'
import type { Payload } from '../../payloads/model.js'
import { projectsRepository } from '../../projects/repository.js'
import type { SigningDeps } from '../deps.js'
import type { XamanStart } from '../schemas.js'
import { xamanSignRequestsRepository } from './sign-requests-repository.js'
import { type CreatedXamanSignRequest, type XamanSignRequestBody, XamanUnavailableError } from './xaman-client.js'

/** Each Xaman request costs the operator's Xaman quota; a user needs one, a few retries at most. */
const MAX_XAMAN_REQUESTS_PER_PAYLOAD = 5

/** Why Xaman cannot answer the payload, or undefined when it can. */
function xamanRefusal(payload: Payload): string | undefined {
  if (payload.type === 'signMessage') return 'Xaman signs transactions and sign-ins, not free-form messages: choose another wallet'
  // Xaman signs with the user's own key, never for multisigning (a blob no signer's approval takes), and a rejection
  // there is not one signer's: it would reject the request for the whole signer list.
  if (payload.multisign !== null) {
    return 'Xaman does not sign for multisigning: each signer answers with their own multisigning signature, from another wallet'
  }
  return undefined
}

export async function startXamanSignRequest(deps: SigningDeps & { dialect: Dialect }, uuid: string): Promise<XamanStart> {
  const xaman = deps.xaman
  if (xaman === undefined) throw new AppError(404, 'Xaman is not configured on this service')
  const payload = await deps.payloads.assertActionable(uuid)
  const refusal = xamanRefusal(payload)
  if (refusal !== undefined) throw unprocessable([{ field: 'walletAdapter', message: refusal }], 'Xaman cannot answer this request')
  const project = await projectsRepository.findById(deps.db, payload.projectId)
  const signingUrl = deps.payloads.signingUrl(uuid)
  const body: XamanSignRequestBody = {
    // A connect is a Xaman SignIn: the user's signature reveals the account and authorizes nothing.
    txjson: payload.type === 'connect' ? { TransactionType: 'SignIn' } : (payload.transaction as Record<string, unknown>),
    // The service submits signAndSubmit itself, after verifying; Xaman only signs. Afterwards the user comes back to
    // the signing page, which shows the outcome and follows the app's return URL.
    options: {
      submit: false,
      return_url: { app: signingUrl, web: signingUrl },
      ...(payload.signers === null ? {} : { signers: payload.signers }),
    },
    custom_meta: { instruction: payload.customInstructions ?? `${project?.name ?? 'An app'} asks you to approve this request.` },
  }
  // The place is reserved last, just before Xaman is asked, and given back whatever keeps Xaman from making it.
  const placeholder = await xamanSignRequestsRepository.reserve(deps.db, deps.dialect, {
    payloadUuid: uuid,
    nowMs: deps.clock.now(),
    max: MAX_XAMAN_REQUESTS_PER_PAYLOAD,
  })
  if (placeholder === undefined) {
    const secondsLeft = Math.max(1, Math.ceil((payload.expiresAtMs - deps.clock.now()) / 1000))
    throw tooManyRequests(
      `This request already has ${MAX_XAMAN_REQUESTS_PER_PAYLOAD} Xaman sign requests: scan one of those, or choose another wallet`,
      secondsLeft,
    )
  }
  let created: CreatedXamanSignRequest
  try {
    created = await xaman.createSignRequest(body)
  } catch (error) {
    await xamanSignRequestsRepository.unreserve(deps.db, placeholder)
    if (error instanceof XamanUnavailableError) throw badGateway(`${error.message}; try again, or choose another wallet`)
    throw error
  }
  if (!(await xamanSignRequestsRepository.fill(deps.db, placeholder, created.uuid, deps.clock.now()))) {
    await xamanSignRequestsRepository.unreserve(deps.db, placeholder)
    deps.logger.warn({ uuid, xamanUuid: created.uuid }, 'Xaman answered a new sign request with the uuid of an earlier one')
    throw badGateway('Xaman answered with a sign request it had given before; try again, or choose another wallet')
  }
  return { qrUrl: created.qrUrl, deepLink: created.deepLink }
}
