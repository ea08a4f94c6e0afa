// The wallet-facing API (DESIGN.md) as the signing page calls it: the only server the page talks to.
import type { FieldError } from '../../domain/errors.js'
import { PAYLOAD_STATUSES, PAYLOAD_TYPES, type PayloadStatus, type PayloadType } from '../../domain/payloads.js'
import type { Resolution, SignView } from '../../domain/sign-view.js'
import type { WalletId } from './wallets/types.js'

/** GET /api/v1/sign/{uuid}: what the page shows and what the wallets sign (the server's own view type). */
export type SignRequest = SignView

/** The body of POST /api/v1/sign/{uuid}/approve, per payload type. */
export type ApproveBody =
  | { walletAdapter: WalletId; signedTransaction: string }
  | { walletAdapter: WalletId; publicKey: string; signature: string }

/** The 200 answer of approve and reject. */
export type { Resolution }

/** What POST /api/v1/sign/{uuid}/xaman answers: the Xaman sign request the service created. */
export interface XamanStart {
  qrUrl: string
  deepLink: string
}

/** What GET /api/v1/sign/{uuid}/account/{address} answers: the fields a wallet without a ledger connection needs. */
export interface AccountFill {
  fee: string
  sequence: number
  lastLedgerSequence: number
  networkId?: number
}

/** An error answer of the API, or a failure to reach it (status 0). */
export class ApiError extends Error {
  override name = 'ApiError'
  constructor(
    readonly status: number,
    message: string,
    readonly details: FieldError[] = [],
  ) {
    super(message)
  }
}

export interface FetchedSignRequest {
  request: SignRequest
  /** The server's clock when it answered (the Date header), to count down on the server's time. */
  serverDateMs: number | null
}

const base = (uuid: string) => `/api/v1/sign/${encodeURIComponent(uuid)}`

export async function fetchSignRequest(uuid: string): Promise<FetchedSignRequest> {
  const response = await call(base(uuid), { method: 'GET' })
  const dateHeader = response.headers.get('date')
  const serverDateMs = dateHeader === null ? Number.NaN : Date.parse(dateHeader)
  return { request: parseSignRequest(await response.json()), serverDateMs: Number.isNaN(serverDateMs) ? null : serverDateMs }
}

export async function approveSignRequest(uuid: string, body: ApproveBody): Promise<Resolution> {
  const response = await call(`${base(uuid)}/approve`, { method: 'POST', body: JSON.stringify(body) })
  return parseResolution(await response.json())
}

export async function rejectSignRequest(uuid: string, walletAdapter: WalletId | undefined): Promise<Resolution> {
  const response = await call(`${base(uuid)}/reject`, { method: 'POST', body: JSON.stringify(walletAdapter ? { walletAdapter } : {}) })
  return parseResolution(await response.json())
}

export async function startXaman(uuid: string): Promise<XamanStart> {
  const response = await call(`${base(uuid)}/xaman`, { method: 'POST', body: '{}' })
  const body = asObject(await response.json())
  if (typeof body.qrUrl !== 'string' || typeof body.deepLink !== 'string') throw malformed()
  return { qrUrl: body.qrUrl, deepLink: body.deepLink }
}

export async function fetchAccountFill(uuid: string, address: string): Promise<AccountFill> {
  const response = await call(`${base(uuid)}/account/${encodeURIComponent(address)}`, { method: 'GET' })
  const body = asObject(await response.json())
  if (typeof body.fee !== 'string' || !Number.isInteger(body.sequence) || !Number.isInteger(body.lastLedgerSequence)) throw malformed()
  return {
    fee: body.fee,
    sequence: body.sequence as number,
    lastLedgerSequence: body.lastLedgerSequence as number,
    ...(Number.isInteger(body.networkId) ? { networkId: body.networkId as number } : {}),
  }
}

/** Checks the shape of a sign request from the server or its event stream; everything shown is then plain data. */
export function parseSignRequest(value: unknown): SignRequest {
  const body = asObject(value)
  const project = asObject(body.project)
  const wallets = typeof body.wallets === 'object' && body.wallets !== null ? (body.wallets as Record<string, unknown>) : {}
  if (
    typeof body.uuid !== 'string' ||
    !PAYLOAD_TYPES.includes(body.type as PayloadType) ||
    !PAYLOAD_STATUSES.includes(body.status as PayloadStatus) ||
    typeof body.expiresAt !== 'string' ||
    Number.isNaN(Date.parse(body.expiresAt)) ||
    typeof body.network !== 'string' ||
    typeof project.name !== 'string'
  ) {
    throw malformed()
  }
  const transaction = body.transaction
  return {
    uuid: body.uuid,
    type: body.type as PayloadType,
    status: body.status as PayloadStatus,
    expiresAt: body.expiresAt,
    network: body.network,
    project: { name: project.name },
    ...(typeof transaction === 'object' && transaction !== null && !Array.isArray(transaction)
      ? { transaction: transaction as Record<string, unknown> }
      : {}),
    ...optionalStrings(body, ['message', 'challenge', 'customInstructions', 'signerAddress', 'txHash', 'redirectUrl']),
    wallets: { xaman: wallets.xaman === true, developer: wallets.developer === true },
  }
}

function parseResolution(value: unknown): Resolution {
  const body = asObject(value)
  if (typeof body.uuid !== 'string' || (body.status !== 'signed' && body.status !== 'rejected') || typeof body.resolvedAt !== 'string') {
    throw malformed()
  }
  return {
    uuid: body.uuid,
    status: body.status,
    resolvedAt: body.resolvedAt,
    ...optionalStrings(body, ['signerAddress', 'txHash', 'walletAdapter', 'redirectUrl']),
  }
}

async function call(url: string, init: RequestInit): Promise<Response> {
  let response: Response
  try {
    response = await fetch(url, {
      ...init,
      cache: 'no-store',
      credentials: 'same-origin',
      headers:
        init.body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
    })
  } catch (error) {
    throw new ApiError(0, `the service could not be reached (${(error as Error).message})`)
  }
  if (response.ok) return response
  throw await errorFrom(response)
}

async function errorFrom(response: Response): Promise<ApiError> {
  let body: Record<string, unknown> = {}
  try {
    body = asObject(await response.json())
  } catch {
    // A proxy's HTML error page: the status alone has to speak.
  }
  const message = typeof body.error === 'string' ? body.error : `the service answered with status ${response.status}`
  const details = Array.isArray(body.details)
    ? body.details
        .filter((detail): detail is FieldError => typeof detail?.field === 'string' && typeof detail?.message === 'string')
        .map(({ field, message }) => ({ field, message }))
    : []
  return new ApiError(response.status, message, details)
}

function asObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw malformed()
  return value as Record<string, unknown>
}

function optionalStrings<K extends string>(body: Record<string, unknown>, keys: K[]): Partial<Record<K, string>> {
  const result: Partial<Record<K, string>> = {}
  for (const key of keys) {
    const value = body[key]
    if (typeof value === 'string') result[key] = value
  }
  return result
}

function malformed(): ApiError {
  return new ApiError(0, 'the service sent an answer this page does not understand')
}
