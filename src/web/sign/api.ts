// The wallet-facing API (docs/signing.md) as the signing page calls it: the only server the page talks to.
import { PAYLOAD_STATUSES, PAYLOAD_TYPES, type PayloadStatus, type PayloadType } from '../../features/payloads/model.js'
import type { MultisignView } from '../../features/signing/multisign/view.js'
import type { AccountFill, Approval, Resolution, SignView, XamanStart } from '../../features/signing/schemas.js'
import type { WalletAdapterName } from '../../features/signing/view.js'
import { ApiError, callApi } from '../shared/api-client.js'

/** GET /api/v1/sign/{uuid}: what the page shows and what the wallets sign (the server's own view type). */
export type SignRequest = SignView

/** The body of POST /api/v1/sign/{uuid}/approve, as each kind of wallet sends it. */
export type ApproveBody =
  | Required<Pick<Approval, 'walletAdapter' | 'signedTransaction'>>
  | Required<Pick<Approval, 'walletAdapter' | 'publicKey' | 'signature'>>

export type { AccountFill, Resolution, XamanStart }

export interface FetchedSignRequest {
  request: SignRequest
  /** The server's clock when it answered (the Date header), to count down on the server's time. */
  serverDateMs: number | null
}

const base = (uuid: string) => `/api/v1/sign/${encodeURIComponent(uuid)}`
/** A transaction hash: 64 hex digits. */
const TX_HASH = /^[0-9A-F]{64}$/i

export async function fetchSignRequest(uuid: string): Promise<FetchedSignRequest> {
  const response = await callApi(base(uuid), { method: 'GET' })
  const dateHeader = response.headers.get('date')
  const serverDateMs = dateHeader === null ? Number.NaN : Date.parse(dateHeader)
  return { request: parseSignRequest(await response.json()), serverDateMs: Number.isNaN(serverDateMs) ? null : serverDateMs }
}

export async function approveSignRequest(uuid: string, body: ApproveBody): Promise<Resolution> {
  const response = await callApi(`${base(uuid)}/approve`, { method: 'POST', body: JSON.stringify(body) })
  return parseResolution(await response.json())
}

export async function rejectSignRequest(
  uuid: string,
  walletAdapter: WalletAdapterName | undefined,
  signerAccount?: string,
): Promise<Resolution> {
  const body = { ...(walletAdapter ? { walletAdapter } : {}), ...(signerAccount ? { signerAccount } : {}) }
  const response = await callApi(`${base(uuid)}/reject`, { method: 'POST', body: JSON.stringify(body) })
  return parseResolution(await response.json())
}

export async function startXaman(uuid: string): Promise<XamanStart> {
  const response = await callApi(`${base(uuid)}/xaman`, { method: 'POST', body: '{}' })
  const body = asObject(await response.json())
  if (typeof body.qrUrl !== 'string' || typeof body.deepLink !== 'string') throw malformed()
  return { qrUrl: body.qrUrl, deepLink: body.deepLink }
}

export async function fetchAccountFill(uuid: string, address: string): Promise<AccountFill> {
  const response = await callApi(`${base(uuid)}/account/${encodeURIComponent(address)}`, { method: 'GET' })
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
  const signed = typeof body.signed === 'object' && body.signed !== null ? (body.signed as Record<string, unknown>) : undefined
  const submission =
    typeof body.submission === 'object' && body.submission !== null ? (body.submission as Record<string, unknown>) : undefined
  return {
    uuid: body.uuid,
    type: body.type as PayloadType,
    status: body.status as PayloadStatus,
    expiresAt: body.expiresAt,
    network: body.network,
    project: { name: project.name, ...optionalStrings(project, ['website', 'logoUrl']) },
    ...(typeof transaction === 'object' && transaction !== null && !Array.isArray(transaction)
      ? { transaction: transaction as Record<string, unknown> }
      : {}),
    ...optionalStrings(body, [
      'message',
      'challenge',
      'customInstructions',
      'signerAddress',
      'txHash',
      'walletAdapter',
      'resolvedAt',
      'redirectUrl',
      'explorerUrl',
    ]),
    ...(signed === undefined ? {} : { signed: optionalStrings(signed, ['account', 'fee']) }),
    ...(submission === undefined
      ? {}
      : {
          submission: {
            engineResult: typeof submission.engineResult === 'string' ? submission.engineResult : null,
            txHash: typeof submission.txHash === 'string' && TX_HASH.test(submission.txHash) ? submission.txHash : null,
            validatedResult: typeof submission.validatedResult === 'string' ? submission.validatedResult : null,
            ledgerIndex: Number.isInteger(submission.ledgerIndex) ? (submission.ledgerIndex as number) : null,
          },
        }),
    ...(Array.isArray(body.signers) && body.signers.every((signer) => typeof signer === 'string')
      ? { signers: body.signers as string[] }
      : {}),
    ...(body.submissionInDoubt === true ? { submissionInDoubt: true as const } : {}),
    wallets: { xaman: wallets.xaman === true, developer: wallets.developer === true },
    ...(body.multisign === undefined ? {} : { multisign: parseMultisign(body.multisign) }),
  }
}

function parseMultisign(value: unknown): MultisignView {
  const body = asObject(value)
  if (!Number.isInteger(body.quorum) || !Number.isInteger(body.weight) || !Array.isArray(body.signers)) throw malformed()
  return {
    quorum: body.quorum as number,
    weight: body.weight as number,
    signers: body.signers.map((entry: unknown) => {
      const signer = asObject(entry)
      if (typeof signer.account !== 'string' || !Number.isInteger(signer.weight) || typeof signer.signed !== 'boolean') throw malformed()
      return {
        account: signer.account,
        weight: signer.weight as number,
        signed: signer.signed,
        signedAt: typeof signer.signedAt === 'string' ? signer.signedAt : null,
        rejectedAt: typeof signer.rejectedAt === 'string' ? signer.rejectedAt : null,
      }
    }),
  }
}

function parseResolution(value: unknown): Resolution {
  const body = asObject(value)
  // pending: a multisigned request recorded this signer's answer and waits for others.
  const pending = body.status === 'pending' && body.multisign !== undefined
  if (typeof body.uuid !== 'string' || (body.status !== 'signed' && body.status !== 'rejected' && !pending)) throw malformed()
  if (!pending && typeof body.resolvedAt !== 'string') throw malformed()
  return {
    uuid: body.uuid,
    status: body.status as Resolution['status'],
    ...optionalStrings(body, ['resolvedAt', 'signerAddress', 'txHash', 'walletAdapter', 'redirectUrl']),
    ...(body.multisign === undefined ? {} : { multisign: parseMultisign(body.multisign) }),
  }
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
